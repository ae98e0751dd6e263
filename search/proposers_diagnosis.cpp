// The diagnosis-driven proposer (search/proposers.h).
#include <algorithm>
#include <cctype>
#include <set>

#include "dsl/ast.h"
#include "dsl/printer.h"
#include "search/proposers.h"
#include "search/proposers_common.h"

namespace kforge::search {
namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// True when the text mentions spills with a nonzero count near the word ("24 bytes spill
// stores", "spills 8/0").
bool mentions_spills(const std::string& text) {
    std::string t = lower(text);
    for (size_t pos = t.find("spill"); pos != std::string::npos; pos = t.find("spill", pos + 1)) {
        size_t lo = pos >= 24 ? pos - 24 : 0, hi = std::min(t.size(), pos + 24);
        for (size_t i = lo; i < hi; ++i)
            if (t[i] >= '1' && t[i] <= '9')
                return true;
    }
    return false;
}

DirectedMove mv(std::string kind, std::string knob, int dir, std::string reason) {
    return DirectedMove{std::move(kind), std::move(knob), dir, "", std::move(reason)};
}
DirectedMove word(std::string kind, std::string knob, std::string w, std::string reason) {
    return DirectedMove{std::move(kind), std::move(knob), 0, std::move(w), std::move(reason)};
}

void memory_moves(std::vector<DirectedMove>& out, const std::string& why) {
    out.push_back(mv("rowwise", "vec", 1, why + ": wider vector accesses"));
    out.push_back(mv("map", "vec", 1, why + ": wider vector accesses"));
    out.push_back(mv("map", "items", 1, why + ": more bytes in flight per thread"));
    out.push_back(mv("rowwise", "rows_per_block", 1, why + ": more rows per block"));
    out.push_back(mv("rowwise", "passes", -1, why + ": keep the row on chip (one pass)"));
    // last: where the moves above are refused (f32 at 16 bytes already, a row too long to keep),
    // more CTAs per row put more bytes in flight
    out.push_back(mv("rowwise", "split", 1, why + ": more CTAs per row, more bytes in flight"));
}

void spill_moves(std::vector<DirectedMove>& out, const std::string& why) {
    out.push_back(mv("gemm", "tile", -1, why + ": smaller tiles"));
    out.push_back(mv("gemm", "stages", -1, why + ": fewer stages"));
    out.push_back(mv("rowwise", "rows_per_block", -1, why + ": fewer rows per block"));
    out.push_back(mv("rowwise", "threads", 1, why + ": more threads share the row"));
    out.push_back(mv("rowwise", "passes", 1, why + ": re-read the row instead of caching it"));
}

// Offers `m` (parent moved by `d`) to the sink. A move the checker refuses is replaced by the
// nearest legal program that makes the same move: `m` moved again along one other knob (e.g.
// passes 2 -> 1 on a row too long to cache, with split 8 -> 16 so that each CTA's part fits);
// when none is legal the move is dropped. Refused programs stay in the memo, so they are never
// checked or proposed again in the run.
void offer(const KnobMove& m, const DirectedMove& d, const detail::Parent& parent,
           detail::ProposalSink& sink) {
    const std::string why = " (" + d.reason + ")";
    if (sink.add(m.program, {parent.hash}, m.move + why) != detail::Admit::kIllegal) return;
    for (KnobMove& r : knob_neighbours(m.program)) {
        if (r.knob == m.knob) continue;
        detail::Admit a = sink.add(r.program, {parent.hash},
                                   m.move + ", " + r.move + why + "; " + r.knob +
                                       " moved too: " + m.move + " alone fails the checker");
        if (a == detail::Admit::kAdded || a == detail::Admit::kFull) return;
    }
}

// The programs that make move `d` on kernel `ki` of `p` (none where the kernel is of another
// kind or the knob cannot move that way).
std::vector<KnobMove> moves_of(const DirectedMove& d, const dsl::Program& p, size_t ki) {
    if (!d.kind.empty() && to_string(p.kernels[ki].kind) != d.kind) return {};
    if (d.word.empty()) return step_knob(p, ki, d.knob, d.direction);
    std::vector<KnobMove> out;
    if (auto m = set_word_knob(p, ki, d.knob, d.word)) out.push_back(std::move(*m));
    return out;
}

void apply(const DirectedMove& d, const detail::Parent& parent, detail::ProposalSink& sink) {
    for (size_t ki = 0; ki < parent.program.kernels.size() && !sink.full(); ++ki)
        for (KnobMove& m : moves_of(d, parent.program, ki)) offer(m, d, parent, sink);
}

// The moves that answer one bottleneck usually add up (a compute-bound element-wise kernel pays
// less index math with a grid-stride loop AND larger blocks AND more items per thread): single
// moves find such a combination one round per knob. This is the parent with every move of `moves`
// that stays legal applied in turn (each integer move one step, the first legal variant), offered
// when at least two applied. On the H200 (2026-12-01) random search found mish's fastest
// configuration as three of these moves at once while the single moves were one round short.
void apply_together(const std::vector<DirectedMove>& moves, const detail::Parent& parent,
                    const ProposalContext& context, detail::LegalityMemo& memo,
                    detail::ProposalSink& sink) {
    dsl::Program at = parent.program;
    std::vector<std::string> parts;
    std::string first_reason;
    std::set<std::string> done;  // a knob named twice (two classes asking for it) moves once
    for (const DirectedMove& d : moves) {
        if (!done.insert(d.kind + " " + d.knob + " " + d.word + std::to_string(d.direction)).second) continue;
        for (size_t ki = 0; ki < at.kernels.size(); ++ki) {
            for (KnobMove& m : moves_of(d, at, ki)) {
                if (!memo.legal(m.program, dsl::program_hash(m.program), context)) continue;
                at = std::move(m.program);
                parts.push_back(m.move);
                if (first_reason.empty()) first_reason = d.reason;
                break;
            }
        }
    }
    if (parts.size() < 2) return;
    std::string move;
    for (const std::string& p : parts) move += (move.empty() ? "" : " + ") + p;
    sink.add(at, {parent.hash}, "together: " + move + " (" + first_reason + ")");
}

class DiagnosisProposer : public Proposer {
public:
    std::string name() const override { return "search:diagnosis"; }

