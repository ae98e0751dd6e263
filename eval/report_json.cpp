// The JSON form of an evaluation report (kforge eval --json, the worker's answer) and its
// inverse, report_from_json(), with which the supervising process rebuilds a worker's report.
#include <cmath>

#include "device/device_json.h"
#include "eval/evaluate.h"

namespace kforge::eval {
namespace {

// A field read back: `fallback` when absent or null (a non-finite number is written as null); a
// field of another type throws json::type_error, which the readers below turn into an Error.
template <class Json, class T>
T field(const Json& j, const char* key, T fallback) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    return it->template get<T>();
}

template <class Json>
std::string text_field(const Json& j, const char* key) {
    return field(j, key, std::string());
}

nlohmann::ordered_json samples_json(const std::vector<TimingSample>& samples) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const TimingSample& s : samples) a.push_back(to_json(s));
    return a;
}

Expected<std::vector<TimingSample>> samples_from(const nlohmann::json& j, const char* key) {
    std::vector<TimingSample> out;
    auto it = j.find(key);
    if (it == j.end()) return out;
    if (!it->is_array()) return make_error(std::string("report.") + key, "not an array");
    for (const auto& e : *it) {
        if (!e.is_object() || !e.contains("time_ns") || !e["time_ns"].is_number())
            return make_error(std::string("report.") + key, "a sample without time_ns");
        TimingSample s;
        s.time_ns = e["time_ns"].get<double>();
        s.sm_clock_mhz = field(e, "sm_clock_mhz", 0);
        s.mem_clock_mhz = field(e, "mem_clock_mhz", 0);
        s.temperature_c = field(e, "temperature_c", 0);
        s.throttle_reasons = field(e, "throttle_reasons", uint64_t{0});
        out.push_back(s);
    }
    return out;
}

TimingStats stats_from(const nlohmann::json& j) {
    TimingStats s;
    if (!j.is_object()) return s;
    s.count = field(j, "count", 0);
    s.median_ns = field(j, "median_ns", 0.0);
    s.q1_ns = field(j, "q1_ns", 0.0);
    s.q3_ns = field(j, "q3_ns", 0.0);
    s.iqr_ns = field(j, "iqr_ns", 0.0);
    s.mean_ns = field(j, "mean_ns", 0.0);
    s.min_ns = field(j, "min_ns", 0.0);
    s.max_ns = field(j, "max_ns", 0.0);
    s.ci95_low_ns = field(j, "ci95_low_ns", 0.0);
    s.ci95_high_ns = field(j, "ci95_high_ns", 0.0);
    return s;
}

// The "gates" array of a report (or of stored evidence); an Error when it is not an array of
// objects.
// (nlohmann::json from a worker, ordered_json from the store, which keeps the evidence's order.)
template <class Json>
Expected<std::vector<GateOutcome>> gates_from(const Json& gates) {
    if (!gates.is_array()) return make_error("report.gates", "not an array");
    std::vector<GateOutcome> out;
    for (const auto& g : gates) {
        if (!g.is_object()) return make_error("report.gates", "a gate is not an object");
        GateOutcome o;
        o.gate = text_field(g, "gate");
        o.passed = field(g, "passed", false);
        o.skipped = field(g, "skipped", false);
        o.status = eval_status_from_string(field(g, "status", std::string("passed")))
                       .value_or(EvalStatus::kPassed);
        o.message = text_field(g, "message");
        if (auto e = g.find("evidence"); e != g.end() && e->is_object()) {
            o.evidence = *e;
            o.wall_ms = field(*e, "wall_ms", 0.0);
        }
        out.push_back(std::move(o));
    }
    return out;
}

nlohmann::ordered_json kernels_json(const std::vector<KernelSummary>& kernels) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const KernelSummary& k : kernels)
        a.push_back({{"name", k.name}, {"kind", k.kind}, {"ops", k.ops}, {"stores", k.stores}});
    return a;
}

// The "kernels" array (a field of the wrong type throws json::type_error: report_from_json).
Expected<std::vector<KernelSummary>> kernels_from(const nlohmann::json& j) {
    if (!j.is_array()) return make_error("report.kernels", "not an array");
    std::vector<KernelSummary> out;
    for (const auto& e : j) {
        if (!e.is_object() || !e.contains("name"))
            return make_error("report.kernels", "a kernel without a name");
        KernelSummary k;
        k.name = e["name"].get<std::string>();
        k.kind = text_field(e, "kind");
        k.ops = field(e, "ops", std::vector<size_t>{});
        k.stores = field(e, "stores", std::vector<std::string>{});
        out.push_back(std::move(k));
    }
    return out;
}

