// Full-shape sanity, timing (optionally interleaved with a baseline) and the SOL gaming check
// of the pipeline (eval/evaluate.h).
#include <cmath>

#include "dsl/kernel_ops.h"
#include "eval/evaluate_internal.h"
#include "eval/gates.h"
#include "eval/launch_mode.h"
#include "problem/interpret.h"
#include "problem/work.h"
#include "sol/bounds.h"
#include "sol/device.h"
#include "sol/sol_share.h"

namespace kforge::eval::detail {
namespace {

std::string us(double ns) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
    return buf;
}

nlohmann::ordered_json stats_json(const TimingStats& s) { return to_json(s); }

}  // namespace

bool Pipeline::ready_for_timing(Prepared& p, const std::string& gate) {
    if (!load(p, gate)) return false;
    if (report_.simulated) return true;  // the model needs no inputs
    const std::shared_ptr<const CachedCase> c = timing_case(*cache_, p.problem, request_.seed);
    RunResult r = device_.run(*c->inputs, RunOptions{c->id, false});
    if (r.status == EvalStatus::kPassed) return true;
    report_.context_lost = r.context_lost;
    return fail(gate, r.status, r.message);
}

bool Pipeline::gate_full_shape() {
    if (full_ready_) return true;
    nlohmann::ordered_json evidence{{"dims", report_.shapes_key}};
    if (report_.simulated) {
        if (!load(*full_, "full_shape")) return false;
        full_ready_ = true;
        pass("full_shape", "not run: the simulated device cannot interpret the full shape; "
                           "correctness was checked at " + shapes_key(*check_shape_),
             evidence, true);
        return true;
    }
    if (!load(*full_, "full_shape")) return false;
    // uniform on [0, 1): in every op's domain (log, sqrt), so a NaN here is the program's (a
    // scaled param is drawn on [-1, 1) times its bound: a module's weights, not an op's operand)
    uint64_t seed = request_.seed + 4242;
    const Problem& shape = full_->problem;
    const std::shared_ptr<const CachedCase> c = cache_->get(
        shape, Distribution::kUniform01, seed,
        [&] { return make_inputs(shape, Distribution::kUniform01, seed); }, nullptr);
    RunResult r = device_.run(*c->inputs, RunOptions{c->id, true});
    if (r.status != EvalStatus::kPassed) {
        report_.context_lost = r.context_lost;
        return fail("full_shape", r.status, r.message, evidence);
    }
    evidence["note"] = "no reference at the full shape: checked for NaN/Inf/unwritten and "
                       "all-zero outputs only";
    for (const auto& [name, values] : r.outputs) {
        int64_t bad = 0;
        bool all_zero = true;
        for (double v : values) {
            if (!std::isfinite(v)) ++bad;
            if (v != 0) all_zero = false;
        }
        if (bad > 0)
            return fail("full_shape", EvalStatus::kIncorrect,
                        name + ": " + std::to_string(bad) + " NaN/Inf or unwritten elements",
                        evidence);
        if (all_zero && !values.empty())
            return fail("full_shape", EvalStatus::kIncorrect, name + ": all zeros", evidence);
    }
    full_ready_ = true;
    pass("full_shape", "ran at " + report_.shapes_key + " with finite outputs", evidence);
    return true;
}