    std::vector<Proposal> propose(const ProposalContext& context) override {
        detail::ProposalSink sink(context, &memo_);
        auto parents = detail::parse_parents(context);
        for (size_t i = 0; i < parents.size() && i < 3 && !sink.full(); ++i) {
            std::vector<DirectedMove> moves = diagnosis_moves(*parents[i].view, context.bounds);
            apply_together(moves, parents[i], context, memo_, sink);
            for (const DirectedMove& d : moves) apply(d, parents[i], sink);
        }
        return sink.take();
    }

private:
    detail::LegalityMemo memo_;  // the static tier over the run: a refused move is not retried
};

}  // namespace

std::vector<DirectedMove> diagnosis_moves(const CandidateView& view, const Bounds* bounds) {
    std::vector<DirectedMove> out;
    std::string diag = lower(view.diagnosis);
    if (mentions_spills(view.ptxas_summary)) spill_moves(out, "ptxas reports spills");
    if (diag.find("spill_bound") != std::string::npos) spill_moves(out, "spill_bound");
    if (diag.find("dram_bound") != std::string::npos) memory_moves(out, "dram_bound");
    if (diag.find("l2_bound") != std::string::npos) {
        std::string why = "l2_bound";
        out.push_back(mv("gemm", "cluster", 1, why + ": a larger cluster multicasts tiles, fewer L2 reads"));
        out.push_back(mv("gemm", "swizzle", 1, why + ": a wider raster swizzle reuses L2 lines"));
        out.push_back(mv("gemm", "tile", 1, why + ": bigger tiles read each operand fewer times"));
        out.push_back(mv("rowwise", "rows_per_block", 1, why + ": the rows of a block share broadcast operands"));
        out.push_back(mv("rowwise", "passes", -1, why + ": one pass over the row, no re-read"));
        out.push_back(mv("map", "items", 1, why + ": fewer, fuller memory transactions"));
    }
    if (diag.find("shared_memory_bound") != std::string::npos) {
        std::string why = "shared_memory_bound";
        out.push_back(mv("rowwise", "threads", 1, why + ": more threads share the row's reduction"));
        out.push_back(mv("rowwise", "vec", 1, why + ": wider accesses, fewer shared-memory passes"));
        out.push_back(mv("gemm", "tile", 1, why + ": bigger tiles, more math per shared-memory byte"));
        out.push_back(word("gemm", "schedule", "pingpong", why + ": ping-pong overlaps epilogue and mainloop"));
    }
    if (diag.find("uncoalesced") != std::string::npos) {
        std::string why = "uncoalesced_memory";
        out.push_back(mv("rowwise", "vec", 1, why + ": wider contiguous accesses"));
        out.push_back(mv("map", "vec", 1, why + ": wider contiguous accesses"));
        out.push_back(mv("rowwise", "rows_per_block", -1, why + ": one row per block, contiguous lanes"));
    }
    if (diag.find("latency_bound_low_occupancy") != std::string::npos) {
        std::string why = "latency_bound_low_occupancy";
        out.push_back(mv("rowwise", "rows_per_block", -1, why + ": more blocks"));
        out.push_back(mv("rowwise", "split", 1, why + ": split rows over more blocks"));
        out.push_back(mv("map", "block", -1, why + ": smaller blocks, more of them"));
        out.push_back(mv("gemm", "tile", -1, why + ": smaller tiles, more CTAs"));
        out.push_back(mv("gemm", "stages", 1, why + ": deeper pipeline hides latency"));
    }
    if (diag.find("tail_bound") != std::string::npos) {
        std::string why = "tail_bound";
        out.push_back(word("gemm", "schedule", "stream_k", why + ": stream-K balances the tail"));
        out.push_back(mv("gemm", "splitk", 1, why + ": split K over more CTAs"));
        out.push_back(mv("gemm", "tile", -1, why + ": smaller tiles, finer waves"));
        out.push_back(mv("rowwise", "rows_per_block", -1, why + ": finer blocks"));
    }
    // The profiler measured the issue pipes busy: the kernel is bound by its instructions,
    // whatever class the SOL roofline gave it (a transcendental chain counts a few FLOPs per
    // element in the bound, tens of instructions on the GPU: mish_softplus_chain_f32 ran at 80-87%
    // SM throughput while "memory-bound at 45% of SOL", H200 2026-12-01).
    const bool simt_bound = diag.find("simt_compute_bound") != std::string::npos;
    const bool tensor_bound = diag.find("tensor_compute_bound") != std::string::npos;
    if (simt_bound) {
        std::string why = "simt_compute_bound";
        out.push_back(word("gemm", "math", "tf32x3", why + ": 3xTF32 on tensor cores instead of f32 SIMT"));
        out.push_back(mv("map", "grid_stride", 1, why + ": a grid-stride loop pays index math and block setup once per thread"));
        out.push_back(mv("map", "block", 1, why + ": larger blocks, fewer block setups"));
        out.push_back(mv("map", "items", 1, why + ": more elements per thread share its setup"));
        out.push_back(mv("rowwise", "vec", 1, why + ": wider accesses, fewer address instructions"));
        out.push_back(mv("rowwise", "threads", -1, why + ": fewer threads per row, shorter reduction trees"));
    }
    if (tensor_bound) {
        std::string why = "tensor_compute_bound";
        out.push_back(mv("gemm", "tile", 1, why + ": bigger tiles keep the tensor pipe fed"));
        out.push_back(word("gemm", "schedule", "pingpong", why + ": ping-pong overlaps epilogue and mainloop"));
        out.push_back(mv("gemm", "cluster", 1, why + ": larger cluster, multicast operand loads"));
    }
    double frac = view.fraction_of_sol.value_or(0.0);
    if (bounds && view.fraction_of_sol && frac < 0.8 && !(simt_bound && bounds->kind == BoundKind::kMemory)) {
        std::string why = (bounds->kind == BoundKind::kMemory ? "memory-bound at " : "compute-bound at ") +
                          std::to_string(static_cast<int>(frac * 100)) + "% of SOL";
        if (bounds->kind == BoundKind::kMemory) {
            memory_moves(out, why);
        } else {
            out.push_back(mv("gemm", "tile", 1, why + ": bigger tiles"));
            out.push_back(mv("gemm", "stages", 1, why + ": more stages"));
            out.push_back(mv("gemm", "cluster", 1, why + ": larger cluster"));
            out.push_back(word("gemm", "schedule", "pingpong", why + ": ping-pong consumers"));
        }
    }
    return out;
}

std::unique_ptr<Proposer> make_diagnosis_proposer() { return std::make_unique<DiagnosisProposer>(); }

}  // namespace kforge::search
