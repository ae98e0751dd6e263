// `kforge eval --problem SPEC --program PROG [--tier quick|full] [--device cuda|sim|auto]
// [--gpu N] [--sim-model h200] [--sim-fault F] [--baseline PROG] [--db PATH] [--json]`:
// evaluates one program through every gate (eval/evaluate.h) in this process and prints the
// verdict with its evidence and per-gate wall times. `auto` picks the CUDA device when a GPU is
// usable, else the simulated device, and says so loudly.
//
// Several programs (--program A --program B, --programs-dir DIR), --interleave, --repeat N or
// --isolate evaluate through ONE supervised worker (`kforge worker`, eval/evaluator.h): per
// candidate the verdict and wall time; --interleave then times the passed candidates
// interleaved (A B A B chunks of the full-tier protocol) with NVML clocks and throttle reasons
// per sample; --repeat N times each passed candidate N times with the full-tier protocol and
// prints every repetition's median and their spread (max - min) / min.
// `--fault-suite MANIFEST [--cubin-dir DIR]` runs tests/faults/ through one worker session.
//
// Exit 0 passed (all), 1 a candidate failed (compile, a gate) or a fault scenario mismatched,
// 2 user error (a bad flag, spec or program: a program that does not parse or check against the
// problem is the user's, status invalid_program), 3 environment.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "driver/eval_backend.h"
#include "eval/evaluate.h"
#include "eval/fault_suite.h"
#include "eval/session.h"
#include "problem/spec.h"
#include "store/store.h"
#include "worker/supervised_evaluator.h"

namespace kforge::cli {
namespace {

struct EvalArgs {
    std::string problem_path;
    std::vector<std::string> program_paths;
    std::string programs_dir;
    bool interleave = false;
    int repeat = 0;
    bool isolate = false;
    std::string worker_log;
    std::string fault_suite;
    std::string cubin_dir;
    std::string baseline_path;
    std::string tier = "quick";
    std::string device = "auto";
    std::string sim_model = "h200";
    std::string sim_fault = "none";
    int gpu = 0;
    std::string db;
    bool json = false;
    uint64_t seed = 1;
    int timing_runs = 0;
};

int user_error(const std::string& text) {
    eprintf("kforge eval: %s\n", text.c_str());
    return kExitUserError;
}

// The exit code of one evaluation: the environment's, the user's (an invalid program: it does not
// parse or check, and the message names the place), the candidate's, or 0.
int exit_code_of(const eval::EvalReport& r) {
    if (r.environment_error) return kExitEnvironment;
    if (r.status == EvalStatus::kInvalidProgram) return kExitUserError;
    return r.status == EvalStatus::kPassed ? kExitOk : kExitFailure;
}

// What the simulated device could not check, gate by gate (eval::simulated_gap, as each gate's
// evidence says): {gate: what}.
nlohmann::ordered_json not_checked(const eval::EvalReport& r) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const eval::GateOutcome& g : r.gates)
        if (g.evidence.is_object() && g.evidence.contains("not_checked"))
            out[g.gate] = g.evidence["not_checked"];
    return out;
}

