#include "eval/time_programs.h"

#include <chrono>
#include <deque>
#include <memory>

#include "device/device_json.h"
#include "eval/evaluate_internal.h"
#include "eval/payload_json.h"
#include "problem/spec.h"

namespace kforge::eval {
namespace {

struct Entry {
    EvalRequest request;
    std::unique_ptr<detail::Pipeline> pipeline;  // owns the program the preparation points to
    std::unique_ptr<detail::Prepared> prepared;
};

}  // namespace

TimeReport time_programs(Device& device, const TimeRequest& request, ReferenceCache* cache) {
    auto t0 = std::chrono::steady_clock::now();
    TimeReport report;
    report.device = device.info();
    report.simulated = report.device.simulated;
    report.protocol = timing_options_for(request.tier);
    report.inputs = describe_distributions(request.problem);
    ReferenceCache own;
    if (!cache) cache = &own;
    std::deque<Entry> entries;
    for (const std::string& text : request.program_texts) {
        Entry& e = entries.emplace_back();
        e.request.problem = request.problem;
        e.request.program_text = text;
        e.request.tier = EvalTier::kCompile;
        e.request.seed = request.seed;
        e.request.run_timeout_s = request.run_timeout_s;
        e.request.compile_cache_dir = request.compile_cache_dir;
        e.request.work_dir = request.work_dir;
        e.pipeline = std::make_unique<detail::Pipeline>(device, e.request, cache);
        e.prepared = e.pipeline->prepare_full();
        TimedProgram& p = report.programs.emplace_back();
        p.program_hash = e.pipeline->report().program_hash;
        p.status = e.pipeline->report().status;
        p.message = e.pipeline->report().message;
        p.repetitions.resize(std::max(1, request.repetitions));
    }
    std::shared_ptr<const CachedCase> inputs;  // the timing gate's (the model needs none)
    if (!report.simulated) inputs = detail::timing_case(*cache, request.problem, request.seed);
    // Loads program i, runs it once on the timing inputs and times n iterations after `warmup`.
    auto take = [&](size_t i, int rep, int n, int warmup) -> bool {
        TimedProgram& p = report.programs[i];
        Status loaded = device.load(entries[i].prepared->candidate);
        if (!loaded) {
            p.status = EvalStatus::kLaunchFailed;
            p.message = "load: " + loaded.error().to_string();
            return true;  // this program only
        }
        if (!report.simulated) {
            RunResult r = device.run(*inputs->inputs, RunOptions{inputs->id, false});
            if (r.status != EvalStatus::kPassed) {
                p.status = r.status;
                p.message = r.message;
                report.context_lost = r.context_lost;
                return !r.context_lost;
            }
        }
        TimingOptions o = report.protocol;
        o.iterations = n;
        o.warmup_iterations = warmup;
        TimingResult t = device.time(o);
        if (!t.clock_note.empty()) report.clock_note = t.clock_note;
        if (t.status != EvalStatus::kPassed) {
            p.status = t.status;
            p.message = t.message;
            report.context_lost = t.context_lost;
            return !t.context_lost;
        }
        auto& samples = p.repetitions[rep].samples;
        samples.insert(samples.end(), t.samples.begin(), t.samples.end());
        return true;
    };
    auto timed = [&](size_t i) {
        return entries[i].prepared && report.programs[i].status == EvalStatus::kPassed;
    };
    int iterations = report.protocol.iterations;
    int chunk = std::max(1, request.chunk_iterations);
    bool alive = true;
    for (int rep = 0; alive && rep < std::max(1, request.repetitions); ++rep) {
        if (!request.interleave) {
            for (size_t i = 0; alive && i < entries.size(); ++i)
                if (timed(i)) alive = take(i, rep, iterations, report.protocol.warmup_iterations);
            continue;
        }
        for (int done = 0; alive && done < iterations; done += chunk) {
            int n = std::min(chunk, iterations - done);
            int warmup = done == 0 ? report.protocol.warmup_iterations : 2;
            for (size_t i = 0; alive && i < entries.size(); ++i)
                if (timed(i)) alive = take(i, rep, n, warmup);
        }
    }
    for (size_t i = 0; i < report.programs.size(); ++i) {
        TimedProgram& p = report.programs[i];
        for (size_t rep = 0; rep < p.repetitions.size(); ++rep) {
            std::vector<double> t;
            for (const TimingSample& s : p.repetitions[rep].samples) t.push_back(s.time_ns);
            p.repetitions[rep].stats = timing_stats(t, 1000, request.seed + rep);
        }
        if (report.context_lost && p.status != EvalStatus::kPassed) {
            report.status = p.status;
            report.message = p.message;
        }
    }
    report.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return report;
}

nlohmann::ordered_json to_json(const TimeRequest& r) {
    return {{"problem", problem_to_json(r.problem)},
            {"programs", r.program_texts},
            {"repetitions", r.repetitions},
            {"interleave", r.interleave},
            {"chunk_iterations", r.chunk_iterations},
            {"tier", std::string(to_string(r.tier))},
            {"seed", r.seed},
            {"run_timeout_s", r.run_timeout_s},
            {"compile_cache_dir", r.compile_cache_dir},
            {"work_dir", r.work_dir}};
}

Expected<TimeRequest> time_request_from_json(const nlohmann::json& j) {
    if (!j.is_object()) return make_error("payload", "not an object");
    TimeRequest r;
    auto problem = problem_from_payload(j);
    if (!problem) return problem.error();
    r.problem = std::move(*problem);
    auto programs = j.find("programs");
    if (programs == j.end() || !programs->is_array() || programs->empty())
        return make_error("payload.programs", "missing or not a non-empty array");
    for (const auto& p : *programs) {
        if (!p.is_string()) return make_error("payload.programs", "not a string");
        r.program_texts.push_back(p.get<std::string>());
    }
    r.repetitions = j.value("repetitions", 1);
    if (r.repetitions < 1 || r.repetitions > 1000)
        return make_error("payload.repetitions", "not in 1..1000");
    r.interleave = j.value("interleave", false);
    r.chunk_iterations = j.value("chunk_iterations", 10);
    if (r.chunk_iterations < 1) return make_error("payload.chunk_iterations", "not positive");
    auto tier = eval_tier_from_string(j.value("tier", "full"));
    if (!tier) return make_error("payload.tier", "unknown tier");
    r.tier = *tier;
    r.seed = j.value("seed", uint64_t{1});
    r.run_timeout_s = j.value("run_timeout_s", 10.0);
    r.compile_cache_dir = j.value("compile_cache_dir", "");
    r.work_dir = j.value("work_dir", "");
    return r;
}

nlohmann::ordered_json to_json(const TimeReport& r) {
    nlohmann::ordered_json j;
    j["status"] = std::string(to_string(r.status));
    j["message"] = r.message;
    j["simulated"] = r.simulated;
    j["device"] = to_json(r.device);
    j["protocol"] = {{"warmup", r.protocol.warmup_iterations},
                     {"iterations", r.protocol.iterations},
                     {"flush_l2", r.protocol.flush_l2},
                     {"max_seconds", r.protocol.max_seconds},
                     {"inputs", r.inputs}};
    if (r.context_lost) j["context_lost"] = true;
    if (!r.clock_note.empty()) j["clock_note"] = r.clock_note;
    j["wall_ms"] = r.wall_ms;
    j["programs"] = nlohmann::ordered_json::array();
    for (const TimedProgram& p : r.programs) {
        nlohmann::ordered_json reps = nlohmann::ordered_json::array();
        for (const TimedRepetition& rep : p.repetitions) {
            nlohmann::ordered_json samples = nlohmann::ordered_json::array();
            for (const TimingSample& s : rep.samples) samples.push_back(to_json(s));
            reps.push_back({{"stats", to_json(rep.stats)}, {"samples", samples}});
        }
        j["programs"].push_back({{"program_hash", p.program_hash},
                                 {"status", std::string(to_string(p.status))},
                                 {"message", p.message},
                                 {"repetitions", reps}});
    }
    return j;
}

namespace {

Expected<TimeReport> read_time_report(const nlohmann::json& j) {
    if (!j.is_object()) return make_error("time report", "not an object");
    TimeReport r;
    auto status = eval_status_from_string(j.value("status", ""));
    if (!status) return make_error("time report.status", "missing or unknown");
    r.status = *status;
    r.message = j.value("message", "");
    r.simulated = j.value("simulated", false);
    if (auto d = j.find("device"); d != j.end() && d->is_object())
        if (auto info = device_info_from_json(*d)) r.device = *info;
    if (auto p = j.find("protocol"); p != j.end() && p->is_object()) {
        r.protocol.warmup_iterations = p->value("warmup", 0);
        r.protocol.iterations = p->value("iterations", 0);
        r.protocol.flush_l2 = p->value("flush_l2", true);
        r.protocol.max_seconds = p->value("max_seconds", 0.0);
        r.inputs = p->value("inputs", "");
    }
    r.context_lost = j.value("context_lost", false);
    r.clock_note = j.value("clock_note", "");
    r.wall_ms = j.value("wall_ms", 0.0);
    auto programs = j.find("programs");
    if (programs == j.end() || !programs->is_array())
        return make_error("time report.programs", "missing or not an array");
    for (const auto& pj : *programs) {
        TimedProgram p;
        p.program_hash = pj.value("program_hash", "");
        p.status = eval_status_from_string(pj.value("status", "")).value_or(EvalStatus::kCrashed);
        p.message = pj.value("message", "");
        for (const auto& rj : pj.value("repetitions", nlohmann::json::array())) {
            TimedRepetition rep;
            for (const auto& s : rj.value("samples", nlohmann::json::array())) {
                TimingSample t;
                t.time_ns = s.value("time_ns", 0.0);
                t.sm_clock_mhz = s.value("sm_clock_mhz", 0);
                t.mem_clock_mhz = s.value("mem_clock_mhz", 0);
                t.temperature_c = s.value("temperature_c", 0);
                t.throttle_reasons = s.value("throttle_reasons", uint64_t{0});
                rep.samples.push_back(t);
            }
            std::vector<double> t;
            for (const TimingSample& s : rep.samples) t.push_back(s.time_ns);
            rep.stats = timing_stats(t);
            if (auto st = rj.find("stats"); st != rj.end() && st->is_object())
                rep.stats.median_ns = st->value("median_ns", rep.stats.median_ns);
            p.repetitions.push_back(std::move(rep));
        }
        r.programs.push_back(std::move(p));
    }
    return r;
}

}  // namespace

Expected<TimeReport> time_report_from_json(const nlohmann::json& j) {
    try {
        return read_time_report(j);
    } catch (const nlohmann::json::exception& e) {  // a field of the wrong type
        return make_error("time report", e.what());
    }
}

}  // namespace kforge::eval
