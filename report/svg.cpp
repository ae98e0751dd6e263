// SVG charts (report/svg.h).
#include "report/svg.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "report/text.h"

namespace kforge::report {
namespace {

std::string num(double v) { return format_fixed(v, 1); }

constexpr const char* kPalette[] = {"#1f6feb", "#d62728", "#2ca02c", "#9467bd",
                                    "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
constexpr size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

// The tick spacing of axis_ticks: 1, 2 or 5 x 10^k, at least (hi - lo) / count.
double nice_step(double lo, double hi, int count) {
    double raw = (hi - lo) / std::max(count, 1);
    if (!(raw > 0) || !std::isfinite(raw)) return 1.0;
    double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0})
        if (m * mag >= raw * (1 - 1e-9)) return m * mag;
    return 10.0 * mag;
}

// Digits that tell ticks `step` apart.
int tick_digits(double step) {
    return std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 9);
}

// [lo, hi] widened to multiples of its tick step.
std::pair<double, double> snapped(double lo, double hi, int count) {
    if (!(hi > lo)) hi = lo + (lo != 0 ? std::abs(lo) * 0.1 : 1.0);
    double step = nice_step(lo, hi, count);
    return {std::floor(lo / step + 1e-9) * step, std::ceil(hi / step - 1e-9) * step};
}

std::string line(const char* cls, double x1, double y1, double x2, double y2,
                 const std::string& style) {
    return "<line class=\"" + std::string(cls) + "\" x1=\"" + num(x1) + "\" y1=\"" + num(y1) +
           "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) + "\" " + style + "/>";
}

std::string text(const std::string& cls, double x, double y, const char* anchor,
                 const std::string& body) {
    return "<text class=\"" + cls + "\" x=\"" + num(x) + "\" y=\"" + num(y) +
           "\" text-anchor=\"" + anchor + "\">" + body + "</text>";
}

constexpr const char* kAxisStyle = "stroke=\"#444\" stroke-width=\"1\"";
constexpr const char* kRefStyle = "stroke=\"#777\" stroke-dasharray=\"4 3\"";

}  // namespace

std::vector<double> axis_ticks(double lo, double hi, int count) {
    std::vector<double> ticks;
    if (!(hi >= lo) || !std::isfinite(lo) || !std::isfinite(hi)) return ticks;
    double step = nice_step(lo, hi, count);
    for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1)
        ticks.push_back(std::abs(k * step) < step * 1e-9 ? 0.0 : k * step);
    return ticks;
}

std::string svg_step_chart(const StepChart& c) {
    double x_max = 0, y_lo = 0, y_hi = 0;
    bool any = false;
    for (const StepSeries& s : c.series)
        for (const auto& [x, y] : s.points) {
            y_lo = any ? std::min(y_lo, y) : y;
            y_hi = any ? std::max(y_hi, y) : y;
            x_max = std::max(x_max, x);
            any = true;
        }
    if (!any) return "";
    if (c.y_reference) y_lo = std::min(y_lo, *c.y_reference), y_hi = std::max(y_hi, *c.y_reference);
    if (c.y_from_zero) y_lo = std::min(0.0, y_lo);
    double pad = (y_hi - y_lo) * 0.05;
    auto [ylo, yhi] = snapped(c.y_from_zero ? y_lo : y_lo - pad, y_hi + pad, 5);
    auto [xlo, xhi] = snapped(0.0, x_max > 0 ? x_max : 1.0, 6);
    size_t labelled = std::count_if(c.series.begin(), c.series.end(),
                                    [](const StepSeries& s) { return !s.label.empty(); });
    const double w = 560, left = 64, right = 16, top = 26, plot_h = 180;
    const double bottom = top + plot_h, h = bottom + 40 + 16.0 * static_cast<double>(labelled);
    auto sx = [&](double x) { return left + (x - xlo) / (xhi - xlo) * (w - left - right); };
    auto sy = [&](double y) { return top + (1.0 - (y - ylo) / (yhi - ylo)) * plot_h; };
    std::ostringstream o;
    o << "<svg class=\"chart steps\" width=\"" << num(w) << "\" height=\"" << num(h)
      << "\" viewBox=\"0 0 " << num(w) << " " << num(h)
      << "\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\">";
    o << "<title>" << html_escape(c.title) << "</title>";
    o << "<rect x=\"0\" y=\"0\" width=\"" << num(w) << "\" height=\"" << num(h)
      << "\" fill=\"#fff\"/>";
    o << text("chart-title", left, top - 10, "start",
              html_escape(c.title) + (c.y_title.empty() ? "" : ": " + html_escape(c.y_title)));
    o << line("axis", left, bottom, w - right, bottom, kAxisStyle);
    o << line("axis", left, top, left, bottom, kAxisStyle);
    int yd = tick_digits(nice_step(ylo, yhi, 5)), xd = tick_digits(nice_step(xlo, xhi, 6));
    for (double t : axis_ticks(ylo, yhi, 5)) {
        o << line("grid", left - 3, sy(t), w - right, sy(t), "stroke=\"#eee\"");
        o << text("tick", left - 6, sy(t) + 4, "end", format_fixed(t, yd));
    }
    for (double t : axis_ticks(xlo, xhi, 6)) {
        o << line("axis", sx(t), bottom, sx(t), bottom + 3, kAxisStyle);
        o << text("tick", sx(t), bottom + 15, "middle", format_fixed(t, xd));
    }
    o << text("axis-title", (left + w - right) / 2, bottom + 30, "middle", html_escape(c.x_title));
    if (c.y_reference)
        o << line("ref", left, sy(*c.y_reference), w - right, sy(*c.y_reference), kRefStyle);
    size_t legend_row = 0;
    for (size_t i = 0; i < c.series.size(); ++i) {
        const StepSeries& s = c.series[i];
        if (s.points.empty()) continue;
        std::string color = kPalette[i % kPaletteSize];
        // The best holds until the next point.
        o << "<polyline class=\"" << c.curve_class << "\" fill=\"none\" stroke=\"" << color
          << "\" stroke-width=\"2\" points=\"" << num(sx(s.points[0].first)) << ","
          << num(sy(s.points[0].second));
        double prev = s.points[0].second;
        for (const auto& [x, y] : s.points) {
            o << " " << num(sx(x)) << "," << num(sy(prev)) << " " << num(sx(x)) << ","
              << num(sy(y));
            prev = y;
        }
        o << "\"/>";
        for (const auto& [x, y] : s.points)
            o << "<circle class=\"pt\" cx=\"" << num(sx(x)) << "\" cy=\"" << num(sy(y))
              << "\" r=\"2.5\" fill=\"" << color << "\"/>";
        if (s.label.empty()) continue;
        double ly = bottom + 48 + 16.0 * static_cast<double>(legend_row++);
        o << line("legend-key", left, ly - 4, left + 24, ly - 4,
                  "stroke=\"" + color + "\" stroke-width=\"2\"");
        o << text("legend", left + 30, ly, "start", html_escape(s.label));
    }
    o << "</svg>";
    return o.str();
}