void print_text(const eval::EvalReport& r) {
    const char* sim = r.simulated ? " (simulated)" : "";
    std::printf("device: %s%s\n", r.device.name.c_str(), sim);
    std::printf("program %s, shapes %s, tier %s%s\n", r.program_hash.substr(0, 12).c_str(),
                r.shapes_key.c_str(), std::string(to_string(r.tier)).c_str(),
                r.cached ? " (from the evaluation cache)" : "");
    for (const eval::GateOutcome& g : r.gates) {
        const char* mark = g.skipped ? "skip" : g.passed ? "ok  " : "FAIL";
        std::printf("  [%s] %-18s %8.1f ms  %s\n", mark, g.gate.c_str(), g.wall_ms,
                    g.message.c_str());
        if (!g.passed) std::printf("%s\n", g.evidence.dump(2).c_str());
    }
    if (r.simulated) {
        const nlohmann::ordered_json gaps = not_checked(r);
        if (!gaps.empty()) std::printf("not checked on the simulated device:\n");
        for (const auto& [gate, what] : gaps.items())
            std::printf("  %-18s %s\n", gate.c_str(), what.get<std::string>().c_str());
    }
    if (r.stats.count > 0) {
        std::printf("time: median %.2f us, IQR %.2f us, 95%% CI [%.2f, %.2f] us, %d samples%s\n",
                    r.stats.median_ns / 1e3, r.stats.iqr_ns / 1e3, r.stats.ci95_low_ns / 1e3,
                    r.stats.ci95_high_ns / 1e3, r.stats.count, sim);
        double s = r.stats.median_ns * 1e-9;
        std::printf("work: %.3g FLOP, %.3g bytes -> %.2f TFLOP/s, %.1f GB/s%s\n", r.flops,
                    r.bytes, r.flops / s / 1e12, r.bytes / s / 1e9, sim);
        if (r.baseline_stats.count > 0)
            std::printf("baseline: median %.2f us -> speedup %.3fx%s\n",
                        r.baseline_stats.median_ns / 1e3,
                        r.baseline_stats.median_ns / r.stats.median_ns, sim);
    }
    if (!r.store_error.empty()) std::printf("warning: not stored: %s\n", r.store_error.c_str());
    for (const std::string& n : r.worker_notes) std::printf("note: %s\n", n.c_str());
    std::printf("wall: %.1f ms\n", r.wall_ms);
    std::printf("verdict: %s%s%s%s\n", std::string(to_string(r.status)).c_str(),
                r.message.empty() ? "" : " - ", r.message.c_str(), sim);
}

// The supervisor of a worker on the requested device; `auto` falls back to a simulated worker
// (driver/eval_backend.h), saying so loudly. An error is the environment's.
Expected<std::unique_ptr<eval::Supervisor>> start_supervisor(const EvalArgs& a) {
    driver::WorkerOptions o;
    o.device = *driver::device_choice_from_string(a.device);
    o.gpu = a.gpu;
    o.sim_model = a.sim_model;
    o.worker_executable = kforge_executable();
    o.log_path = a.worker_log;
    auto started = driver::start_worker(o);
    if (!started.fallback.empty())
        eprintf("kforge eval: *** no usable GPU worker (%s): using the SIMULATED "
                             "device; times are model estimates, not measurements ***\n",
                     started.fallback.c_str());
    if (!started.value) return make_error("", started.message);
    return std::move(started.value);
}

void print_session(const eval::SessionResult& r) {
    const char* sim = r.reports.empty() || !r.reports[0].simulated ? "" : " (simulated)";
    if (!r.reports.empty())
        std::printf("device: %s%s\n", r.reports[0].device.name.c_str(), sim);
    if (*sim)
        std::printf("not checked on the simulated device: the compile, the programs' numerics "
                    "(%s), a measured time (gates' evidence: not_checked)\n",
                    eval::kNumericsNotChecked);
    for (size_t i = 0; i < r.reports.size(); ++i) {
        const eval::EvalReport& e = r.reports[i];
        std::printf("[%zu/%zu] %s: %s, wall %.1f ms", i + 1, r.reports.size(),
                    r.labels[i].c_str(), std::string(to_string(e.status)).c_str(), e.wall_ms);
        if (e.stats.count > 0) std::printf(", median %.2f us", e.stats.median_ns / 1e3);
        std::printf("%s\n", e.cached ? " (cached)" : "");
        std::string gates;
        for (const eval::GateOutcome& g : e.gates) {
            char b[96];
            std::snprintf(b, sizeof b, "%s%s %.1f ms", gates.empty() ? "" : ", ",
                          g.gate.c_str(), g.wall_ms);
            gates += b;
        }
        std::printf("      gates: %s\n", gates.c_str());
        if (e.status != EvalStatus::kPassed) std::printf("      %s\n", e.message.c_str());
        for (const std::string& n : e.worker_notes) std::printf("      note: %s\n", n.c_str());
    }
    if (r.timing) {
        const eval::TimeReport& t = *r.timing;
        std::printf("timing session%s: %d warm-up + %d iterations per repetition, L2 flush %s, "
                    "%s, wall %.1f ms%s\n", t.programs.size() > 1 ? " (interleaved)" : "",
                    t.protocol.warmup_iterations, t.protocol.iterations,
                    t.protocol.flush_l2 ? "on" : "off", std::string(to_string(t.status)).c_str(),
                    t.wall_ms, sim);
        if (!t.clock_note.empty()) std::printf("  clocks: %s\n", t.clock_note.c_str());
        for (size_t i = 0; i < t.programs.size(); ++i) {
            const eval::TimedProgram& p = t.programs[i];
            std::string label = i < r.timed_labels.size() ? r.timed_labels[i] : p.program_hash;
            eval::RepeatSummary s = eval::repeat_summary(p);
            std::vector<eval::TimingSample> all;
            for (const auto& rep : p.repetitions)
                all.insert(all.end(), rep.samples.begin(), rep.samples.end());
            std::printf("  %s: %s", label.c_str(), std::string(to_string(p.status)).c_str());
            if (p.status != EvalStatus::kPassed) std::printf(" - %s", p.message.c_str());
            std::printf("\n    medians (us):");
            for (double m : s.medians_ns) std::printf(" %.3f", m / 1e3);
            if (s.medians_ns.size() >= 2)
                std::printf("\n    spread (max-min)/min of %zu medians: %.3f%% %s",
                            s.medians_ns.size(), 100 * s.spread,
                            s.spread <= 0.01 ? "(within 1%)" : "(NOT within 1%)");
            std::printf("\n    %s\n", eval::clock_summary(all).c_str());
        }
    }
    std::printf("session wall: %.1f ms\n", r.wall_ms);
}

