// HTML rendering of the report model (report/html.h).
#include "report/html.h"

#include <sstream>

#include "report/kernel_breakdown.h"
#include "report/svg.h"
#include "report/text.h"

namespace kforge::report {
namespace {

constexpr const char* kCss = R"(
body{font-family:sans-serif;margin:2em;color:#222;max-width:1100px}
table{border-collapse:collapse;margin:0.5em 0 1em}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:0.9em;vertical-align:top}
th{background:#f0f0f0}
code{font-size:0.85em;word-break:break-all}
.sim{background:#fff3cd;border:1px solid #e0b000;padding:0.5em;font-weight:bold}
.tag{background:#e0b000;color:#000;padding:0 4px;border-radius:3px;font-size:0.8em}
.warn{color:#b00020;font-weight:bold}
svg.chart{border:1px solid #ddd;margin:0.5em 0;background:#fff}
svg .axis{stroke:#444;stroke-width:1}
svg .ref{stroke:#777;stroke-dasharray:4 3}
svg .progress{fill:none;stroke:#1f6feb;stroke-width:2}
svg .bar{fill:#2da44e}
svg .curve{fill:none}
svg text{font-size:11px;fill:#333}
)";

std::string esc(const std::string& s) { return html_escape(s); }
std::string sim_tag(bool simulated) {
    return simulated ? " <span class=\"tag\">simulated</span>" : "";
}

void suite_html(std::ostringstream& o, const Report& r) {
    const SuiteSummary& s = r.suite;
    o << "<h2>Suite" << sim_tag(r.simulated) << "</h2><ul>";
    o << "<li>problems: " << s.problems << ", with a passed candidate: " << s.problems_solved
      << "</li><li>within " << format_fixed(s.sol_within_percent, 0) << "% of SOL: "
      << s.within_sol << " of " << s.problems_with_sol << " ("
      << format_fraction(s.fraction_within_sol) << ")</li><li>geomean %SOL: "
      << format_percent(s.geomean_percent_sol) << "</li></ul>";
    if (s.baselines.empty()) {
        o << "<p>No baseline measured: speedups and fast_p are not available.</p>";
        return;
    }
    o << "<table><tr><th>baseline</th><th>problems measured</th><th>geomean speedup</th>";
    for (const FastP& f : s.baselines.front().fast_p)
        o << "<th>fast_" << format_fixed(f.p, 1) << "</th>";
    o << "</tr>";
    for (const BaselineSummary& b : s.baselines) {
        o << "<tr><td>" << esc(b.name) << "</td><td>" << b.problems_measured << "</td><td>"
          << format_speedup(b.geomean_speedup) << " (" << b.geomean_count << ")</td>";
        for (const FastP& f : b.fast_p)
            o << "<td>" << format_fraction(f.fraction) << " (" << f.fast << ")</td>";
        o << "</tr>";
    }
    o << "</table>";
}

void charts_html(std::ostringstream& o, const Report& r) {
    std::vector<Bar> speedups, sols;
    std::string ref_name;
    for (const ProblemReport& p : r.problems) {
        std::string label = p.name + " #" + std::to_string(p.run_id);
        if (!p.baselines.empty() && p.baselines.front().speedup) {
            speedups.push_back(Bar{label + " (" + p.baselines.front().name + ")",
                                   *p.baselines.front().speedup});
        }
        if (p.sol.percent_sol) sols.push_back(Bar{label, *p.sol.percent_sol});
    }
    o << "<h2>Charts</h2>";
    if (speedups.empty()) o << "<p>No baseline measured: no speedup chart.</p>";
    o << svg_bar_chart("speedup over the reference baseline", speedups, "x", 1.0);
    o << svg_bar_chart("%SOL (T_sol / T)", sols, "%", 100.0);
}

// The best program's per-kernel breakdown: a table and the bar chart of its times.
void kernels_html(std::ostringstream& o, const ProblemReport& p) {
    const BestCandidate& b = *p.best;
    if (!b.kernels_note.empty()) o << "<p>kernels: " << esc(b.kernels_note) << "</p>";
    if (b.kernels.empty()) return;
    o << "<h4>Kernels of the best program" << (p.simulated ? " (simulated)" : "")
      << "</h4><p>share of the kernels' summed time; % of SOL against each kernel's own "
         "bound</p><table class=\"kernels\"><tr>";
    for (const std::string& h : kernel_table_header()) o << "<th>" << esc(h) << "</th>";
    o << "</tr>";
    for (const KernelRow& r : b.kernels) {
        o << "<tr>";
        for (const std::string& c : kernel_table_cells(r)) o << "<td>" << esc(c) << "</td>";
        o << "</tr>";
    }
    o << "</table>" << svg_kernel_chart(b.kernels);
}

void problem_html(std::ostringstream& o, const ProblemReport& p) {
    o << "<section><h3>" << esc(p.name) << " (run " << p.run_id << ")" << sim_tag(p.simulated)
      << "</h3>";
    if (!p.description.empty()) o << "<p>" << esc(p.description) << "</p>";
    o << "<p>policy " << esc(p.policy) << "; candidates " << p.candidates << ", evaluations "
      << p.evaluations << " (" << p.passed_evaluations << " passed)</p><ul>";
    if (!p.best) {
        o << "<li>no passed candidate</li>";
    } else {
        const BestCandidate& b = *p.best;
        o << "<li>best: candidate " << b.candidate_id << " (" << esc(b.proposer) << ", "
          << esc(b.move) << "), evaluation " << b.evaluation_id << ", tier " << esc(b.tier)
          << ", shapes " << esc(b.shapes_key) << "</li>";
        o << "<li>time: median " << format_time_ns(b.stats.median_ns) << ", IQR "
          << format_time_ns(b.stats.iqr_ns) << ", 95% CI ["
          << format_time_ns(b.stats.ci95_low_ns) << ", " << format_time_ns(b.stats.ci95_high_ns)
          << "], " << b.stats.count << " samples; " << format_fixed(b.tflops_per_s, 2)
          << " TFLOP/s, " << format_fixed(b.gbytes_per_s, 1) << " GB/s</li>";
    }
    if (p.baselines.empty()) o << "<li>no baseline measured</li>";
    for (const BaselineTime& bt : p.baselines)
        o << "<li>" << esc(bt.label) << ": median " << format_time_ns(bt.stats.median_ns) << " ("
          << bt.stats.count << " samples), speedup " << format_speedup(bt.speedup) << "</li>";
    const SolFigures& s = p.sol;
    if (!s.available) {
        o << "<li>SOL: " << esc(s.note) << "</li>";
    } else {
        o << "<li>SOL (" << esc(s.ceilings_source) << ", " << esc(s.bound_kind)
          << "-bound): T_sol " << format_time_ns(s.time_sol_s * 1e9) << ", unfused "
          << format_time_ns(s.time_unfused_s * 1e9) << "; %SOL " << esc(sol_text(s))
          << "; SOL score " << format_fixed(s.sol_score, 3);
        if (!s.t_base_source.empty()) o << " (T_base = " << esc(s.t_base_source) << ")";
        if (!s.sol_score_note.empty()) o << "; " << esc(s.sol_score_note);
        if (s.below_gaming_threshold)
            o << " <span class=\"warn\">below the gaming threshold</span>";
        if (!s.note.empty()) o << "; " << esc(s.note);
        o << "</li>";
    }
    if (p.best)
        o << "<li>diagnosis: "
          << (p.best->diagnosis.empty() ? "none recorded" : esc(p.best->diagnosis)) << "</li>";
    o << "</ul>" << svg_progress_chart(p);
    if (p.best) {
        o << "<table><tr><th>gate</th><th>result</th><th>message</th><th>evidence</th></tr>";
        for (const GateRow& g : p.best->gates)
            o << "<tr><td>" << esc(g.gate) << "</td><td>" << esc(g.result) << "</td><td>"
              << esc(g.message) << "</td><td><code>" << esc(truncate(g.evidence_json, 400))
              << "</code></td></tr>";
        o << "</table>";
        kernels_html(o, p);
        o << "<p>lineage (nearest first): ";
        for (size_t i = 0; i < p.best->lineage.size(); ++i) {
            const LineageRow& l = p.best->lineage[i];
            o << (i ? " &larr; " : "") << "#" << l.candidate_id << " " << esc(l.proposer);
            if (!l.move.empty()) o << " (" << esc(l.move) << ")";
        }
        o << "</p>";
    }
    o << "</section>";
}

}  // namespace

std::string render_html(const Report& r) {
    std::ostringstream o;
    o << "<h1>kforge report" << sim_tag(r.simulated) << "</h1>";
    if (r.simulated)
        o << "<p class=\"sim\">simulated: times come from kforge's analytic model, not from a "
             "GPU.</p>";
    o << "<ul>";
    for (const RunInfo& run : r.runs)
        o << "<li>run " << run.id << ": " << esc(run.subject) << " on " << esc(run.device_name)
          << sim_tag(run.simulated) << ", " << esc(run.status) << ", started "
          << esc(run.started_at) << "</li>";
    o << "</ul><p>Every figure is derived from the stored measurements, FLOP/byte counts and SOL "
         "bounds.</p>";
    suite_html(o, r);
    charts_html(o, r);
    o << "<h2>Problems</h2>";
    for (const ProblemReport& p : r.problems) problem_html(o, p);
    return html_document(std::string("kforge report") + (r.simulated ? " (simulated)" : ""),
                         o.str());
}

std::string html_document(const std::string& title, const std::string& body) {
    return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
           html_escape(title) + "</title><style>" + kCss + "</style></head><body>" + body +
           "</body></html>\n";
}

}  // namespace kforge::report