bool Pipeline::gate_timing() {
    // on the timing inputs, whichever inputs the gates before ran (the full tier's last
    // correctness round, the quick tier's full-shape check: other draws)
    if (!ready_for_timing(*full_, "timing")) return false;
    full_ready_ = true;
    TimingOptions options = timing_options_for(report_.tier);
    if (request_.timing_runs > 0) {
        options.warmup_iterations = 1;
        options.iterations = request_.timing_runs;
    } else {
        options.per_kernel = true;  // not under the profiler, which replays every launch
    }
    nlohmann::ordered_json evidence{{"warmup", options.warmup_iterations},
                                    {"iterations", options.iterations},
                                    {"flush_l2", options.flush_l2},
                                    {"dims", report_.shapes_key},
                                    {"inputs", describe_distributions(request_.problem)}};
    std::unique_ptr<Prepared> base;
    if (baseline_) {
        base = prepare(request_.problem, *baseline_, "timing");
        if (!base) return false;
    }
    auto take = [&](Prepared* p, int iterations, int warmup,
                    std::vector<TimingSample>& into) -> bool {
        if (p && !ready_for_timing(*p, "timing")) return false;
        TimingOptions o = options;
        o.iterations = iterations;
        o.warmup_iterations = warmup;
        // the candidate's kernels once (a pass of their own on a GPU), never the baseline's
        o.per_kernel = options.per_kernel && &into == &report_.samples &&
                       report_.kernel_times_ns.empty();
        TimingResult t = device_.time(o);
        if (!t.clock_note.empty()) evidence["clock_note"] = t.clock_note;
        if (t.status != EvalStatus::kPassed) {
            report_.context_lost = t.context_lost;
            return fail("timing", t.status, t.message, evidence);
        }
        into.insert(into.end(), t.samples.begin(), t.samples.end());
        if (o.per_kernel) report_.kernel_times_ns = std::move(t.kernel_times_ns);
        return true;
    };
    if (!base) {
        if (!take(nullptr, options.iterations, options.warmup_iterations, report_.samples))
            return false;
    } else {
        constexpr int kChunk = 10;
        evidence["interleaved_chunk"] = kChunk;
        for (int done = 0; done < options.iterations; done += kChunk) {
            int n = std::min(kChunk, options.iterations - done);
            int warm = done == 0 ? options.warmup_iterations : 2;
            if (!take(done == 0 ? nullptr : full_.get(), n, warm, report_.samples)) return false;
            if (!take(base.get(), n, warm, report_.baseline_samples)) return false;
        }
    }
    if (!choose_launch_mode(options, evidence, base != nullptr)) return false;
    if (full_ && full_->candidate.program)
        for (dsl::KernelOps& k : dsl::kernel_ops(*full_->candidate.program, full_->problem))
            report_.kernels.push_back(KernelSummary{k.kernel, std::string(dsl::to_string(k.kind)),
                                                    std::move(k.ops), std::move(k.stores)});
    std::vector<double> times;
    for (const TimingSample& s : report_.samples) times.push_back(s.time_ns);
    report_.stats = timing_stats(times, 1000, request_.seed);
    evidence["candidate"] = stats_json(report_.stats);
    if (base) {
        times.clear();
        for (const TimingSample& s : report_.baseline_samples) times.push_back(s.time_ns);
        report_.baseline_stats = timing_stats(times, 1000, request_.seed + 1);
        evidence["baseline"] = stats_json(report_.baseline_stats);
    }
    pass("timing", "median " + us(report_.stats.median_ns) + " (IQR " +
                       us(report_.stats.iqr_ns) + ")" + (report_.simulated ? " (simulated)" : ""),
         evidence);
    return true;
}

// The memory plan's totals in the timing gate's evidence (reports show them), and stream or
// graph, by measurement (eval/launch_mode.h): at the full tier on a real device, for a program
// of several launches. The program runs as chosen, so the graph's samples become its
// time - not when interleaved with a baseline, whose comparison holds for the stream samples it
// alternated with.
bool Pipeline::choose_launch_mode(const TimingOptions& options, nlohmann::ordered_json& evidence,
                                  bool interleaved) {
    if (!full_) return true;
    const codegen::MemoryTotals& memory = full_->lowered.plan.memory;  // codegen/memory_plan.h
    evidence["memory"] = {{"peak_bytes", memory.peak_bytes}, {"io_bytes", memory.io_bytes},
                          {"arena_bytes", memory.arena_bytes},
                          {"unshared_bytes", memory.unshared_bytes}};
    if (report_.simulated || report_.tier != EvalTier::kFull ||
        full_->lowered.plan.kernels.size() < 2)
        return true;
    if (interleaved && !ready_for_timing(*full_, "timing")) return false;
    LaunchModeTiming lm = time_launch_modes(device_, options, report_.samples);
    evidence["launch"] = to_json(lm);
    evidence["launch_mode"] = std::string(codegen::to_string(lm.mode));
    if (lm.context_lost) {
        report_.context_lost = true;
        return fail("timing", EvalStatus::kLaunchFailed, lm.note, evidence);
    }
    if (lm.mode == codegen::LaunchMode::kGraph && !interleaved) report_.samples = lm.graph_samples;
    return true;
}

