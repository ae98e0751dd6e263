#include "eval/payload_json.h"

#include "problem/spec.h"

namespace kforge::eval {

Expected<Problem> problem_from_payload(const nlohmann::json& payload) {
    auto spec = payload.find("problem");
    if (spec == payload.end() || !spec->is_object())
        return make_error("payload.problem", "missing or not a problem spec object");
    return parse_problem(spec->dump(), "payload.problem");
}

}  // namespace kforge::eval
