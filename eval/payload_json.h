// Fields of a task payload (evaluate, time and warm requests in their JSON form); errors name
// the field ("payload.tier").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "problem/problem.h"

namespace kforge::eval {

// The problem spec object under "problem" of a task payload (errors name payload.problem).
Expected<Problem> problem_from_payload(const nlohmann::json& payload);

// The string under `key`: `fallback` when absent and not `required`; an Error when absent and
// required, or not a string.
Expected<std::string> payload_string(const nlohmann::json& payload, const char* key,
                                     bool required, std::string fallback = {});

// The payload's "problem" and "program" (both required), as evaluate and warm tasks read them.
Status read_problem_and_program(const nlohmann::json& payload, Problem& problem,
                                std::string& program);

}  // namespace kforge::eval
