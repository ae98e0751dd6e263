// Lexer of the kernel language (docs/language.md): source text -> tokens with locations.
// Runs before the parser; the whole input is tokenized up front, stopping at the first error.
#pragma once

#include <string_view>
#include <vector>

#include "common/expected.h"
#include "dsl/ast.h"

namespace kforge::dsl {

enum class TokenKind {
    kIdent,     // [A-Za-z_][A-Za-z0-9_]*
    kInt,       // 128, -3, +7 (a sign only where written)
    kFloat,     // 1.5, -0.01, 1e-5, 2.5E+3
    kString,    // "text": printable ASCII, no '"' or '\' inside; text excludes the quotes
    kPunct,     // one of ( ) [ ] { } , ; =
    kTimes,     // the 'x' between the integers of a shape: 128x256x64
    kArrow,     // ->
    kEnd,       // end of input
};

struct Token {
    TokenKind kind = TokenKind::kEnd;
    std::string_view text;  // points into the source; for kString without the quotes
    SourceLoc loc;
    int length = 1;         // bytes in the source, for carets
};

// Tokens of `source`, ending in one kEnd token. Errors (an unexpected or non-ASCII byte, an
// unterminated string, a malformed number) carry file:line:col and a caret.
Expected<std::vector<Token>> lex(std::string_view source, std::string_view file_name);

// How a token reads in a message: 'tile', "text", or "end of input".
std::string describe(const Token& t);

}  // namespace kforge::dsl
