// Formatting helpers shared by the report renderers: numbers with units, and escaping.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kforge::report {

// "12.345 us", "1.234 ms", "812 ns"; "-" for nullopt.
std::string format_time_ns(std::optional<double> ns);
// printf("%.<digits>f"); "-" for nullopt.
std::string format_fixed(std::optional<double> value, int digits);
// "1.53x"; "-" for nullopt.
std::string format_speedup(std::optional<double> ratio);
// "42.1%" of a fraction in [0, 1] (fraction) or of a percentage (percent).
std::string format_fraction(std::optional<double> fraction);
std::string format_percent(std::optional<double> percent);

// & < > " ' -> entities: every text from the store passes through it in HTML.
std::string html_escape(std::string_view text);
// Markdown table cells: escapes '|', '<', '>', '&' and folds newlines to spaces.
std::string markdown_cell(std::string_view text);

// At most `max_chars` characters, with "..." when cut.
std::string truncate(std::string_view text, size_t max_chars);

}  // namespace kforge::report
