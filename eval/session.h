// Several evaluations in one evaluator session (`kforge eval` with several programs): each
// candidate through the gates, then, when asked, one timing task over the candidates that
// passed: interleaved (A B A B chunks of the full-tier protocol) and/or repeated N times, the
// "N full-tier timings in one session" stability benchmark (bench/eval/stability.sh).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/evaluator.h"

namespace kforge {
class Store;
}

namespace kforge::eval {

struct SessionCandidate {
    std::string label;         // e.g. the program's file name
    std::string program_text;
    std::string program_file;
};

struct SessionOptions {
    EvalTier tier = EvalTier::kQuick;
    bool interleave = false;  // time the passed candidates interleaved (full-tier protocol)
    int repeat = 0;           // > 0: that many full-tier timings of each passed candidate
    uint64_t seed = 1;
    SimFault sim_fault = SimFault::kNone;
    std::string compile_cache_dir;
    Store* store = nullptr;
};

struct SessionResult {
    std::vector<std::string> labels;
    std::vector<EvalReport> reports;          // one per candidate, in order
    std::optional<TimeReport> timing;         // interleave / repeat
    std::vector<std::string> timed_labels;    // label of each timing.programs entry
    double wall_ms = 0;
};

// Median of every repetition of one timed program and their spread (max - min) / min.
struct RepeatSummary {
    std::vector<double> medians_ns;
    double spread = 0;
};
RepeatSummary repeat_summary(const TimedProgram& program);

// One-line summary of a sample set's clocks: "SM 1980 MHz (1755..1980), mem 3201 MHz, 63..71 C,
// throttled in 3/100 samples (reasons 0x4)" or what NVML could not say.
std::string clock_summary(const std::vector<TimingSample>& samples);

SessionResult run_session(Evaluator& evaluator, const Problem& problem,
                          const std::vector<SessionCandidate>& candidates,
                          const SessionOptions& options);

nlohmann::ordered_json to_json(const SessionResult& result);

}  // namespace kforge::eval