std::string svg_document(const std::string& svg) {
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    if (svg.starts_with("<svg "))
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" " + svg.substr(5);
    else
        out += svg;
    return out + "\n";
}

std::string svg_progress_chart(const ProblemReport& p) {
    bool speedup = !p.reference_baseline.empty();
    StepChart c;
    c.title = p.name;
    c.y_title = speedup ? "best speedup over baseline:" + p.reference_baseline
                        : "best time (us)";
    c.x_title = "cumulative GPU-seconds";
    c.curve_class = "progress";
    if (speedup) c.y_reference = 1.0;
    StepSeries s;
    for (const ProgressPoint& pt : p.progress) {
        if (speedup && pt.best_speedup) s.points.emplace_back(pt.gpu_s, *pt.best_speedup);
        if (!speedup && pt.best_time_ns) s.points.emplace_back(pt.gpu_s, *pt.best_time_ns / 1e3);
    }
    c.series.push_back(std::move(s));
    return svg_step_chart(c);
}

std::string svg_bar_chart(const std::string& title, const std::vector<Bar>& bars,
                          const std::string& unit, double reference) {
    if (bars.empty()) return "";
    const double w = 640, row = 22, left = 220, right = 80, top = 28;
    double h = top + row * static_cast<double>(bars.size()) + 12;
    double v_max = reference;
    for (const Bar& b : bars) v_max = std::max(v_max, b.value);
    v_max = v_max > 0 ? v_max * 1.05 : 1.0;
    auto sx = [&](double v) { return left + v / v_max * (w - left - right); };
    std::ostringstream o;
    o << "<svg class=\"chart bars\" width=\"" << num(w)
      << "\" height=\"" << num(h) << "\" viewBox=\"0 0 " << num(w) << " " << num(h)
      << "\" role=\"img\"><title>" << html_escape(title) << "</title>";
    o << "<text x=\"4\" y=\"16\" class=\"chart-title\">" << html_escape(title) << "</text>";
    for (size_t i = 0; i < bars.size(); ++i) {
        double y = top + row * static_cast<double>(i);
        double v = std::max(bars[i].value, 0.0);
        o << "<text x=\"" << num(left - 6) << "\" y=\"" << num(y + 14) << "\" text-anchor=\"end\">"
          << html_escape(truncate(bars[i].label, 32)) << "</text>";
        o << "<rect class=\"bar\" x=\"" << num(left) << "\" y=\"" << num(y + 3) << "\" width=\""
          << num(sx(v) - left) << "\" height=\"" << num(row - 6) << "\"/>";
        o << "<text x=\"" << num(sx(v) + 4) << "\" y=\"" << num(y + 14) << "\">"
          << format_fixed(bars[i].value, 2) << html_escape(unit) << "</text>";
    }
    if (reference > 0)
        o << "<line class=\"ref\" x1=\"" << num(sx(reference)) << "\" y1=\"" << num(top)
          << "\" x2=\"" << num(sx(reference)) << "\" y2=\"" << num(h - 8) << "\"/>";
    o << "</svg>";
    return o.str();
}

}  // namespace kforge::report
