// Markdown rendering of the report model (report/markdown.h).
#include "report/markdown.h"

#include <sstream>

#include "report/kernel_breakdown.h"
#include "report/text.h"

namespace kforge::report {
namespace {

std::string sim_tag(bool simulated) { return simulated ? " (simulated)" : ""; }

void suite_section(std::ostringstream& o, const Report& r) {
    const SuiteSummary& s = r.suite;
    o << "## Suite" << sim_tag(r.simulated) << "\n\n";
    o << "- problems: " << s.problems << ", with a passed candidate: " << s.problems_solved
      << "\n";
    o << "- within " << format_fixed(s.sol_within_percent, 0) << "% of SOL (T <= "
      << format_fixed(1.0 + s.sol_within_percent / 100.0, 2) << " T_sol): " << s.within_sol
      << " of " << s.problems_with_sol << " (" << format_fraction(s.fraction_within_sol)
      << ")\n";
    o << "- geomean %SOL: " << format_percent(s.geomean_percent_sol) << "\n\n";
    if (s.baselines.empty()) {
        o << "No baseline measured: speedups and fast_p are not available.\n\n";
        return;
    }
    o << "| baseline | problems measured | geomean speedup |";
    for (const FastP& f : s.baselines.front().fast_p) o << " fast_" << format_fixed(f.p, 1) << " |";
    o << "\n|---|---|---|";
    for (size_t i = 0; i < s.baselines.front().fast_p.size(); ++i) o << "---|";
    o << "\n";
    for (const BaselineSummary& b : s.baselines) {
        o << "| " << markdown_cell(b.name) << " | " << b.problems_measured << " | "
          << format_speedup(b.geomean_speedup) << " (" << b.geomean_count << ") |";
        for (const FastP& f : b.fast_p)
            o << " " << format_fraction(f.fraction) << " (" << f.fast << ") |";
        o << "\n";
    }
    o << "\n";
}

void problem_table(std::ostringstream& o, const Report& r) {
    o << "## Problems\n\n";
    o << "| run | problem | best median | reference baseline | speedup | %SOL | SOL score |\n";
    o << "|---|---|---|---|---|---|---|\n";
    for (const ProblemReport& p : r.problems) {
        std::optional<double> speedup;
        std::string ref = "no baseline measured";
        if (!p.baselines.empty()) {
            speedup = p.baselines.front().speedup;
            ref = p.baselines.front().label;
        }
        o << "| " << p.run_id << " | " << markdown_cell(p.name) << sim_tag(p.simulated) << " | "
          << format_time_ns(p.best ? std::optional(p.best->stats.median_ns) : std::nullopt)
          << " | " << markdown_cell(ref) << " | " << format_speedup(speedup) << " | "
          << markdown_cell(sol_text(p.sol)) << " | " << format_fixed(p.sol.sol_score, 3)
          << " |\n";
    }
    o << "\n";
}

// The best program's per-kernel breakdown: a table and its bar chart, an SVG file beside the
// report (write_report writes it).
void kernels_markdown(std::ostringstream& o, const ProblemReport& p) {
    const BestCandidate& b = *p.best;
    if (!b.kernels_note.empty()) o << "- kernels: " << markdown_cell(b.kernels_note) << "\n\n";
    if (b.kernels.empty()) return;
    o << "Kernels of the best program (share of the kernels' summed time; % of SOL against "
         "each kernel's own bound)" << (p.simulated ? " (simulated)" : "") << ":\n\n|";
    for (const std::string& h : kernel_table_header()) o << " " << h << " |";
    o << "\n|";
    for (size_t i = 0; i < kernel_table_header().size(); ++i) o << "---|";
    o << "\n";
    for (const KernelRow& r : b.kernels) {
        o << "|";
        for (const std::string& c : kernel_table_cells(r)) o << " " << markdown_cell(c) << " |";
        o << "\n";
    }
    o << "\n![time per kernel](" << kernel_chart_file(p) << ")\n\n";
}

void problem_section(std::ostringstream& o, const ProblemReport& p) {
    o << "### " << markdown_cell(p.name) << " (run " << p.run_id << ")" << sim_tag(p.simulated)
      << "\n\n";
    if (!p.description.empty()) o << markdown_cell(p.description) << "\n\n";
    o << "- policy: " << markdown_cell(p.policy) << "; candidates: " << p.candidates
      << ", evaluations: " << p.evaluations << " (" << p.passed_evaluations << " passed)\n";
    if (!p.best) {
        o << "- no passed candidate\n";
    } else {
        const BestCandidate& b = *p.best;
        o << "- best: candidate " << b.candidate_id << " (" << markdown_cell(b.proposer)
          << ", " << markdown_cell(b.move) << "), evaluation " << b.evaluation_id << ", tier "
          << b.tier << ", shapes " << markdown_cell(b.shapes_key) << "\n";
        o << "- time: median " << format_time_ns(b.stats.median_ns) << ", IQR "
          << format_time_ns(b.stats.iqr_ns) << ", 95% CI [" << format_time_ns(b.stats.ci95_low_ns)
          << ", " << format_time_ns(b.stats.ci95_high_ns) << "], " << b.stats.count
          << " samples; " << format_fixed(b.tflops_per_s, 2) << " TFLOP/s, "
          << format_fixed(b.gbytes_per_s, 1) << " GB/s\n";
    }
    if (p.baselines.empty()) o << "- baselines: no baseline measured\n";
    for (const BaselineTime& bt : p.baselines)
        o << "- " << markdown_cell(bt.label) << ": median " << format_time_ns(bt.stats.median_ns)
          << " (" << bt.stats.count << " samples), speedup " << format_speedup(bt.speedup)
          << "\n";
    const SolFigures& s = p.sol;
    if (!s.available) {
        o << "- SOL: " << markdown_cell(s.note) << "\n";
    } else {
        o << "- SOL (" << markdown_cell(s.ceilings_source) << ", " << s.bound_kind
          << "-bound): T_sol " << format_time_ns(s.time_sol_s * 1e9) << ", unfused "
          << format_time_ns(s.time_unfused_s * 1e9) << "; %SOL " << sol_text(s)
          << "; SOL score " << format_fixed(s.sol_score, 3);
        if (!s.t_base_source.empty()) o << " (T_base = " << s.t_base_source << ")";
        if (!s.sol_score_note.empty()) o << "; " << markdown_cell(s.sol_score_note);
        if (s.below_gaming_threshold) o << "; BELOW THE GAMING THRESHOLD";
        if (!s.note.empty()) o << "; " << markdown_cell(s.note);
        o << "\n";
    }
    if (!p.best) {
        o << "\n";
        return;
    }
    o << "- diagnosis: "
      << (p.best->diagnosis.empty() ? "none recorded" : markdown_cell(p.best->diagnosis))
      << "\n\n";
    kernels_markdown(o, p);
    o << "| gate | result | message | evidence |\n|---|---|---|---|\n";
    for (const GateRow& g : p.best->gates)
        o << "| " << markdown_cell(g.gate) << " | " << markdown_cell(g.result) << " | "
          << markdown_cell(g.message) << " | `" << markdown_cell(truncate(g.evidence_json, 200))
          << "` |\n";
    o << "\nLineage (nearest first): ";
    for (size_t i = 0; i < p.best->lineage.size(); ++i) {
        const LineageRow& l = p.best->lineage[i];
        o << (i ? " <- " : "") << "#" << l.candidate_id << " " << markdown_cell(l.proposer);
        if (!l.move.empty()) o << " (" << markdown_cell(l.move) << ")";
    }
    o << "\n\n";
}

}  // namespace

std::string render_markdown(const Report& r) {
    std::ostringstream o;
    o << "# kforge report" << (r.simulated ? " (simulated device)" : "") << "\n\n";
    if (r.simulated)
        o << "**simulated**: times come from kforge's analytic model, not from a GPU.\n\n";
    o << "Runs:\n\n";
    for (const RunInfo& run : r.runs)
        o << "- run " << run.id << ": " << markdown_cell(run.subject) << " on "
          << markdown_cell(run.device_name) << sim_tag(run.simulated) << ", " << run.status
          << ", started " << markdown_cell(run.started_at) << "\n";
    o << "\nEvery figure is derived from the stored measurements, FLOP/byte counts and SOL "
         "bounds; none is read from a stored summary.\n\n";
    suite_section(o, r);
    problem_table(o, r);
    for (const ProblemReport& p : r.problems) problem_section(o, p);
    return o.str();
}

}  // namespace kforge::report
