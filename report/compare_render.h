// Renderings of a run comparison (report/compare.h): two step charts (best speedup over the
// start against search wall seconds, and against GPU-seconds; one curve per run, a legend by
// run and proposer mode), Markdown (a table of the runs and of every curve point, the charts
// linked), a self-contained HTML page with the charts inline, and JSON.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "report/compare.h"
#include "report/svg.h"
#include "report/write.h"

namespace kforge::report {

inline constexpr int kCompareJsonVersion = 1;

enum class CompareAxis { kSearchWall, kGpuSeconds };
std::string_view to_string(CompareAxis axis);  // "wall", "gpu": compare-wall.svg, compare-gpu.svg

// The chart of `c` against `axis`: one series per run, labelled by run.label.
StepChart comparison_chart(const Comparison& c, CompareAxis axis);

std::string render_comparison_markdown(const Comparison& c);
std::string render_comparison_html(const Comparison& c);
// Keys: kforge_compare (layout version), problem, simulated, runs (each with its steps), notes.
nlohmann::ordered_json comparison_to_json(const Comparison& c);

// Writes OUT/compare-wall.svg and OUT/compare-gpu.svg (always: the Markdown links them) and
// OUT/compare.FMT for each format, each atomically; returns the paths written.
Expected<std::vector<std::string>> write_comparison(const Comparison& c, const std::string& out_dir,
                                                    const std::vector<ReportFormat>& formats);

}  // namespace kforge::report
