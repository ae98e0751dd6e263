// Parser of Nsight Compute's `--csv --page raw` output: one header row of column names, one
// row of units, then one row per profiled kernel launch, every field quoted. Lines before the
// header (==PROF== lines, the target's own output) and lines that are not records are skipped.
// Metric values become doubles in base units: bytes, nanoseconds, percent, counts; a missing
// or "n/a" value is simply absent. Pure; tested on fixtures.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace kforge::profile {

struct KernelProfile {
    int id = 0;                          // ncu's launch ID
    std::string name;                    // "Kernel Name" (demangled as ncu prints it)
    std::array<int64_t, 3> grid{1, 1, 1};
    std::array<int64_t, 3> block{1, 1, 1};
    std::string device;
    std::map<std::string, double> metrics;  // name -> value in base units

    std::optional<double> metric(std::string_view name) const;
    int64_t threads() const;  // grid x block threads of the launch
};

// A value in `unit` converted to kforge's base unit for that dimension (byte, nsecond, ...).
// Unknown units are returned unchanged.
double normalise_unit(double value, std::string_view unit);

// Every record of the raw page in `text`. Errors: no header row, no units row, a record whose
// field count differs from the header's.
Expected<std::vector<KernelProfile>> parse_ncu_csv(std::string_view text);

// One record per kernel name for diagnosis: among a name's launches, those with the most
// threads (the full shape, not the small correctness shapes); their metrics are the median
// over those launches. Order of first appearance.
std::vector<KernelProfile> representative_launches(const std::vector<KernelProfile>& all);

}  // namespace kforge::profile
