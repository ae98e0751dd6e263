// Timing statistics for the timing protocol: common/stats.h's (median, quartiles and IQR, a 95%
// bootstrap confidence interval of the median), under the names the evaluation stages use, and
// the wall-time helper of gates and evaluations.
#pragma once

#include <chrono>

#include "common/stats.h"

namespace kforge::eval {

// Milliseconds of wall time since t0 (gate, evaluation and reference timings).
inline double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
        .count();
}

using kforge::quantile;
using kforge::timing_stats;
using kforge::TimingStats;

}  // namespace kforge::eval
