// The problem spec (docs/problem-spec.md): JSON text -> validated Problem, and back.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "common/expected.h"
#include "problem/problem.h"

namespace kforge {

// Limits that keep every later stage's arithmetic exact and bounded (docs/problem-spec.md).
inline constexpr int64_t kMaxDimValue = int64_t{1} << 40;
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 50;
inline constexpr int kMaxRank = 8;
inline constexpr int kMaxJsonDepth = 64;
// Ops and input tensors of one problem: every stage after the parser (shape inference, the
// checker's proof, the planner, the interpreter, input generation, the GPU reference) does work
// per op and per tensor, some of it per pair of them.
inline constexpr int kMaxGraphOps = 4096;
inline constexpr int kMaxGraphInputs = 4096;

// Parses and validates one spec: JSON syntax, keys and types, ops and attributes, dims, tensor
// names, shape and dtype inference for every op, a stable topological sort of the graph (cycles,
// duplicate definitions and dangling intermediates rejected) and default tolerances by policy.
// Every problem is an Error whose `where` is the JSON path ("graph[2].inputs[1]"); a malformed
// text gives where "line L, column C" and a detail naming `source_name` with a caret.
// Never throws, never recurses on the input's nesting.
Expected<Problem> parse_problem(std::string_view json_text, std::string_view source_name);

// Reads `path` and parses it; a file that cannot be read gives an Error whose where is the path.
Expected<Problem> load_problem(const std::string& path);

// The spec of a validated problem; parse_problem(problem_to_json(p).dump()) gives back p
// (normalized_shape is written as the input's trailing dim names, so it follows rebinding).
nlohmann::ordered_json problem_to_json(const Problem& problem);

// The tolerance a policy gets when the spec states none (table in docs/problem-spec.md).
Tolerance default_tolerance(PrecisionPolicy policy);

// The cap on the worst |out - ref| at |ref| = 1: max_error, or 100 * (atol + rtol) where
// max_error is 0 (then the gates scale it with |ref|: 100 * (atol + rtol * |ref|) per element).
double effective_max_error(const Tolerance& tolerance);

}  // namespace kforge
