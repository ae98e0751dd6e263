// Compile failures in the compiler's own words (compile/failure_message.h).
#include "compile/failure_message.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace kforge::compile {
namespace {

constexpr size_t kMaxLineChars = 300;
constexpr size_t kMaxCommandChars = 2000;

std::string trimmed(std::string_view s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    std::string t(s.substr(b, e - b));
    if (t.size() > kMaxLineChars) t = t.substr(0, kMaxLineChars) + "...";
    return t;
}

bool says_error(const std::string& line) {
    std::string lower = line;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // not the summary lines ("2 errors detected", "compilation terminated")
    if (lower.find("errors detected") != std::string::npos) return false;
    return lower.find("error:") != std::string::npos ||
           lower.find("error :") != std::string::npos ||
           lower.find("catastrophic error") != std::string::npos ||
           lower.find("fatal error") != std::string::npos;
}

std::vector<std::string> lines_of(std::string_view log) {
    std::vector<std::string> out;
    std::istringstream in{std::string(log)};
    for (std::string line; std::getline(in, line);)
        if (std::string t = trimmed(line); !t.empty()) out.push_back(t);
    return out;
}

}  // namespace

std::vector<std::string> first_error_lines(std::string_view log, size_t max_lines) {
    const std::vector<std::string> all = lines_of(log);
    std::vector<std::string> out;
    for (const std::string& l : all)
        if (says_error(l) && std::find(out.begin(), out.end(), l) == out.end()) {
            out.push_back(l);
            if (out.size() >= max_lines) return out;
        }
    if (!out.empty()) return out;
    for (size_t i = 0; i < all.size() && i < max_lines; ++i) out.push_back(all[i]);
    return out;
}

std::string missing_include(std::string_view log) {
    const std::string text(log);
    // nvcc's host preprocessor (gcc): "a.cu:1:10: fatal error: kernels/x.cuh: No such file or
    // directory"
    const std::string no_such = ": No such file or directory";
    for (size_t at = text.find(no_such); at != std::string::npos; at = text.find(no_such, at + 1)) {
        const size_t line_start = text.rfind('\n', at) == std::string::npos ? 0
                                                                             : text.rfind('\n', at) + 1;
        const std::string line = text.substr(line_start, at - line_start);
        const std::string tag = "error: ";
        const size_t e = line.rfind(tag);
        if (e != std::string::npos) return trimmed(line.substr(e + tag.size()));
    }
    // NVRTC and cicc: 'cannot open source file "kernels/x.cuh"'
    const std::string cannot = "cannot open source file \"";
    if (size_t at = text.find(cannot); at != std::string::npos) {
        const size_t from = at + cannot.size();
        const size_t to = text.find('"', from);
        if (to != std::string::npos) return text.substr(from, to - from);
    }
    return "";
}

std::string failure_message(const CompileResult& r) {
    if (r.status == CompileStatus::kOk) return "";
    std::string m(to_string(r.status));
    if (std::string file = missing_include(r.log); !file.empty())
        m += ": cannot find the header or template " + file +
             " (not in the compiler's include path: kforge's kernel templates or the CUTLASS "
             "headers are missing; KFORGE_HOME and KFORGE_CUTLASS_DIR say where they are)";
    const std::vector<std::string> lines = first_error_lines(r.log);
    if (lines.empty()) m += ": the compiler printed nothing";
    for (const std::string& l : lines) m += "\n  " + l;
    if (!r.command.empty())
        m += "\n  command: " + (r.command.size() > kMaxCommandChars
                                    ? r.command.substr(0, kMaxCommandChars) + "..."
                                    : r.command);
    return m;
}

}  // namespace kforge::compile