// Programs named by --program and --programs-dir (*.kf, sorted).
Expected<std::vector<eval::SessionCandidate>> session_candidates(const EvalArgs& a) {
    std::vector<std::string> paths = a.program_paths;
    if (!a.programs_dir.empty()) {
        std::error_code ec;
        std::vector<std::string> found;
        for (const auto& e : std::filesystem::directory_iterator(a.programs_dir, ec))
            if (e.path().extension() == ".kf") found.push_back(e.path().string());
        if (ec) return make_error(a.programs_dir, "cannot list: " + ec.message());
        std::sort(found.begin(), found.end());
        if (found.empty()) return make_error(a.programs_dir, "holds no .kf program");
        paths.insert(paths.end(), found.begin(), found.end());
    }
    std::vector<eval::SessionCandidate> out;
    for (const std::string& p : paths) {
        eval::SessionCandidate c;
        c.label = std::filesystem::path(p).filename().string();
        c.program_file = p;
        if (!read_file(p, c.program_text)) return make_error(p, "cannot read program file");
        out.push_back(std::move(c));
    }
    return out;
}

int run_fault_suite(const EvalArgs& a) {
    bool simulated = a.device == "sim";
    if (!simulated && a.cubin_dir.empty())
        return user_error("--fault-suite on a GPU needs --cubin-dir (tests/faults/run_faults.sh)");
    auto sup = start_supervisor(a);
    if (!sup) {
        eprintf("kforge eval: %s\n", sup.error().to_string().c_str());
        return kExitEnvironment;
    }
    simulated = (*sup)->device().simulated;
    eval::SupervisedEvaluator evaluator(**sup, 300);
    auto r = eval::run_fault_suite(evaluator, a.fault_suite, simulated, a.cubin_dir);
    if (!r) return user_error(r.error().to_string());
    std::printf("device: %s%s\n", (*sup)->device().name.c_str(), simulated ? " (simulated)" : "");
    std::printf("%s", eval::fault_suite_table(*r).c_str());
    const eval::SupervisorStats& st = (*sup)->stats();
    std::printf("one supervisor session: workers started %d, timeouts %d, crashes %d, restarts "
                "(broken device) %d%s%s\n", st.workers_started, st.timeouts,
                st.crashes, st.restarts_broken, a.worker_log.empty() ? "" : ", worker log ",
                a.worker_log.c_str());
    return r->mismatches == 0 ? kExitOk : kExitFailure;
}

