// redact_secrets: one left-to-right scan (no regex: replies may be megabytes, and std::regex
// recurses per character), after the configured secrets are replaced literally.
#include "llm/redact.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace kforge::llm {
namespace {

bool token_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == '+' || c == '/' || c == '=' || c == '~';
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Case-insensitive: does `text` at `i` start with `word` (lower case)?
bool starts_with_ci(std::string_view text, size_t i, std::string_view word) {
    if (i + word.size() > text.size()) return false;
    for (size_t k = 0; k < word.size(); ++k)
        if (std::tolower(static_cast<unsigned char>(text[i + k])) != word[k]) return false;
    return true;
}

size_t token_end(std::string_view text, size_t i) {
    while (i < text.size() && token_char(text[i])) ++i;
    return i;
}

// The value after a field name ending at `i`: optional closing quote, spaces, ':' or '=', spaces,
// an optional opening quote. Returns [begin, end) of the value, or begin == npos when no value.
// Unquoted, a value ends at a space unless `to_line_end` (an Authorization header's value is
// "Scheme credential").
std::pair<size_t, size_t> field_value(std::string_view text, size_t i, bool to_line_end) {
    auto skip = [&](auto pred) {
        while (i < text.size() && pred(text[i])) ++i;
    };
    skip([](char c) { return c == '"' || c == '\''; });
    skip([](char c) { return c == ' ' || c == '\t'; });
    if (i >= text.size() || (text[i] != ':' && text[i] != '=')) return {std::string_view::npos, 0};
    ++i;
    skip([](char c) { return c == ' ' || c == '\t'; });
    char quote = 0;
    if (i < text.size() && (text[i] == '"' || text[i] == '\'')) quote = text[i++];
    size_t begin = i;
    if (quote) {
        while (i < text.size() && text[i] != quote && text[i] != '\n') ++i;
    } else {
        while (i < text.size() && text[i] != '\n' && text[i] != '\r' && text[i] != ',' &&
               text[i] != ';' && text[i] != '&' && text[i] != '}' &&
               (to_line_end || text[i] != ' '))
            ++i;
    }
    return {begin, i};
}

constexpr std::array<std::string_view, 7> kFieldNames = {
    "x-api-key", "x-goog-api-key", "api-key", "api_key", "apikey", "authorization", "key"};

}  // namespace

std::string redact_secrets(std::string_view input, const std::vector<std::string>& secrets) {
    std::string text(input);
    for (const std::string& s : secrets) {
        if (s.size() < 4) continue;
        for (size_t at = text.find(s); at != std::string::npos; at = text.find(s, at)) {
            text.replace(at, s.size(), kRedacted);
            at += kRedacted.size();
        }
    }
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    const size_t n = text.size();
    while (i < n) {
        const bool boundary = i == 0 || !word_char(text[i - 1]);
        if (boundary) {
            // sk-XXXXXXXX (OpenAI, Anthropic sk-ant-...), AIzaXXXX (Google)
            for (std::string_view prefix : {std::string_view("sk-"), std::string_view("AIza")}) {
                if (text.compare(i, prefix.size(), prefix) != 0) continue;
                size_t end = token_end(text, i + prefix.size());
                if (end - i - prefix.size() >= 8) {
                    out += kRedacted;
                    i = end;
                    goto next;
                }
            }
            // Bearer / Basic credentials
            for (std::string_view scheme : {std::string_view("bearer "), std::string_view("basic ")}) {
                if (!starts_with_ci(text, i, scheme)) continue;
                size_t v = i + scheme.size();
                while (v < n && text[v] == ' ') ++v;
                size_t end = token_end(text, v);
                if (end > v) {
                    out.append(text, i, v - i);
                    out += kRedacted;
                    i = end;
                    goto next;
                }
            }
            // name: value, name=value, "name": "value"
            for (std::string_view name : kFieldNames) {
                if (!starts_with_ci(text, i, name)) continue;
                size_t after = i + name.size();
                if (after < n && word_char(text[after])) continue;
                if (name == "key" && (i == 0 || (text[i - 1] != '?' && text[i - 1] != '&' &&
                                                 text[i - 1] != '"' && text[i - 1] != '\'')))
                    continue;  // a bare "key" only as a URL parameter or a quoted JSON name
                auto [begin, end] = field_value(text, after, name == "authorization");
                if (begin == std::string_view::npos || end == begin) continue;
                if (text.compare(begin, kRedacted.size(), kRedacted) == 0) continue;
                out.append(text, i, begin - i);
                out += kRedacted;
                i = end;
                goto next;
            }
        }
        out += text[i++];
    next:;
    }
    return out;
}

}  // namespace kforge::llm
