// evaluate(): the pipeline wrapped in the store (cache lookup first, then candidate, artefacts,
// evaluation and measurements), and the report's JSON form.
#include "compile/compile.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluate_internal.h"
#include "problem/spec.h"
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
        auto v = compile::nvcc_version(compile::default_compile_options("sm_90a").nvcc);
        std::string text = v.ok() ? *v : "nvcc unavailable";
        auto pos = text.rfind("release");
        ids.toolchain = pos == std::string::npos ? text : text.substr(pos);
        if (auto nl = ids.toolchain.find('\n'); nl != std::string::npos) ids.toolchain.resize(nl);
    }
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
    auto evidence = nlohmann::ordered_json::parse(rec.evidence_json, nullptr, false);
    if (evidence.is_object() && evidence.contains("gates"))
        for (const auto& g : evidence["gates"])
            r.gates.push_back(GateOutcome{g.value("gate", ""), g.value("passed", false),
                                          g.value("skipped", false),
                                          eval_status_from_string(g.value("status", "passed"))
                                              .value_or(EvalStatus::kPassed),
                                          g.value("message", ""),
                                          g.value("evidence", nlohmann::ordered_json::object())});
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
}

}  // namespace

EvalReport evaluate(Device& device, const EvalRequest& request) {
    if (!request.store) return detail::Pipeline(device, request).run();
    Store& store = *request.store;
    auto ids = begin(store, request, device.info());
    if (!ids) {
        EvalReport r = detail::Pipeline(device, request).run();
        r.store_error = ids.error().to_string();
        return r;
    }
    EvalTier tier = request.tier == EvalTier::kProfile ? EvalTier::kFull : request.tier;
    auto hit = store.find_cached_evaluation(ids->hash, ids->device_id, ids->toolchain,
                                            shapes_key(request.problem), tier);
    EvalReport r;
    std::optional<int64_t> cached_from;
    if (hit.ok() && *hit) {
        r.device = device.info();
        r.simulated = r.device.simulated;
        r.tier = tier;
        r.program_hash = ids->hash;
        r.shapes_key = shapes_key(request.problem);
        r.flops = static_cast<double>((*hit)->flops);
        r.bytes = static_cast<double>((*hit)->bytes);
        from_cache(r, **hit);
        cached_from = (*hit)->id;
    } else {
        r = detail::Pipeline(device, request).run();
        if (!r.cuda_source.empty())
            (void)store.add_artefact(ids->candidate_id, ArtefactKind::kCudaSource, r.cuda_source);
        if (!r.plan_json.empty())
            (void)store.add_artefact(ids->candidate_id, ArtefactKind::kLaunchPlan, r.plan_json);
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
    e.cached_from_id = cached_from;
    auto id = store.add_evaluation(e);
    if (id) r.evaluation_id = *id;
    else r.store_error = id.error().to_string();
    return r;
}

nlohmann::ordered_json to_json(const EvalReport& r) {
    nlohmann::ordered_json j;
    j["status"] = std::string(to_string(r.status));
    j["message"] = r.message;
    j["simulated"] = r.simulated;
    j["device"] = {{"name", r.device.name}, {"datasheet_key", r.device.datasheet_key},
                   {"uuid", r.device.uuid}, {"driver", r.device.driver}};
    j["tier"] = std::string(to_string(r.tier));
    j["program_hash"] = r.program_hash;
    j["shapes"] = r.shapes_key;
    j["flops"] = r.flops;
    j["bytes"] = r.bytes;
    j["cached"] = r.cached;
    if (r.evaluation_id) j["evaluation_id"] = *r.evaluation_id;
    if (r.environment_error) j["environment_error"] = true;
    if (r.context_lost) j["context_lost"] = true;
    if (!r.store_error.empty()) j["store_error"] = r.store_error;
    j["gates"] = nlohmann::ordered_json::array();
    for (const GateOutcome& g : r.gates)
        j["gates"].push_back({{"gate", g.gate}, {"passed", g.passed}, {"skipped", g.skipped},
                              {"status", std::string(to_string(g.status))},
                              {"message", g.message}, {"evidence", g.evidence}});
    if (r.stats.count > 0) {
        j["timing"] = {{"median_ns", r.stats.median_ns}, {"iqr_ns", r.stats.iqr_ns},
                       {"ci95_low_ns", r.stats.ci95_low_ns},
                       {"ci95_high_ns", r.stats.ci95_high_ns}, {"count", r.stats.count}};
        if (r.baseline_stats.count > 0)
            j["baseline_timing"] = {{"median_ns", r.baseline_stats.median_ns},
                                    {"iqr_ns", r.baseline_stats.iqr_ns},
                                    {"count", r.baseline_stats.count}};
    }
    return j;
}

}  // namespace kforge::eval
