#include "llm/prompt.h"

#include <cstdio>
#include <sstream>

#include "diagnosis/diagnosis.h"
#include "dsl/reference_card.h"
#include "sol/sol_share.h"

namespace kforge::llm {
namespace {

constexpr size_t kMaxBest = 4;
constexpr size_t kMaxFailures = 4;
constexpr size_t kMaxMoves = 8;
constexpr size_t kMaxMessageChars = 1200;

std::string ms(double seconds) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.4g ms", seconds * 1e3);
    return buf;
}

std::string cut(const std::string& s, size_t n) {
    return s.size() <= n ? s : s.substr(0, n) + "\n[... cut]";
}

void bounds_section(std::ostringstream& o, const search::ProposalContext& c) {
    const auto* b = c.bounds;
    o << "## Speed of light on " << c.device_key << "\n\n";
    if (!b) {
        o << "(no SOL bounds available)\n\n";
        return;
    }
    o << "- fused bound T_sol: " << ms(b->time_fused_s) << " (" << to_string(b->kind)
      << "-bound; compute " << ms(b->time_compute_s) << " on " << to_string(b->matrix_unit) << (b->matrix_tf32x3 ? " as 3xTF32" : "")
      << ", memory " << ms(b->time_memory_fused_s) << ")\n";
    o << "- unfused bound (one ideal kernel per op): " << ms(b->time_unfused_s) << "\n";
    char ai[64];
    std::snprintf(ai, sizeof ai, "%.4g", b->arithmetic_intensity);
    o << "- precision policy " << to_string(b->policy) << ", arithmetic intensity " << ai
      << " FLOP/B\n";
    o << "- a time below " << ms(b->gaming_threshold_s)
      << " is physically implausible and is flagged as gaming\n";
    if (!c.best.empty() && c.best.front().median_ns) {
        double t = *c.best.front().median_ns * 1e-9;
        char h[160];
        std::snprintf(h, sizeof h, "%.3gx T_sol (%s)", t / b->time_fused_s,
                      format_sol_share(sol_share(t, b->time_fused_s)).c_str());
        o << "- current best: " << ms(t) << " = " << h << "; headroom "
          << ms(t - b->time_fused_s) << "\n";
    } else if (!c.best.empty()) {
        o << "- the best candidate below has no measured time yet\n";
    } else {
        o << "- no passed candidate yet\n";
    }
    o << "\n";
}

void candidate(std::ostringstream& o, const search::CandidateView& v, bool failed) {
    if (failed) {
        o << "Status: " << to_string(v.status) << "\n";
    } else {
        if (v.median_ns) {
            o << "Measured median: " << ms(*v.median_ns * 1e-9);
            if (v.fraction_of_sol)
                o << " (" << format_sol_share(sol_share_of_fraction(*v.fraction_of_sol)) << ")";
            o << "\n";
        }
    }
    if (!v.move.empty()) o << "Move: " << v.move << " (by " << v.proposer << ")\n";
    if (!v.diagnosis.empty()) o << "Diagnosis: " << diagnosis_text(v.diagnosis) << "\n";
    o << "```kforge\n" << v.program_text;
    if (!v.program_text.empty() && v.program_text.back() != '\n') o << "\n";
    o << "```\n";
    if (failed && !v.message.empty()) {
        o << "Message:\n```\n" << cut(v.message, kMaxMessageChars) << "\n```\n";
    }
    o << "\n";
}

}  // namespace

std::string system_prompt() {
    std::ostringstream o;
    o << "You are a CUDA performance engineer working inside kforge, a system that searches for "
         "the fastest correct GPU implementation of an operator problem. You write programs in "
         "kforge's kernel language (reference below). kforge checks every program against the "
         "problem (it must compute exactly the problem's graph, with legal configurations for "
         "the device), lowers it to CUTLASS-backed CUDA, tests correctness and times it. Only "
         "the kernel language is accepted: no CUDA, no host code.\n\n"
         "Aim at the speed-of-light bound: for memory-bound problems fuse kernels and cut DRAM "
         "traffic; for compute-bound ones pick tiles, clusters, stages and schedules that keep "
         "the tensor cores busy. Programs that fail the checker cost a turn; prefer legal, "
         "distinct variations over risky guesses.\n\n";
    o << dsl::reference_card();
    return o.str();
}

std::string user_prompt(const search::ProposalContext& c) {
    std::ostringstream o;
    o << "# Problem";
    if (c.problem) o << " " << c.problem->name;
    o << "\n\n```json\n" << c.problem_spec_json;
    if (!c.problem_spec_json.empty() && c.problem_spec_json.back() != '\n') o << "\n";
    o << "```\n\n";
    bounds_section(o, c);
    if (!c.best.empty()) {
        o << "## Best candidates so far (fastest first)\n\n";
        for (size_t i = 0; i < c.best.size() && i < kMaxBest; ++i) {
            o << "### Candidate " << i + 1 << "\n";
            candidate(o, c.best[i], false);
        }
    }
    if (!c.recent_failures.empty()) {
        o << "## Recent failures (do not repeat these mistakes)\n\n";
        for (size_t i = 0; i < c.recent_failures.size() && i < kMaxFailures; ++i) {
            candidate(o, c.recent_failures[i], true);
        }
    }
    if (!c.helpful_moves.empty()) {
        o << "## Moves that helped on similar problems\n\n";
        for (size_t i = 0; i < c.helpful_moves.size() && i < kMaxMoves; ++i) {
            o << "- " << c.helpful_moves[i] << "\n";
        }
        o << "\n";
    }
    o << "## Task\n\n"
      << "Write " << c.count << " new program" << (c.count == 1 ? "" : "s")
      << " for this problem that you expect to run faster than the best so far, each different "
         "from the candidates above. For each program write one line `Rationale: <why it should "
         "be faster>` and then the program in its own ```kforge fenced block. Use the problem's "
         "tensor and dim names exactly as the spec gives them and `for \"" 
      << (c.problem ? c.problem->name : std::string("<problem>")) << "\"`.\n";
    return o.str();
}

std::string repair_prompt(const std::vector<RejectedProgram>& rejected, int accepted) {
    std::ostringstream o;
    o << "kforge accepted " << accepted << " of your programs and rejected " << rejected.size()
      << ":\n\n";
    for (const auto& r : rejected) {
        o << "### Program " << r.index << "\n```kforge\n" << r.text;
        if (!r.text.empty() && r.text.back() != '\n') o << "\n";
        o << "```\nErrors:\n```\n" << cut(r.errors, kMaxMessageChars) << "\n```\n\n";
    }
    o << "Fix each rejected program and send the corrected versions only, each after a "
         "`Rationale:` line in its own ```kforge block.\n";
    return o.str();
}

}  // namespace kforge::llm
