// evaluate(): the pipeline wrapped in the store (cache lookup first, then candidate, artefacts,
// evaluation and measurements); the full tier reuses the quick tier's small-shape correctness.
#include <chrono>

#include "compile/compile.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluate_internal.h"
#include "eval/evaluator.h"
#include "problem/spec.h"
#include "sol/target.h"
#include "store/store.h"

namespace kforge::eval {
namespace {

struct Ids {
    int64_t device_id = 0;
    int64_t candidate_id = 0;
    std::string toolchain;
    std::string hash;
};

Expected<Ids> begin(Store& store, const EvalRequest& request, const DeviceInfo& info) {
    auto program = dsl::parse_program(request.program_text, request.program_file);
    if (!program) return program.error();
    Ids ids;
    ids.hash = dsl::program_hash(*program);
    auto problem_id = store.upsert_problem(request.problem.name,
                                           problem_to_json(request.problem).dump());
    if (!problem_id) return problem_id.error();
    DeviceRecord device{0, info.name, info.uuid, "", info.driver, info.datasheet_key};
    auto device_id = store.upsert_device(device);
    if (!device_id) return device_id.error();
    ids.device_id = *device_id;
    int64_t run_id = 0;
    if (request.run_id) {
        run_id = *request.run_id;
    } else {
        NewRun run;
        run.problem_id = *problem_id;
        run.device_id = ids.device_id;
        run.options_json = nlohmann::json{{"command", "eval"},
                                          {"tier", std::string(to_string(request.tier))}}.dump();
        auto created = store.create_run(run);
        if (!created) return created.error();
        run_id = *created;
    }
    NewCandidate c{run_id, *problem_id, dsl::print_canonical(*program), ids.hash, {},
                   request.proposer, "evaluated as given"};
    auto cand = store.add_candidate(c);
    if (!cand) return cand.error();
    ids.candidate_id = cand->id;
    if (info.simulated) {
        ids.toolchain = "simulated";
    } else {
        const Target target = target_for_device(info.datasheet_key);
        auto v = compile::nvcc_version(compile::default_compile_options(target.arch).nvcc);
        std::string text = v.ok() ? *v : "nvcc unavailable";
        auto pos = text.rfind("release");
        ids.toolchain = pos == std::string::npos ? text : text.substr(pos);
        if (auto nl = ids.toolchain.find('\n'); nl != std::string::npos) ids.toolchain.resize(nl);
    }
    // Part of the evaluation cache's key: a median is reused only for inputs drawn alike (a
    // tensor-core GEMM runs at another clock on other bits; before the spec's distributions,
    // every timing drew uniform [0, 1), and those entries no longer match).
    ids.toolchain += "; timing inputs " + describe_distributions(request.problem);
    return ids;
}

std::vector<MeasurementRecord> measurements_of(const EvalReport& r) {
    std::vector<MeasurementRecord> m;
    auto add = [&](const std::vector<TimingSample>& samples, const std::string& label) {
        for (size_t i = 0; i < samples.size(); ++i) {
            const TimingSample& s = samples[i];
            MeasurementRecord rec{label, static_cast<int64_t>(i), s.time_ns, {}, {}, {}, {}};
            if (s.sm_clock_mhz) rec.sm_clock_mhz = s.sm_clock_mhz;
            if (s.mem_clock_mhz) rec.mem_clock_mhz = s.mem_clock_mhz;
            if (s.temperature_c) rec.temperature_c = s.temperature_c;
            if (s.throttle_reasons) rec.throttle_reasons = static_cast<int64_t>(s.throttle_reasons);
            m.push_back(rec);
        }
    };
    add(r.samples, "candidate");
    add(r.baseline_samples, "baseline");
    return m;
}

void from_cache(EvalReport& r, const EvaluationRecord& rec) {
    r.cached = true;
    r.status = rec.status;
    r.message = rec.error_text.empty() ? "cached evaluation #" + std::to_string(rec.id)
                                       : rec.error_text;
    r.gates = gates_from_evidence(rec.evidence_json);
    std::vector<double> times;
    for (const MeasurementRecord& m : rec.measurements) {
        if (m.label != "candidate") continue;
        TimingSample s;
        s.time_ns = m.time_ns;
        s.sm_clock_mhz = static_cast<int>(m.sm_clock_mhz.value_or(0));
        r.samples.push_back(s);
        times.push_back(m.time_ns);
    }
    r.stats = timing_stats(times);
    r.kernel_times_ns = rec.kernel_times_ns;
    auto stored = report_from_json(nlohmann::json::parse(rec.evidence_json, nullptr, false));
    if (stored) r.kernels = std::move(stored->kernels);
}

// The passed gates of a quick-tier evaluation that a full-tier one may reuse.
std::vector<GateOutcome> reusable_from(const EvaluationRecord& rec) {
    std::vector<GateOutcome> gates;
    if (rec.status != EvalStatus::kPassed) return gates;
    EvalReport quick;
    from_cache(quick, rec);
    for (GateOutcome& g : quick.gates)
        if (g.gate == "correctness_small" && g.passed && !g.skipped) gates.push_back(g);
    return gates;
}

EvalReport evaluate_with_store(Evaluator& evaluator, const EvalRequest& request) {
    if (!request.store || request.prebuilt) {
        EvalReport r = evaluator.run_pipeline(request);
        if (request.store) r.store_error = "prebuilt candidates are not recorded in the store";
        return r;
    }
    Store& store = *request.store;
    auto info = evaluator.device_info();
    if (!info) {
        EvalReport r;
        r.status = EvalStatus::kNotSupported;
        r.environment_error = true;
        r.message = "no evaluation device: " + info.error().to_string();
        return r;
    }
    auto ids = begin(store, request, *info);
    if (!ids) {
        EvalReport r = evaluator.run_pipeline(request);
        r.store_error = ids.error().to_string();
        return r;
    }
    EvalTier tier = request.tier == EvalTier::kProfile ? EvalTier::kFull : request.tier;
    auto hit = store.find_cached_evaluation(ids->hash, ids->device_id, ids->toolchain,
                                            shapes_key(request.problem), tier);
    EvalReport r;
    std::optional<int64_t> cached_from;
    if (hit.ok() && *hit) {
        r.device = *info;
        r.simulated = r.device.simulated;
        r.tier = tier;
        r.program_hash = ids->hash;
        r.shapes_key = shapes_key(request.problem);
        r.flops = static_cast<double>((*hit)->flops);
        r.bytes = static_cast<double>((*hit)->bytes);
        from_cache(r, **hit);
        cached_from = (*hit)->id;
    } else {
        EvalRequest req = request;
        if (tier == EvalTier::kFull) {
            auto quick = store.find_cached_evaluation(ids->hash, ids->device_id, ids->toolchain,
                                                      shapes_key(request.problem),
                                                      EvalTier::kQuick);
            if (quick.ok() && *quick) req.reusable_gates = reusable_from(**quick);
        }
        r = evaluator.run_pipeline(req);
        for (auto [kind, content] : {std::pair{ArtefactKind::kCudaSource, &r.cuda_source},
                                     std::pair{ArtefactKind::kLaunchPlan, &r.plan_json}})
            if (!content->empty())
                if (auto a = store.add_artefact(ids->candidate_id, kind, *content); !a)
                    r.store_error = a.error().to_string();
    }
    if (r.environment_error) return r;  // not a property of the candidate: not recorded
    NewEvaluation e;
    e.candidate_id = ids->candidate_id;
    e.device_id = ids->device_id;
    e.toolchain = ids->toolchain;
    e.shapes_key = r.shapes_key;
    e.tier = tier;
    e.status = r.status;
    e.error_text = r.message;
    e.evidence_json = to_json(r).dump();
    e.flops = static_cast<int64_t>(r.flops);
    e.bytes = static_cast<int64_t>(r.bytes);
    e.measurements = measurements_of(r);
    e.kernel_times_ns = r.kernel_times_ns;
    e.cached_from_id = cached_from;
    auto id = store.add_evaluation(e);
    if (id) r.evaluation_id = *id;
    else r.store_error = id.error().to_string();
    return r;
}

}  // namespace

EvalReport evaluate(Evaluator& evaluator, const EvalRequest& request) {
    auto t0 = std::chrono::steady_clock::now();
    EvalReport r = evaluate_with_store(evaluator, request);
    r.wall_ms = ms_since(t0);
    return r;
}

EvalReport evaluate(Device& device, const EvalRequest& request, ReferenceCache* cache) {
    InProcessEvaluator evaluator(device, cache);
    return evaluate(evaluator, request);
}

}  // namespace kforge::eval
