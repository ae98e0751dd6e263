#include "eval/session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace kforge::eval {

RepeatSummary repeat_summary(const TimedProgram& program) {
    RepeatSummary s;
    for (const TimedRepetition& rep : program.repetitions)
        if (rep.stats.count > 0) s.medians_ns.push_back(rep.stats.median_ns);
    if (s.medians_ns.size() >= 2) {
        auto [lo, hi] = std::minmax_element(s.medians_ns.begin(), s.medians_ns.end());
        s.spread = *lo > 0 ? (*hi - *lo) / *lo : 0;
    }
    return s;
}

std::string clock_summary(const std::vector<TimingSample>& samples) {
    if (samples.empty()) return "no samples";
    int sm_lo = 1 << 30, sm_hi = 0, mem_hi = 0, t_lo = 1 << 30, t_hi = 0, throttled = 0;
    uint64_t reasons = 0;
    std::vector<int> sm;
    for (const TimingSample& s : samples) {
        if (s.sm_clock_mhz <= 0) continue;
        sm.push_back(s.sm_clock_mhz);
        sm_lo = std::min(sm_lo, s.sm_clock_mhz);
        sm_hi = std::max(sm_hi, s.sm_clock_mhz);
        mem_hi = std::max(mem_hi, s.mem_clock_mhz);
        t_lo = std::min(t_lo, s.temperature_c);
        t_hi = std::max(t_hi, s.temperature_c);
        // NVML: bit 0 is "GPU idle", not a throttle
        if (s.throttle_reasons & ~uint64_t{1}) ++throttled;
        reasons |= s.throttle_reasons & ~uint64_t{1};
    }
    if (sm.empty()) return "clocks not recorded";
    std::sort(sm.begin(), sm.end());
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "SM %d MHz (%d..%d), mem %d MHz, %d..%d C, throttled in %d/%zu samples "
                  "(reasons 0x%llx)",
                  sm[sm.size() / 2], sm_lo, sm_hi, mem_hi, t_lo, t_hi, throttled, samples.size(),
                  static_cast<unsigned long long>(reasons));
    return buf;
}

SessionResult run_session(Evaluator& evaluator, const Problem& problem,
                          const std::vector<SessionCandidate>& candidates,
                          const SessionOptions& options) {
    auto t0 = std::chrono::steady_clock::now();
    SessionResult result;
    TimeRequest timing;
    timing.problem = problem;
    timing.seed = options.seed;
    timing.compile_cache_dir = options.compile_cache_dir;
    timing.tier = EvalTier::kFull;
    timing.interleave = options.interleave;
    timing.repetitions = std::max(1, options.repeat);
    for (const SessionCandidate& c : candidates) {
        EvalRequest req;
        req.problem = problem;
        req.program_text = c.program_text;
        req.program_file = c.program_file;
        req.tier = options.tier;
        req.seed = options.seed;
        req.sim_fault = options.sim_fault;
        req.compile_cache_dir = options.compile_cache_dir;
        req.store = options.store;
        EvalReport r = evaluate(evaluator, req);
        if (r.status == EvalStatus::kPassed) {
            timing.program_texts.push_back(c.program_text);
            result.timed_labels.push_back(c.label);
        }
        result.labels.push_back(c.label);
        result.reports.push_back(std::move(r));
    }
    if ((options.interleave || options.repeat > 0) && !timing.program_texts.empty())
        result.timing = evaluator.time(timing);
    result.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return result;
}

nlohmann::ordered_json to_json(const SessionResult& r) {
    nlohmann::ordered_json j;
    j["wall_ms"] = r.wall_ms;
    j["candidates"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < r.reports.size(); ++i)
        j["candidates"].push_back({{"label", r.labels[i]}, {"report", to_json(r.reports[i])}});
    if (r.timing) {
        nlohmann::ordered_json t = to_json(*r.timing);
        for (size_t i = 0; i < t["programs"].size() && i < r.timed_labels.size(); ++i) {
            t["programs"][i]["label"] = r.timed_labels[i];
            RepeatSummary s = repeat_summary(r.timing->programs[i]);
            t["programs"][i]["repetition_medians_ns"] = s.medians_ns;
            t["programs"][i]["spread"] = s.spread;
        }
        j["timing"] = t;
    }
    return j;
}

}  // namespace kforge::eval
