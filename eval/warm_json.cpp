// The warm-up's request and report as JSON (a warm task's payload and its answer).
#include "eval/evaluate.h"
#include "eval/payload_json.h"
#include "problem/spec.h"

namespace kforge::eval {

nlohmann::ordered_json to_json(const WarmRequest& r) {
    nlohmann::ordered_json j;
    j["problem"] = problem_to_json(r.problem);
    j["program"] = r.program_text;
    j["seed"] = r.seed;
    j["tier"] = to_string(r.tier);
    j["first_case"] = r.first_case;
    if (r.max_cases != UINT64_MAX) j["max_cases"] = r.max_cases;
    return j;
}

Expected<WarmRequest> warm_request_from_json(const nlohmann::json& j) {
    if (!j.is_object()) return make_error("payload", "not an object");
    WarmRequest r;
    if (auto st = read_problem_and_program(j, r.problem, r.program_text); !st) return st.error();
    auto tier = payload_string(j, "tier", false, "full");
    if (!tier) return tier.error();
    auto t = eval_tier_from_string(*tier);
    if (!t) return make_error("payload.tier", "unknown tier '" + *tier + "'");
    r.tier = *t;
    for (auto [key, field] : {std::pair{"seed", &r.seed}, std::pair{"first_case", &r.first_case},
                              std::pair{"max_cases", &r.max_cases}}) {
        auto it = j.find(key);
        if (it == j.end()) continue;
        if (!it->is_number_unsigned())
            return make_error(std::string("payload.") + key, "not an unsigned integer");
        *field = it->get<uint64_t>();
    }
    return r;
}

nlohmann::ordered_json to_json(const WarmReport& w) {
    return {{"cases_total", w.cases_total}, {"computed", w.computed}, {"cached", w.cached},
            {"error", w.error},             {"context_lost", w.context_lost},
            {"wall_ms", w.wall_ms}};
}

Expected<WarmReport> warm_report_from_json(const nlohmann::json& j) {
    if (!j.is_object()) return make_error("warm report", "not an object");
    WarmReport w;
    try {
        w.cases_total = j.at("cases_total").get<uint64_t>();
        w.computed = j.at("computed").get<int>();
        w.cached = j.at("cached").get<int>();
        w.error = j.at("error").get<std::string>();
        w.context_lost = j.at("context_lost").get<bool>();
        w.wall_ms = j.at("wall_ms").get<double>();
    } catch (const nlohmann::json::exception& e) {
        return make_error("warm report", e.what());
    }
    return w;
}

}  // namespace kforge::eval
