// Inline SVG charts of the HTML report, drawn here as text (no script, no external resources).
#pragma once

#include <string>
#include <vector>

#include "report/model.h"

namespace kforge::report {

// Step curve of a problem's progress: best speedup over the reference baseline (or best time
// in us when no baseline was measured) against cumulative GPU-seconds; one <polyline> of class
// "progress". Empty string when no point has a best yet.
std::string svg_progress_chart(const ProblemReport& problem);

struct Bar {
    std::string label;  // escaped by the chart
    double value = 0;
};

// Horizontal bar chart, one <rect class="bar"> per bar, with a dashed reference line at
// `reference` (e.g. 1.0 for speedup, 100 for %SOL) when > 0. Empty string for no bars.
std::string svg_bar_chart(const std::string& title, const std::vector<Bar>& bars,
                          const std::string& unit, double reference);

}  // namespace kforge::report
