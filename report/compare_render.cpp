// Renderings of a run comparison (report/compare_render.h).
#include "report/compare_render.h"

#include <sstream>

#include "report/html.h"
#include "report/text.h"

namespace kforge::report {
namespace {

using json = nlohmann::ordered_json;

constexpr CompareAxis kAxes[] = {CompareAxis::kSearchWall, CompareAxis::kGpuSeconds};

std::string axis_title(CompareAxis axis) {
    return axis == CompareAxis::kSearchWall
               ? "search wall seconds (from the run's first timing)"
               : "cumulative GPU-seconds (timed samples and compiles)";
}

std::string sim_text(bool simulated) { return simulated ? " (simulated)" : ""; }

// The run's device, said to be simulated unless its name says so.
std::string device_text(const CompareRun& r) {
    bool said = r.device_name.find("simulated") != std::string::npos;
    return r.device_name + sim_text(r.simulated && !said);
}

// Speedups with three digits: a search's gains over its start can be under 1%.
std::string speedup_text(double x) { return format_fixed(x, 3) + "x"; }

std::string speedup_of(const CompareRun& r) {
    return r.best_ns && r.start_ns ? speedup_text(*r.start_ns / *r.best_ns) : "-";
}

template <typename T>
json opt(const std::optional<T>& v) {
    return v ? json(*v) : json(nullptr);
}

}  // namespace

std::string_view to_string(CompareAxis axis) {
    return axis == CompareAxis::kSearchWall ? "wall" : "gpu";
}

StepChart comparison_chart(const Comparison& c, CompareAxis axis) {
    StepChart chart;
    chart.title = c.problem + sim_text(c.simulated);
    chart.y_title = "best speedup over the start";
    chart.x_title = axis_title(axis);
    chart.y_reference = 1.0;
    chart.y_from_zero = false;
    for (const CompareRun& r : c.runs) {
        StepSeries s{r.label, {}};
        for (const ComparePoint& p : r.steps)
            s.points.emplace_back(axis == CompareAxis::kSearchWall ? p.search_s : p.gpu_s,
                                  p.speedup);
        chart.series.push_back(std::move(s));
    }
    return chart;
}

std::string render_comparison_markdown(const Comparison& c) {
    std::ostringstream o;
    o << "# kforge comparison: " << markdown_cell(c.problem) << sim_text(c.simulated) << "\n\n";
    if (c.simulated)
        o << "> simulated: times of runs on the simulated device come from kforge's analytic "
             "model, not from a GPU.\n\n";
    o << "| run | store | mode | device | status | tier | evaluations | start | best | "
         "speedup over the start |\n|---|---|---|---|---|---|---|---|---|---|\n";
    for (const CompareRun& r : c.runs)
        o << "| " << markdown_cell(r.label) << " | " << markdown_cell(r.store) << " | "
          << markdown_cell(r.mode) << " | " << markdown_cell(device_text(r)) << " | "
          << r.status << " | " << r.tier << " | " << r.evaluations << " | "
          << format_time_ns(r.start_ns) << " (" << r.start_source << ") | "
          << format_time_ns(r.best_ns) << " | " << speedup_of(r) << " |\n";
    o << "\n";
    for (CompareAxis axis : kAxes)
        o << "![best speedup over the start against " << axis_title(axis) << "](compare-"
          << to_string(axis) << ".svg)\n\n";
    o << "## Curve points\n\nOne row per improvement of a run's best, then its last "
         "evaluation; the best holds from a row to the next.\n\n"
         "| run | evaluation | search wall s | wall s | GPU-seconds | best | speedup over the "
         "start |\n|---|---|---|---|---|---|---|\n";
    for (const CompareRun& r : c.runs)
        for (const ComparePoint& p : r.steps)
            o << "| " << markdown_cell(r.label) << " | " << p.evaluation_id << " | "
              << format_fixed(p.search_s, 1) << " | " << format_fixed(p.wall_s, 1) << " | "
              << format_fixed(p.gpu_s, 4) << " | " << format_time_ns(p.best_ns) << " | "
              << speedup_text(p.speedup) << " |\n";
    if (!c.notes.empty()) {
        o << "\n## Notes\n\n";
        for (const std::string& n : c.notes) o << "- " << markdown_cell(n) << "\n";
    }
    return o.str();
}

std::string render_comparison_html(const Comparison& c) {
    std::ostringstream o;
    o << "<h1>kforge comparison: " << html_escape(c.problem) << sim_text(c.simulated) << "</h1>";
    if (c.simulated)
        o << "<p class=\"sim\">simulated: times of runs on the simulated device come from "
             "kforge's analytic model, not from a GPU.</p>";
    o << "<table><tr><th>run</th><th>store</th><th>device</th><th>status</th><th>tier</th>"
         "<th>evaluations</th><th>start</th><th>best</th><th>speedup over the start</th></tr>";
    for (const CompareRun& r : c.runs)
        o << "<tr><td>" << html_escape(r.label) << "</td><td>" << html_escape(r.store)
          << "</td><td>" << html_escape(device_text(r)) << "</td><td>"
          << r.status << "</td><td>" << r.tier << "</td><td>" << r.evaluations << "</td><td>"
          << format_time_ns(r.start_ns) << " (" << r.start_source << ")</td><td>"
          << format_time_ns(r.best_ns) << "</td><td>" << speedup_of(r) << "</td></tr>";
    o << "</table>";
    for (CompareAxis axis : kAxes)
        o << "<p>" << svg_step_chart(comparison_chart(c, axis)) << "</p>";
    if (!c.notes.empty()) {
        o << "<ul>";
        for (const std::string& n : c.notes) o << "<li>" << html_escape(n) << "</li>";
        o << "</ul>";
    }
    return html_document("kforge comparison: " + c.problem + sim_text(c.simulated), o.str());
}

json comparison_to_json(const Comparison& c) {
    json runs = json::array();
    for (const CompareRun& r : c.runs) {
        json steps = json::array();
        for (const ComparePoint& p : r.steps)
            steps.push_back({{"evaluation_id", p.evaluation_id}, {"wall_s", p.wall_s},
                             {"search_s", p.search_s}, {"gpu_s", p.gpu_s},
                             {"best_ns", p.best_ns}, {"speedup", p.speedup}});
        runs.push_back({{"run_id", r.run_id}, {"store", r.store}, {"label", r.label},
                        {"mode", r.mode}, {"device", r.device_name}, {"status", r.status},
                        {"simulated", r.simulated}, {"tier", r.tier},
                        {"evaluations", r.evaluations}, {"start_ns", opt(r.start_ns)},
                        {"start_source", r.start_source}, {"best_ns", opt(r.best_ns)},
                        {"steps", steps}});
    }
    return json{{"kforge_compare", kCompareJsonVersion}, {"problem", c.problem},
                {"simulated", c.simulated}, {"runs", runs}, {"notes", c.notes}};
}

Expected<std::vector<std::string>> write_comparison(const Comparison& c, const std::string& out_dir,
                                                    const std::vector<ReportFormat>& formats) {
    std::vector<std::pair<std::string, std::string>> files;
    for (CompareAxis axis : kAxes) {
        std::string svg = svg_step_chart(comparison_chart(c, axis));
        if (svg.empty())  // still a valid file where the Markdown links it
            svg = "<svg width=\"560\" height=\"40\" font-family=\"sans-serif\" "
                  "font-size=\"11\"><text x=\"8\" y=\"24\">no run has a passed timing: no "
                  "curve</text></svg>";
        files.emplace_back("compare-" + std::string(to_string(axis)) + ".svg", svg_document(svg));
    }
    for (ReportFormat f : formats)
        files.emplace_back("compare." + std::string(to_string(f)),
                           f == ReportFormat::kMarkdown ? render_comparison_markdown(c)
                           : f == ReportFormat::kHtml   ? render_comparison_html(c)
                                                        : comparison_to_json(c).dump(2) + "\n");
    return write_report_files(out_dir, files);
}

}  // namespace kforge::report
