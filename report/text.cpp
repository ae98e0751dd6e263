// Formatting helpers of the report renderers (report/text.h).
#include "report/text.h"

#include <cmath>
#include <cstdio>

namespace kforge::report {

std::string format_fixed(std::optional<double> value, int digits) {
    if (!value || !std::isfinite(*value)) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, *value);
    return buf;
}

std::string format_time_ns(std::optional<double> ns) {
    if (!ns || !std::isfinite(*ns)) return "-";
    double v = *ns;
    if (v >= 1e9) return format_fixed(v / 1e9, 3) + " s";
    if (v >= 1e6) return format_fixed(v / 1e6, 3) + " ms";
    if (v >= 1e3) return format_fixed(v / 1e3, 3) + " us";
    return format_fixed(v, 1) + " ns";
}

std::string format_speedup(std::optional<double> ratio) {
    if (!ratio) return "-";
    return format_fixed(ratio, 2) + "x";
}

std::string format_fraction(std::optional<double> fraction) {
    if (!fraction) return "-";
    return format_fixed(*fraction * 100.0, 1) + "%";
}

std::string format_percent(std::optional<double> percent) {
    if (!percent) return "-";
    return format_fixed(percent, 1) + "%";
}

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char ch : text) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += ch;
        }
    }
    return out;
}

std::string markdown_cell(std::string_view text) {
    std::string out;
    for (char ch : text) {
        switch (ch) {
            case '|': out += "\\|"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            case '\n':
            case '\r': out += ' '; break;
            default: out += ch;
        }
    }
    return out;
}

std::string truncate(std::string_view text, size_t max_chars) {
    if (text.size() <= max_chars) return std::string(text);
    return std::string(text.substr(0, max_chars)) + "...";
}

}  // namespace kforge::report
