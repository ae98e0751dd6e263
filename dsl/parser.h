// Parser of the kernel language (docs/language.md): source text -> Program (dsl/ast.h).
// The first pass of the dsl stage; the checker (dsl/check.h) runs on its result.
#pragma once

#include <string_view>

#include "common/expected.h"
#include "dsl/ast.h"

namespace kforge::dsl {

// Parses a whole program. Knob values are range-checked against the knob tables
// (dsl/knobs.h); defaults fill knobs not written. Errors carry where = "file:line:col", a
// message saying what was expected (with a "did you mean" for near-miss names), and detail =
// the source line with a caret. Never crashes or hangs, whatever the input.
Expected<Program> parse_program(std::string_view text, std::string_view file_name);

}  // namespace kforge::dsl