Expected<EvalReport> read_report(const nlohmann::json& j) {
    if (!j.is_object()) return make_error("report", "not an object");
    EvalReport r;
    auto status = eval_status_from_string(text_field(j, "status"));
    if (!status) return make_error("report.status", "missing or unknown");
    r.status = *status;
    r.message = text_field(j, "message");
    r.simulated = field(j, "simulated", false);
    if (auto d = j.find("device"); d != j.end() && d->is_object()) {
        auto info = device_info_from_json(*d);
        if (!info) return info.error();
        r.device = *info;
    }
    if (auto t = eval_tier_from_string(field(j, "tier", std::string("quick")))) r.tier = *t;
    r.program_hash = text_field(j, "program_hash");
    r.shapes_key = text_field(j, "shapes");
    r.flops = field(j, "flops", 0.0);
    r.bytes = field(j, "bytes", 0.0);
    r.cached = field(j, "cached", false);
    r.wall_ms = field(j, "wall_ms", 0.0);
    if (j.contains("evaluation_id") && j["evaluation_id"].is_number_integer())
        r.evaluation_id = j["evaluation_id"].get<int64_t>();
    r.environment_error = field(j, "environment_error", false);
    r.context_lost = field(j, "context_lost", false);
    r.store_error = text_field(j, "store_error");
    if (auto notes = j.find("worker_notes"); notes != j.end() && notes->is_array())
        for (const auto& n : *notes)
            if (n.is_string()) r.worker_notes.push_back(n.get<std::string>());
    if (auto gates = j.find("gates"); gates != j.end()) {
        auto read = gates_from(*gates);
        if (!read) return read.error();
        r.gates = std::move(*read);
    }
    auto samples = samples_from(j, "samples");
    if (!samples) return samples.error();
    r.samples = std::move(*samples);
    auto base = samples_from(j, "baseline_samples");
    if (!base) return base.error();
    r.baseline_samples = std::move(*base);
    if (auto k = j.find("kernel_times_ns"); k != j.end() && !k->is_null()) {
        if (!k->is_array()) return make_error("report.kernel_times_ns", "not an array");
        for (const auto& e : *k) {
            if (!e.is_number()) return make_error("report.kernel_times_ns", "not a number");
            r.kernel_times_ns.push_back(e.get<double>());
        }
    }
    if (auto k = j.find("kernels"); k != j.end() && !k->is_null()) {
        auto kernels = kernels_from(*k);
        if (!kernels) return kernels.error();
        r.kernels = std::move(*kernels);
    }
    if (auto t = j.find("timing"); t != j.end()) r.stats = stats_from(*t);
    if (auto t = j.find("baseline_timing"); t != j.end()) r.baseline_stats = stats_from(*t);
    r.cuda_source = text_field(j, "cuda_source");
    r.plan_json = text_field(j, "plan_json");
    return r;
}

}  // namespace

nlohmann::ordered_json to_json(const TimingSample& s) {
    return {{"time_ns", s.time_ns},           {"sm_clock_mhz", s.sm_clock_mhz},
            {"mem_clock_mhz", s.mem_clock_mhz}, {"temperature_c", s.temperature_c},
            {"throttle_reasons", s.throttle_reasons}};
}

nlohmann::ordered_json to_json(const TimingStats& s) {
    return {{"count", s.count},     {"median_ns", s.median_ns},     {"iqr_ns", s.iqr_ns},
            {"q1_ns", s.q1_ns},     {"q3_ns", s.q3_ns},             {"mean_ns", s.mean_ns},
            {"ci95_low_ns", s.ci95_low_ns}, {"ci95_high_ns", s.ci95_high_ns},
            {"min_ns", s.min_ns},   {"max_ns", s.max_ns}};
}

nlohmann::ordered_json to_json(const EvalReport& r, bool with_artefacts) {
    nlohmann::ordered_json j;
    j["status"] = std::string(to_string(r.status));
    j["message"] = r.message;
    j["simulated"] = r.simulated;
    j["device"] = to_json(r.device);
    j["tier"] = std::string(to_string(r.tier));
    j["program_hash"] = r.program_hash;
    j["shapes"] = r.shapes_key;
    j["flops"] = r.flops;
    j["bytes"] = r.bytes;
    j["cached"] = r.cached;
    j["wall_ms"] = r.wall_ms;
    if (r.evaluation_id) j["evaluation_id"] = *r.evaluation_id;
    if (r.environment_error) j["environment_error"] = true;
    if (r.context_lost) j["context_lost"] = true;
    if (!r.store_error.empty()) j["store_error"] = r.store_error;
    if (!r.worker_notes.empty()) j["worker_notes"] = r.worker_notes;
    j["gates"] = nlohmann::ordered_json::array();
    for (const GateOutcome& g : r.gates) {
        nlohmann::ordered_json evidence =
            g.evidence.is_object() ? g.evidence : nlohmann::ordered_json::object();
        evidence["wall_ms"] = g.wall_ms;
        j["gates"].push_back({{"gate", g.gate}, {"passed", g.passed}, {"skipped", g.skipped},
                              {"status", std::string(to_string(g.status))},
                              {"message", g.message}, {"evidence", evidence}});
    }
    if (r.stats.count > 0) {
        j["timing"] = to_json(r.stats);
        j["samples"] = samples_json(r.samples);
        if (r.baseline_stats.count > 0) {
            j["baseline_timing"] = to_json(r.baseline_stats);
            j["baseline_samples"] = samples_json(r.baseline_samples);
        }
    }
    if (!r.kernel_times_ns.empty()) j["kernel_times_ns"] = r.kernel_times_ns;
    if (!r.kernels.empty()) j["kernels"] = kernels_json(r.kernels);
    if (with_artefacts) {
        j["cuda_source"] = r.cuda_source;
        j["plan_json"] = r.plan_json;
    }
    return j;
}

Expected<EvalReport> report_from_json(const nlohmann::json& j) {
    try {
        return read_report(j);
    } catch (const nlohmann::json::exception& e) {  // a field of the wrong type
        return make_error("report", e.what());
    }
}

std::vector<GateOutcome> gates_from_evidence(std::string_view evidence_json) {
    auto evidence = nlohmann::ordered_json::parse(evidence_json, nullptr, false);
    if (!evidence.is_object() || !evidence.contains("gates")) return {};
    try {
        auto gates = gates_from(evidence["gates"]);
        return gates ? std::move(*gates) : std::vector<GateOutcome>{};
    } catch (const nlohmann::json::exception&) {
        return {};
    }
}

}  // namespace kforge::eval
