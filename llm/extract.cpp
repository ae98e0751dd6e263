#include "llm/extract.h"

#include <algorithm>
#include <cctype>

namespace kforge::llm {
namespace {

std::string trim(std::string_view s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::vector<std::string> split_lines(std::string_view text) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start <= text.size()) {
        size_t nl = text.find('\n', start);
        if (nl == std::string_view::npos) nl = text.size();
        std::string line(text.substr(start, nl - start));
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(std::move(line));
        start = nl + 1;
    }
    return lines;
}

bool has_program_line(const std::string& body) {
    for (const auto& l : split_lines(body)) {
        if (trim(l).rfind("program ", 0) == 0) return true;
    }
    return false;
}

// "Rationale: x", "- rationale: x", "**Rationale:** x" -> "x"; empty when not a rationale line.
std::string rationale_of(const std::string& line) {
    std::string t = trim(line);
    while (!t.empty() && (t[0] == '-' || t[0] == '*' || t[0] == '>' || t[0] == ' ')) t.erase(0, 1);
    std::string l = lower(t);
    if (l.rfind("rationale", 0) != 0) return {};
    size_t colon = t.find(':');
    if (colon == std::string::npos) return {};
    std::string rest = t.substr(colon + 1);
    while (!rest.empty() && (rest[0] == '*' || rest[0] == ' ')) rest.erase(0, 1);
    return trim(rest);
}

}  // namespace

std::vector<ExtractedProgram> extract_programs(std::string_view reply) {
    std::vector<ExtractedProgram> out;
    const auto lines = split_lines(reply);
    size_t i = 0;
    size_t last_block_end = 0;  // first line after the previous block
    while (i < lines.size()) {
        std::string t = trim(lines[i]);
        if (t.rfind("```", 0) != 0) {
            ++i;
            continue;
        }
        std::string tag = lower(trim(t.substr(3)));
        size_t j = i + 1;
        std::string body;
        while (j < lines.size() && trim(lines[j]).rfind("```", 0) != 0) {
            body += lines[j] + "\n";
            ++j;
        }
        const bool wanted = tag == "kforge" || tag == "kf" || (tag.empty() && has_program_line(body));
        if (wanted && !trim(body).empty()) {
            ExtractedProgram p;
            p.text = body;
            p.index = static_cast<int>(out.size()) + 1;
            // The rationale: the nearest rationale line before the block (after the previous
            // block), else the first one after it (before the next fence).
            for (size_t k = i; p.rationale.empty() && k > last_block_end; --k) {
                p.rationale = rationale_of(lines[k - 1]);
            }
            for (size_t k = j + 1; p.rationale.empty() && k < lines.size() &&
                                   trim(lines[k]).rfind("```", 0) != 0;
                 ++k) {
                p.rationale = rationale_of(lines[k]);
            }
            out.push_back(std::move(p));
        }
        i = j + 1;
        last_block_end = std::min(i, lines.size());
    }
    return out;
}

}  // namespace kforge::llm
