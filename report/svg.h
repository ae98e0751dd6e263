// SVG charts of the reports, drawn here as text (no script, no external resources): the
// HTML report inlines them, the run comparison (report/compare.h) also writes them as files.
// The one plotting code of kforge: bench/ summaries call `kforge report` for their curves.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/model.h"

namespace kforge::report {

// One curve of a step chart: points in x order; the y of a point holds until the next point.
struct StepSeries {
    std::string label;  // legend text (escaped by the chart); "" draws no legend entry
    std::vector<std::pair<double, double>> points;
};

struct StepChart {
    std::string title;    // the <title> and the caption above the plot
    std::string x_title;  // under the x axis
    std::string y_title;  // beside the caption
    std::vector<StepSeries> series;
    std::optional<double> y_reference;  // dashed horizontal line (1.0 for a speedup)
    bool y_from_zero = true;            // false: the y axis spans the data (and the reference)
    std::string curve_class = "curve";  // class of each <polyline>
};

// Step curves, one <polyline class="CURVE_CLASS"> per series with points, in a color of its
// own (presentation attributes, so the chart also renders as a file), from x = 0 to the
// series' last point; axes with tick values (<text class="tick">), and a legend (one
// <text class="legend"> per labelled series). Empty string when no series has a point.
std::string svg_step_chart(const StepChart& chart);

// `svg` (one of this file's charts) as a standalone .svg file: the XML declaration and the SVG
// namespace added.
std::string svg_document(const std::string& svg);

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

// Tick values for an axis over [lo, hi]: multiples of 1, 2 or 5 x 10^k, about `count` of them.
std::vector<double> axis_ticks(double lo, double hi, int count);

}  // namespace kforge::report