int run_session(const EvalArgs& a, const Problem& problem, EvalTier tier,
                eval::SimFault fault, Store* store) {
    auto candidates = session_candidates(a);
    if (!candidates) return user_error(candidates.error().to_string());
    if (a.repeat < 0 || a.repeat > 1000) return user_error("--repeat must be in 0..1000");
    auto sup = start_supervisor(a);
    if (!sup) {
        eprintf("kforge eval: %s\n", sup.error().to_string().c_str());
        return kExitEnvironment;
    }
    eval::SupervisedEvaluator evaluator(**sup);
    eval::SessionOptions o;
    o.tier = tier;
    o.interleave = a.interleave;
    o.repeat = a.repeat;
    o.seed = a.seed;
    o.sim_fault = fault;
    o.compile_cache_dir = default_compile_cache_dir();
    o.store = store;
    eval::SessionResult r = eval::run_session(evaluator, problem, *candidates, o);
    if (!a.json) print_session(r);
    // The environment's exit first, then the user's (an invalid program), then a failure.
    int code = r.timing && r.timing->status != EvalStatus::kPassed ? kExitFailure : kExitOk;
    std::string first_error;
    for (size_t i = 0; i < r.reports.size(); ++i) {
        const int c = exit_code_of(r.reports[i]);
        if (c == kExitUserError && a.json)
            eprintf("kforge eval: %s: invalid program: %s\n", r.labels[i].c_str(),
                         r.reports[i].message.c_str());
        if (c != kExitOk && first_error.empty())
            first_error = r.labels[i] + ": " + r.reports[i].message;
        if (c == kExitEnvironment || (c == kExitUserError && code != kExitEnvironment) ||
            (c == kExitFailure && code == kExitOk))
            code = c;
    }
    if (a.json) {
        nlohmann::ordered_json j = eval::to_json(r);
        if (code != kExitOk) {
            j["exit"] = code;
            j["error"] = first_error.empty() ? "the interleaved timing failed" : first_error;
        }
        print_json(j);
    }
    return code;
}

int run(const EvalArgs& a) {
    if (a.device != "auto" && a.device != "cuda" && a.device != "sim")
        return user_error("--device must be cuda, sim or auto");
    if (!a.fault_suite.empty()) return run_fault_suite(a);
    if (a.problem_path.empty()) return user_error("--problem is required");
    if (a.program_paths.empty() && a.programs_dir.empty())
        return user_error("give --program (one or more) or --programs-dir");
    auto tier = eval_tier_from_string(a.tier);
    if (!tier) return user_error("--tier must be one of static, cost_model, compile, quick, full");
    auto fault = eval::sim_fault_from_string(a.sim_fault);
    if (!fault) return user_error("unknown --sim-fault '" + a.sim_fault + "'");
    auto problem = load_problem(a.problem_path);
    if (!problem) return user_error(problem.error().to_string());
    std::optional<Store> store;
    if (!a.db.empty()) {
        auto opened = open_store(a.db);
        if (!opened) return user_error(opened.error().to_string());
        store.emplace(std::move(*opened));
    }
    bool session = a.program_paths.size() > 1 || !a.programs_dir.empty() || a.interleave ||
                   a.repeat > 0 || a.isolate;
    if (session) {
        if (a.timing_runs > 0)
            return user_error("--timing-runs works with one program evaluated in this process "
                              "(a profiler run), not with --isolate, --interleave or several programs");
        if (!a.baseline_path.empty())
            return user_error("--baseline works with one program evaluated in this process; "
                              "use --interleave to time several programs against each other");
        if (*fault == eval::SimFault::kProcessCrash || *fault == eval::SimFault::kProcessHang)
            if (a.device != "sim") return user_error("--sim-fault " + a.sim_fault +
                                                     " needs --device sim");
        return run_session(a, *problem, *tier, *fault, store ? &*store : nullptr);
    }
    if (*fault == eval::SimFault::kProcessCrash || *fault == eval::SimFault::kProcessHang)
        return user_error("--sim-fault " + a.sim_fault + " would take this process down: add "
                          "--isolate to evaluate in a supervised worker");
    const std::string& program_path = a.program_paths.front();
    eval::EvalRequest request;
    request.timing_runs = a.timing_runs;
    request.problem = *problem;
    request.tier = *tier;
    request.sim_fault = *fault;
    request.seed = a.seed;
    request.program_file = program_path;
    request.compile_cache_dir = default_compile_cache_dir();
    if (!read_file(program_path, request.program_text))
        return user_error("cannot read program file " + program_path);
    if (!a.baseline_path.empty()) {
        std::string text;
        if (!read_file(a.baseline_path, text))
            return user_error("cannot read baseline file " + a.baseline_path);
        request.baseline_program_text = text;
    }

    auto opened = driver::open_device(*driver::device_choice_from_string(a.device), a.gpu,
                                      a.sim_model);
    if (!opened.fallback.empty())
        eprintf("kforge eval: *** no usable GPU (%s): using the SIMULATED device; "
                             "times are model estimates, not measurements ***\n",
                     opened.fallback.c_str());
    if (!opened.value) {
        if (opened.failure == driver::OpenFailure::kEnvironment) {
            eprintf("kforge eval: %s\n", opened.message.c_str());
            return kExitEnvironment;
        }
        return user_error(opened.message);
    }
    std::unique_ptr<eval::Device> device = std::move(opened.value);
    if (store) request.store = &*store;
    eval::EvalReport report = eval::evaluate(*device, request);
    const int code = exit_code_of(report);
    if (a.json) {
        nlohmann::ordered_json j = eval::to_json(report);
        if (report.simulated) j["not_checked"] = not_checked(report);
        if (code != kExitOk) {
            j["exit"] = code;
            j["error"] = report.message.empty() ? std::string(to_string(report.status))
                                                : report.message;
        }
        print_json(j);
    } else {
        print_text(report);
    }
    if (code == kExitUserError && a.json)
        eprintf("kforge eval: invalid program: %s\n", report.message.c_str());
    return code;
}

}  // namespace

