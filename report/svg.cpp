// Inline SVG charts (report/svg.h).
#include "report/svg.h"

#include <algorithm>
#include <sstream>

#include "report/text.h"

namespace kforge::report {
namespace {

std::string num(double v) { return format_fixed(v, 1); }

}  // namespace

std::string svg_progress_chart(const ProblemReport& p) {
    bool speedup = !p.reference_baseline.empty();
    std::vector<std::pair<double, double>> pts;
    for (const ProgressPoint& pt : p.progress) {
        if (speedup && pt.best_speedup) pts.emplace_back(pt.gpu_s, *pt.best_speedup);
        if (!speedup && pt.best_time_ns) pts.emplace_back(pt.gpu_s, *pt.best_time_ns / 1e3);
    }
    if (pts.empty()) return "";
    const double w = 480, h = 220, left = 60, right = 16, top = 24, bottom = 40;
    double x_max = std::max(pts.back().first, 1e-12);
    double y_max = 0;
    for (const auto& [x, y] : pts) y_max = std::max(y_max, y);
    if (speedup) y_max = std::max(y_max, 1.0);
    y_max = y_max > 0 ? y_max * 1.1 : 1.0;
    auto sx = [&](double x) { return left + x / x_max * (w - left - right); };
    auto sy = [&](double y) { return top + (1.0 - y / y_max) * (h - top - bottom); };
    std::ostringstream o;
    std::string y_title = speedup ? "best speedup over baseline:" + p.reference_baseline
                                  : "best time (us)";
    o << "<svg class=\"chart progress\" width=\"" << num(w)
      << "\" height=\"" << num(h) << "\" viewBox=\"0 0 " << num(w) << " " << num(h)
      << "\" role=\"img\">";
    o << "<title>" << html_escape(p.name) << ": " << html_escape(y_title)
      << " against cumulative GPU-seconds</title>";
    o << "<line class=\"axis\" x1=\"" << num(left) << "\" y1=\"" << num(h - bottom) << "\" x2=\""
      << num(w - right) << "\" y2=\"" << num(h - bottom) << "\"/>";
    o << "<line class=\"axis\" x1=\"" << num(left) << "\" y1=\"" << num(top) << "\" x2=\""
      << num(left) << "\" y2=\"" << num(h - bottom) << "\"/>";
    if (speedup)
        o << "<line class=\"ref\" x1=\"" << num(left) << "\" y1=\"" << num(sy(1.0)) << "\" x2=\""
          << num(w - right) << "\" y2=\"" << num(sy(1.0)) << "\"/>";
    // Step curve: the best holds until the next improvement.
    o << "<polyline class=\"progress\" points=\"" << num(sx(0)) << "," << num(sy(pts[0].second));
    double prev = pts[0].second;
    for (const auto& [x, y] : pts) {
        o << " " << num(sx(x)) << "," << num(sy(prev)) << " " << num(sx(x)) << "," << num(sy(y));
        prev = y;
    }
    o << "\"/>";
    for (const auto& [x, y] : pts)
        o << "<circle class=\"pt\" cx=\"" << num(sx(x)) << "\" cy=\"" << num(sy(y))
          << "\" r=\"2.5\"/>";
    o << "<text x=\"" << num(left - 6) << "\" y=\"" << num(top + 4) << "\" text-anchor=\"end\">"
      << format_fixed(y_max, 2) << "</text>";
    o << "<text x=\"" << num(left - 6) << "\" y=\"" << num(h - bottom) << "\" text-anchor=\"end\">"
      << "0</text>";
    o << "<text x=\"" << num(w - right) << "\" y=\"" << num(h - bottom + 14)
      << "\" text-anchor=\"end\">" << format_fixed(x_max, 6) << " s</text>";
    o << "<text x=\"" << num((left + w - right) / 2) << "\" y=\"" << num(h - 6)
      << "\" text-anchor=\"middle\">cumulative GPU-seconds</text>";
    o << "<text x=\"" << num(left) << "\" y=\"" << num(top - 8) << "\">" << html_escape(y_title)
      << "</text>";
    o << "</svg>";
    return o.str();
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
