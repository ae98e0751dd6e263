#include "dsl/lexer.h"

#include <cstdio>
#include <string>

#include "dsl/diagnostic.h"

namespace kforge::dsl {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

class Lexer {
public:
    Lexer(std::string_view src, std::string_view file) : src_(src), file_(file) {}

    Expected<std::vector<Token>> run() {
        std::vector<Token> out;
        while (true) {
            skip_space_and_comments();
            if (pos_ >= src_.size()) break;
            Expected<Token> t = next();
            if (!t) return t.error();
            out.push_back(*t);
        }
        out.push_back(Token{TokenKind::kEnd, {}, here(), 1});
        return out;
    }

private:
    SourceLoc here() const { return {line_, static_cast<int>(pos_ - line_start_) + 1}; }
    char peek(size_t ahead = 0) const {
        return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0';
    }

    void skip_space_and_comments() {
        while (pos_ < src_.size()) {
            char c = src_[pos_];
            if (c == '\n') {
                ++pos_;
                ++line_;
                line_start_ = pos_;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                ++pos_;
            } else if (c == '#') {
                while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
            } else {
                return;
            }
        }
    }

    Error error_at(SourceLoc loc, int length, std::string message) const {
        return source_error(src_, file_, loc, length, std::move(message));
    }

    Token make(TokenKind kind, size_t begin, SourceLoc loc) {
        return Token{kind, src_.substr(begin, pos_ - begin), loc, static_cast<int>(pos_ - begin)};
    }

    Expected<Token> next() {
        SourceLoc loc = here();
        size_t begin = pos_;
        char c = src_[pos_];
        if (shape_x_next_) {
            shape_x_next_ = false;
            ++pos_;
            return make(TokenKind::kTimes, begin, loc);
        }
        // inf, -inf, +inf: a float (the printer writes an infinite number so: masked_fill M[..] -inf)
        if ((c == '-' || c == '+') && src_.substr(pos_ + 1, 3) == "inf" && !is_ident_char(peek(4))) {
            pos_ += 4;
            return make(TokenKind::kFloat, begin, loc);
        }
        if (is_ident_start(c)) {
            while (is_ident_char(peek())) ++pos_;
            if (src_.substr(begin, pos_ - begin) == "inf") return make(TokenKind::kFloat, begin, loc);
            return make(TokenKind::kIdent, begin, loc);
        }
        if (is_digit(c) || ((c == '-' || c == '+') && (is_digit(peek(1)) || peek(1) == '.')) ||
            (c == '.' && is_digit(peek(1)))) {
            return number(begin, loc);
        }
        if (c == '-' && peek(1) == '>') {
            pos_ += 2;
            return make(TokenKind::kArrow, begin, loc);
        }
        if (c == '"') return string(loc);
        static constexpr std::string_view kPunct = "()[]{},;=";
        if (kPunct.find(c) != std::string_view::npos) {
            ++pos_;
            return make(TokenKind::kPunct, begin, loc);
        }
        auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7f) {
            return error_at(loc, 1, "unexpected character '" + std::string(1, c) + "'");
        }
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", byte);
        return error_at(loc, 1, std::string("unexpected byte ") + hex +
                                    (byte >= 0x80 ? " (non-ASCII; only comments may hold it)"
                                                  : " (a control character)"));
    }

    // INT | FLOAT; an integer directly followed by 'x' and a digit is a shape component.
    Expected<Token> number(size_t begin, SourceLoc loc) {
        if (src_[pos_] == '-' || src_[pos_] == '+') ++pos_;
        bool is_float = false;
        while (is_digit(peek())) ++pos_;
        if (peek() == '.') {
            is_float = true;
            ++pos_;
            if (!is_digit(peek())) return bad_number(begin, loc, "a digit after '.'");
            while (is_digit(peek())) ++pos_;
        }
        if (peek() == 'e' || peek() == 'E') {
            is_float = true;
            ++pos_;
            if (peek() == '-' || peek() == '+') ++pos_;
            if (!is_digit(peek())) return bad_number(begin, loc, "a digit in the exponent");
            while (is_digit(peek())) ++pos_;
        }
        Token t = make(is_float ? TokenKind::kFloat : TokenKind::kInt, begin, loc);
        if (!is_float && peek() == 'x' && is_digit(peek(1))) {
            shape_x_next_ = true;  // next() lexes the 'x' as kTimes
            return t;
        }
        if (is_ident_char(peek()) || peek() == '.') {
            return bad_number(begin, loc, "a space or punctuation after the number");
        }
        return t;
    }

    Error bad_number(size_t begin, SourceLoc loc, std::string_view what) {
        while (is_ident_char(peek()) || peek() == '.') ++pos_;
        std::string text = clip_text(src_.substr(begin, pos_ - begin));
        return error_at(loc, static_cast<int>(pos_ - begin),
                        "malformed number '" + text + "': expected " + std::string(what));
    }

    Expected<Token> string(SourceLoc loc) {
        size_t begin = ++pos_;
        while (pos_ < src_.size() && src_[pos_] != '"') {
            auto c = static_cast<unsigned char>(src_[pos_]);
            if (c == '\n' || c < 0x20 || c >= 0x7f || c == '\\') {
                if (c == '\n') return error_at(loc, 1, "unterminated string (it ends at the line end)");
                return error_at({loc.line, loc.col + static_cast<int>(pos_ - begin) + 1}, 1,
                                "strings hold printable ASCII only, without '\\'");
            }
            ++pos_;
        }
        if (pos_ >= src_.size()) return error_at(loc, 1, "unterminated string (missing '\"')");
        Token t{TokenKind::kString, src_.substr(begin, pos_ - begin), loc,
                static_cast<int>(pos_ - begin) + 2};
        ++pos_;
        return t;
    }

    std::string_view src_;
    std::string_view file_;
    size_t pos_ = 0;
    size_t line_start_ = 0;
    int line_ = 1;
    bool shape_x_next_ = false;  // an integer just ended in front of 'x' and a digit
};

}  // namespace

Expected<std::vector<Token>> lex(std::string_view source, std::string_view file_name) {
    return Lexer(source, file_name).run();
}

std::string describe(const Token& t) {
    switch (t.kind) {
        case TokenKind::kEnd: return "end of input";
        case TokenKind::kString: return "\"" + clip_text(t.text) + "\"";
        default: return "'" + clip_text(t.text) + "'";
    }
}

}  // namespace kforge::dsl
