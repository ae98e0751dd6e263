// User errors that point into kernel-language source: "file:line:col", a message, and the
// source line with a caret under the offending text (Error.detail). Used by the lexer, the
// parser, and the checker where it has the source text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "dsl/ast.h"

namespace kforge::dsl {

// An Error at `loc` in `source`; the caret line underlines `length` bytes (at least one).
Error source_error(std::string_view source, std::string_view file_name, SourceLoc loc,
                   int length, std::string message);

// `text` cut to `max` bytes with "..." appended when longer: source text echoed in messages.
std::string clip_text(std::string_view text, size_t max = 40);

// The name in `candidates` closest to `word` by edit distance, or "" when none is close.
std::string closest_name(std::string_view word, const std::vector<std::string_view>& candidates);

}  // namespace kforge::dsl
