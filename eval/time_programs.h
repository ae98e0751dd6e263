// Timing several programs of one problem, or one program several times, in one device session:
// the benchmark behind `kforge eval --interleave` and `--repeat N` (bench/eval/). Every
// program is lowered and compiled (cache hits after the gates ran) and timed at the full shape
// with a tier's timing protocol (timing_options_for: warm-up, iterations, cold L2 by a flush of
// 2x L2 before every iteration, CUDA events). Interleaved, each repetition times the programs in
// chunks A B A B ... (the first chunk of each with the full warm-up, later ones with 2), so
// clock and thermal drift hit all of them alike; every sample carries the NVML clocks,
// temperature and throttle reasons. Only timing: correctness is the gates' business.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "device/device.h"
#include "device/timing.h"
#include "problem/problem.h"
#include "store/enums.h"

namespace kforge::eval {

class ReferenceCache;

struct TimeRequest {
    Problem problem;                         // at its full shape
    std::vector<std::string> program_texts;
    int repetitions = 1;
    bool interleave = false;
    int chunk_iterations = 10;
    EvalTier tier = EvalTier::kFull;         // whose timing protocol
    uint64_t seed = 1;
    double run_timeout_s = 10.0;
    std::string compile_cache_dir;
    std::string work_dir;
};

struct TimedRepetition {
    std::vector<TimingSample> samples;
    TimingStats stats;
};

struct TimedProgram {
    std::string program_hash;
    EvalStatus status = EvalStatus::kPassed;  // a program that did not compile or load is
    std::string message;                      // not timed; its status says why
    std::vector<TimedRepetition> repetitions;
};

struct TimeReport {
    EvalStatus status = EvalStatus::kPassed;  // of the session (a device failure ends it)
    std::string message;
    bool context_lost = false;
    bool simulated = false;
    DeviceInfo device;
    TimingOptions protocol;
    std::string inputs;                       // how the timing inputs were drawn (evidence)
    std::string clock_note;
    std::vector<TimedProgram> programs;       // in request order
    double wall_ms = 0;
};

TimeReport time_programs(Device& device, const TimeRequest& request, ReferenceCache* cache);

nlohmann::ordered_json to_json(const TimeRequest& request);
Expected<TimeRequest> time_request_from_json(const nlohmann::json& j);
nlohmann::ordered_json to_json(const TimeReport& report);
Expected<TimeReport> time_report_from_json(const nlohmann::json& j);

}  // namespace kforge::eval
