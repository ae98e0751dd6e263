// Storing PyTorch baseline measurements (report/baseline_store.h).
#include "report/baseline_store.h"

#include <vector>

#include "common/stats.h"
#include "problem/spec.h"
#include "problem/work.h"
#include "report/baseline.h"
#include "sol/device.h"

namespace kforge::report {
namespace {

using json = nlohmann::json;

std::optional<int64_t> int_field(const json& j, const char* key) {
    if (j.contains(key) && j[key].is_number()) return j[key].get<int64_t>();
    return std::nullopt;
}

}  // namespace

Expected<StoredBaseline> store_baseline(Store& store, const Problem& problem,
                                        const std::string& shapes_key, const json& device,
                                        const json& doc, const json& result,
                                        std::optional<int64_t> run_id) {
    std::string name = device.value("name", "");
    std::string uuid = device.value("uuid", "");
    if (uuid.empty()) return make_error("baseline", "the Python side reported no device uuid");
    std::string key;
    if (auto spec = device_from_cuda_name(name)) key = spec->name;
    auto device_id = store.upsert_device(
        DeviceRecord{0, name, uuid, device.value("compute_capability", ""),
                     device.value("driver", ""), key});
    if (!device_id) return device_id.error();
    auto problem_id = store.upsert_problem(problem.name, problem_to_json(problem).dump());
    if (!problem_id) return problem_id.error();
    StoredBaseline out;
    if (run_id) {
        auto run = store.get_run(*run_id);
        if (!run) return make_error("--run", "run " + std::to_string(*run_id) + " does not exist");
        if (run->device_id != *device_id) {
            auto d = store.get_device(run->device_id);
            return make_error("--run", "run " + std::to_string(*run_id) + " is on device " +
                                           (d ? d->name + " " + d->uuid : std::string("?")) +
                                           "; this GPU is " + name + " " + uuid);
        }
        out.run_id = *run_id;
    } else {
        NewRun r;
        r.problem_id = *problem_id;
        r.device_id = *device_id;
        r.options_json = json{{"command", "baseline"}, {"torch", doc.value("torch", "")}}.dump();
        auto created = store.create_run(r);
        if (!created) return created.error();
        out.run_id = *created;
        (void)store.finish_run(out.run_id, RunStatus::kFinished);
    }
    std::string torch = doc.value("torch", "?");
    std::string text = "# PyTorch baseline (not a kforge program): problem " + problem.name +
                       ", torch " + torch + "\n";
    auto cand = store.add_candidate(NewCandidate{out.run_id, *problem_id, text,
                                                 content_hash(text), {}, "baseline:pytorch",
                                                 "PyTorch eager / torch.compile timing"});
    if (!cand) return cand.error();
    out.candidate_id = cand->id;

    NewEvaluation e;
    e.candidate_id = cand->id;
    e.device_id = *device_id;
    e.toolchain = "torch " + torch + " (CUDA " + doc.value("torch_cuda", std::string("?")) +
                  ")" + (doc.contains("triton") && doc["triton"].is_string()
                       ? " / triton " + doc["triton"].get<std::string>()
                       : std::string());
    e.shapes_key = shapes_key;
    e.tier = EvalTier::kFull;
    if (auto w = count_work(problem); w.ok()) {
        e.flops = static_cast<int64_t>(w->flops());
        e.bytes = static_cast<int64_t>(w->bytes_fused);
    }
    json evidence{{"baseline", "pytorch"},
                  {"settings", result.value("settings", json::object())},
                  {"protocol", doc.value("protocol", json::object())},
                  {"device", device},
                  {"modes", json::object()}};
    if (!result.contains("modes") || !result["modes"].is_object())
        return make_error("baseline", "the Python side reported no modes for " + problem.name);
    std::string errors;
    for (const auto& [mode, m] : result["modes"].items()) {
        json summary = m;
        summary.erase("samples_ns");
        summary.erase("clocks");
        evidence["modes"][mode] = summary;
        if (m.value("status", "") != "ok" || !m.contains("samples_ns")) {
            errors += (errors.empty() ? "" : "; ") + mode + ": " + m.value("message", "failed");
            continue;
        }
        const json& samples = m["samples_ns"];
        for (size_t i = 0; i < samples.size(); ++i) {
            MeasurementRecord rec;
            rec.label = baseline_label(mode);
            rec.sample_index = static_cast<int64_t>(i);
            rec.time_ns = samples[i].get<double>();
            if (m.contains("clocks") && i < m["clocks"].size()) {
                const json& c = m["clocks"][i];
                rec.sm_clock_mhz = int_field(c, "sm_clock_mhz");
                rec.mem_clock_mhz = int_field(c, "mem_clock_mhz");
                rec.temperature_c = int_field(c, "temperature_c");
                rec.throttle_reasons = int_field(c, "throttle_reasons");
            }
            e.measurements.push_back(rec);
        }
    }
    e.status = e.measurements.empty() ? EvalStatus::kLaunchFailed : EvalStatus::kPassed;
    e.error_text = errors;
    e.evidence_json = evidence.dump();
    auto ev = store.add_evaluation(e);
    if (!ev) return ev.error();
    out.evaluation_id = *ev;
    return out;
}

void add_baseline_stats(nlohmann::json& result) {
    if (!result.contains("modes") || !result["modes"].is_object()) return;
    for (auto& [mode, m] : result["modes"].items()) {
        if (!m.is_object() || !m.contains("samples_ns") || !m["samples_ns"].is_array()) continue;
        std::vector<double> samples;
        for (const auto& v : m["samples_ns"])
            if (v.is_number()) samples.push_back(v.get<double>());
        if (samples.empty()) continue;
        const TimingStats s = timing_stats(samples);
        m["stats"] = {{"n", s.count},
                      {"median_ns", s.median_ns},
                      {"p25_ns", s.q1_ns},
                      {"p75_ns", s.q3_ns},
                      {"iqr_ns", s.iqr_ns},
                      {"min_ns", s.min_ns},
                      {"max_ns", s.max_ns},
                      {"ci95_median_ns", {s.ci95_low_ns, s.ci95_high_ns}}};
    }
}

}  // namespace kforge::report
