// The problem of a task payload (evaluate, time and warm requests in their JSON form).
#pragma once

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "problem/problem.h"

namespace kforge::eval {

// The problem spec object under "problem" of a task payload (errors name payload.problem).
Expected<Problem> problem_from_payload(const nlohmann::json& payload);

}  // namespace kforge::eval
