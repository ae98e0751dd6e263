// Fields of a task payload (the JSON form of evaluate, time and warm requests).
#include "eval/payload_json.h"

#include "problem/spec.h"

namespace kforge::eval {

Expected<Problem> problem_from_payload(const nlohmann::json& payload) {
    auto spec = payload.find("problem");
    if (spec == payload.end() || !spec->is_object())
        return make_error("payload.problem", "missing or not a problem spec object");
    return parse_problem(spec->dump(), "payload.problem");
}

Expected<std::string> payload_string(const nlohmann::json& j, const char* key, bool required,
                                     std::string fallback) {
    auto it = j.find(key);
    if (it == j.end()) {
        if (required) return make_error(std::string("payload.") + key, "missing");
        return fallback;
    }
    if (!it->is_string()) return make_error(std::string("payload.") + key, "not a string");
    return it->get<std::string>();
}

Status read_problem_and_program(const nlohmann::json& j, Problem& problem, std::string& program) {
    auto p = problem_from_payload(j);
    if (!p) return p.error();
    auto text = payload_string(j, "program", true);
    if (!text) return text.error();
    problem = std::move(*p);
    program = std::move(*text);
    return Ok{};
}

}  // namespace kforge::eval
