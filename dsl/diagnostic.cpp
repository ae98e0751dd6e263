#include "dsl/diagnostic.h"

#include <algorithm>
#include <vector>

namespace kforge::dsl {

Error source_error(std::string_view source, std::string_view file_name, SourceLoc loc,
                   int length, std::string message) {
    std::string where = std::string(file_name) + ":" + std::to_string(loc.line) + ":" +
                        std::to_string(loc.col);
    // Find the line (1-based); loc may point one past the last line at end of input.
    size_t begin = 0;
    for (int line = 1; line < loc.line && begin < source.size(); ++line) {
        size_t nl = source.find('\n', begin);
        if (nl == std::string_view::npos) { begin = source.size(); break; }
        begin = nl + 1;
    }
    size_t end = std::min(source.find('\n', begin), source.size());
    std::string_view line = source.substr(begin, end - begin);
    // On long lines show a window of at most 160 bytes around the column.
    int col = std::max(loc.col, 1);
    std::string shown;
    if (line.size() > 160) {
        size_t from = col > 80 ? static_cast<size_t>(col - 80) : 0;
        from = std::min(from, line.size());
        line = line.substr(from, 160);
        if (from > 0) {
            shown = "...";
            col = col - static_cast<int>(from) + 3;
        }
    }
    std::string caret(shown.size(), ' ');
    for (size_t i = 0; i < line.size(); ++i) {
        auto c = static_cast<unsigned char>(line[i]);
        bool printable = c == '\t' || (c >= 0x20 && c < 0x7f);
        shown.push_back(printable ? static_cast<char>(c) : '?');
        if (caret.size() + 1 < static_cast<size_t>(col)) caret.push_back(c == '\t' ? '\t' : ' ');
    }
    while (caret.size() + 1 < static_cast<size_t>(col) && caret.size() <= shown.size()) {
        caret.push_back(' ');
    }
    caret.append(static_cast<size_t>(std::clamp(length, 1, 80)), '^');
    return make_error(std::move(where), std::move(message), "    " + shown + "\n    " + caret);
}

std::string clip_text(std::string_view text, size_t max) {
    if (text.size() <= max) return std::string(text);
    return std::string(text.substr(0, max)) + "...";
}

namespace {
size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}
}  // namespace

std::string closest_name(std::string_view word, const std::vector<std::string_view>& candidates) {
    if (word.empty() || word.size() > 64) return {};
    size_t limit = word.size() <= 3 ? 1 : 2;
    size_t best = limit + 1;
    std::string_view best_name;
    for (std::string_view c : candidates) {
        size_t d = edit_distance(word, c);
        if (d < best && d < c.size()) {
            best = d;
            best_name = c;
        }
    }
    return std::string(best_name);
}

}  // namespace kforge::dsl