bool Pipeline::gate_sol_gaming() {
    auto spec = find_device(device_key_);
    if (!spec) {
        pass("sol_gaming", "skipped: the device has no table entry for SOL bounds", {}, true);
        return true;
    }
    auto bounds = compute_bounds(request_.problem, effective_ceilings(*spec, std::nullopt));
    if (!bounds) {
        pass("sol_gaming", "skipped: " + bounds.error().to_string(), {}, true);
        return true;
    }
    double median_s = report_.stats.median_ns * 1e-9;
    const SolShare share = sol_share(median_s, bounds->time_fused_s);
    const SolVerdict verdict = judge_time(median_s, *bounds);
    nlohmann::ordered_json evidence{{"median_s", median_s},
                                    {"time_sol_s", bounds->time_fused_s},
                                    {"gaming_threshold_s", bounds->gaming_threshold_s},
                                    {"headroom", headroom(median_s, *bounds)},
                                    {"arch", bounds->arch},
                                    {"percent_sol", sol_percent(share)},
                                    {"verdict", std::string(to_string(verdict))}};
    if (verdict == SolVerdict::kPlausible) {
        pass("sol_gaming", "time is physically plausible", evidence);
        return true;
    }
    if (verdict == SolVerdict::kUnderBound) {  // flagged, not failed (sol/sol_share.h)
        evidence["under_sol_bound"] = true;
        pass("sol_gaming",
             "flagged: median " + us(report_.stats.median_ns) + " is under the speed of light " +
                 us(bounds->time_fused_s * 1e9) + " (" + format_sol_share(share) +
                 "), above the gaming threshold " + us(bounds->gaming_threshold_s * 1e9) +
                 ": a kernel cheaper than kforge's instruction model (sol/op_cost.h) or a "
                 "measurement to re-check" +
                 (report_.simulated ? " (simulated: the time model must not beat the bound)"
                                    : ""),
             evidence);
        return true;
    }
    // Re-verified at the checked shape; the quick tier (no check shape) leaves it to the full
    // tier rather than interpret the full shape on the CPU.
    Prepared* check = check_ ? check_.get() : check_shape_ ? full_.get() : nullptr;
    std::string reverify = check ? "could not load the candidate"
                                 : "left to the full tier (the quick tier checks small shapes only)";
    if (check && device_.load(check->candidate).ok()) {
        RoundResult r = round(check->problem, Distribution::kNormal, request_.seed * 1000 + 777,
                              use_gpu_reference(check->problem));
        Comparison c;
        if (r.status == EvalStatus::kPassed) c = compare_outputs(check->problem, r.outputs,
                                                                 *r.reference);
        reverify = r.status != EvalStatus::kPassed ? "failed: " + r.message
                   : c.passed()                    ? "passed at " + shapes_key(check->problem)
                                                   : "failed: " + c.message;
    }
    evidence["reverification"] = reverify;
    return fail("sol_gaming", EvalStatus::kFlaggedGaming,
                "median " + us(report_.stats.median_ns) + " is below the gaming threshold " +
                    us(bounds->gaming_threshold_s * 1e9) + " (speed of light " +
                    us(bounds->time_fused_s * 1e9) + "); re-verification " + reverify,
                evidence);
}

}  // namespace kforge::eval::detail

namespace kforge::eval {

TimingOptions timing_options_for(EvalTier tier) {
    bool full = tier == EvalTier::kFull || tier == EvalTier::kProfile;
    TimingOptions options;
    options.warmup_iterations = full ? 10 : 3;
    options.iterations = full ? 100 : 20;
    options.max_seconds = full ? 10.0 : 2.0;
    return options;
}

}  // namespace kforge::eval
