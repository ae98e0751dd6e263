// The label convention of baseline measurements, which the report stage reads.
//
// A baseline time is a MeasurementRecord whose label is "baseline:<name>", stored in an
// evaluation of the problem in the same run, on the run's device, at the same shapes_key as the
// candidate time it is compared with. Names kforge knows (PyTorch, timed by the python/ side):
//   baseline:eager                 torch eager mode
//   baseline:compile_default       torch.compile(mode="default")
//   baseline:compile_max_autotune  torch.compile(mode="max-autotune")
// Any other "baseline:<name>" (letters, digits, '_', '-', '.') is reported under its name.
// The bare label "baseline" is what `kforge eval --baseline PROGRAM` records for an interleaved
// kforge baseline program; it is reported as the baseline named "program".
// Baseline samples may ride in a candidate's evaluation (interleaved timing) or in an
// evaluation of a carrier candidate whose proposer starts with "baseline" (e.g.
// "baseline:pytorch"); carrier candidates are never ranked as candidates.
// Speedup over a baseline = baseline median / candidate median (> 1: the candidate is faster).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::report {

inline constexpr std::string_view kBaselineLabelPrefix = "baseline:";
inline constexpr std::string_view kBaselineEager = "eager";
inline constexpr std::string_view kBaselineCompileDefault = "compile_default";
inline constexpr std::string_view kBaselineCompileMaxAutotune = "compile_max_autotune";
inline constexpr std::string_view kBaselineProgram = "program";

// The baseline name of a measurement label: "baseline:eager" -> "eager", "baseline" ->
// "program"; nullopt for "candidate", for any other label and for a malformed name.
std::optional<std::string> baseline_name(std::string_view label);

// "eager" -> "baseline:eager" (the label to store).
std::string baseline_label(std::string_view name);

// Whether a candidate with this proposer only carries baseline measurements.
bool is_baseline_carrier(std::string_view proposer);

// Orders baseline names for reports: eager, compile_default, compile_max_autotune, then the
// others alphabetically ("program" among them). The first present one is the reference
// baseline of progress curves.
void sort_baseline_names(std::vector<std::string>& names);

}  // namespace kforge::report
