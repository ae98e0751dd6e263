// A tool's arguments checked against its input schema before the tool runs, so that a bad
// argument is an MCP tool error naming the field ("arguments.tier: expected one of quick,
// full"), never a crash. The schemas are kforge's own and flat (an object of named properties:
// string, integer, number, boolean, an array of strings, an enum, minimum/maximum), so only
// that subset of JSON Schema is checked; a schema using more is an internal error of kforge.
#pragma once

#include <nlohmann/json.hpp>

#include "common/expected.h"

namespace kforge::mcp {

// Ok, or an Error whose `where` names the argument ("arguments.problem").
Status check_arguments(const nlohmann::json& schema, const nlohmann::json& arguments);

}  // namespace kforge::mcp