void register_eval(CLI::App& app) {
    auto args = std::make_shared<EvalArgs>();
    auto* cmd = app.add_subcommand("eval", "evaluate a program through every gate");
    cmd->add_option("spec", args->problem_path, "problem spec (JSON)");
    cmd->add_option("--problem", args->problem_path, "the problem spec, as the positional SPEC");
    cmd->add_option("--program", args->program_paths,
                    "program (kernel language); repeat for several (one worker session)");
    cmd->add_option("--programs-dir", args->programs_dir,
                    "evaluate every *.kf in this folder in one worker session");
    cmd->add_flag("--interleave", args->interleave,
                  "time the passed candidates interleaved (full-tier protocol, A B A B chunks)");
    cmd->add_option("--repeat", args->repeat,
                    "time each passed candidate N times (full-tier protocol) in one session");
    cmd->add_flag("--isolate", args->isolate, "evaluate in a supervised worker process");
    cmd->add_option("--worker-log", args->worker_log, "append the worker's stderr here");
    cmd->add_option("--fault-suite", args->fault_suite,
                    "run a fault-suite manifest (tests/faults/scenarios.json) in one session");
    cmd->add_option("--cubin-dir", args->cubin_dir,
                    "--fault-suite on a GPU: folder with <source>.cubin of every scenario");
    cmd->add_option("--tier", args->tier, "static, compile, quick (default) or full");
    cmd->add_option("--device", args->device, "cuda, sim or auto (default)");
    cmd->add_option("--gpu", args->gpu, "GPU index for the CUDA device (default 0)");
    cmd->add_option("--sim-model", args->sim_model, "device table entry the simulator models");
    cmd->add_option("--sim-fault", args->sim_fault, "fault the simulated device injects");
    cmd->add_option("--baseline", args->baseline_path, "baseline program, timed interleaved");
    cmd->add_option("--seed", args->seed, "input seed (default 1)");
    cmd->add_option("--timing-runs", args->timing_runs,
                    "time one warm-up and N runs instead of the tier's protocol (for a run under "
                    "a profiler)")->check(CLI::Range(1, 1000));
    cmd->add_option("--db", args->db, "store: evaluation cache and results");
    cmd->add_flag("--json", args->json, "print the report as JSON");
    cmd->callback([args] { exit_code() = run(*args); });
}

}  // namespace kforge::cli
