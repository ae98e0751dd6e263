// The diagnosis-driven proposer (search/proposers.h).
#include <set>

#include "diagnosis/diagnosis.h"
#include "dsl/ast.h"
#include "dsl/printer.h"
#include "search/proposers.h"
#include "search/proposers_common.h"

namespace kforge::search {
namespace {

// The classes whose moves the proposer makes, in the order it tries them (spill_bound first:
// see diagnosis_moves).
constexpr Bottleneck kClassOrder[] = {
    Bottleneck::kDramBound,         Bottleneck::kL2Bound,
    Bottleneck::kSharedMemoryBound, Bottleneck::kUncoalescedMemory,
    Bottleneck::kLatencyBoundLowOccupancy, Bottleneck::kLaunchTailBound,
    Bottleneck::kSimtComputeBound,  Bottleneck::kTensorComputeBound,
};

// The knob moves of `moves` (advice the knobs cannot carry out is left to the LLM), each reason
// prefixed with what asked for it.
void append_knob_moves(std::vector<DirectedMove>& out, const std::vector<DirectedMove>& moves,
                       const std::string& why) {
    for (const DirectedMove& m : moves) {
        if (!m.is_knob_move()) continue;
        DirectedMove d = m;
        d.reason = why + ": " + m.reason;
        out.push_back(std::move(d));
    }
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
    if (p.kernels[ki].kind != d.kind) return {};
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
        const std::string key = std::string(dsl::to_string(d.kind)) + " " + d.knob + " " + d.word +
                                std::to_string(d.direction);
        if (!done.insert(key).second) continue;
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
    const Diagnosis& diag = view.diagnosis;
    const std::vector<DirectedMove>& spill = moves_for(Bottleneck::kSpillBound);
    if (diag.has(Bottleneck::kSpillBound))
        append_knob_moves(out, spill, std::string(to_string(Bottleneck::kSpillBound)));
    else if (diag.ptxas_spills)
        append_knob_moves(out, spill, "ptxas reports spills");
    for (Bottleneck b : kClassOrder)
        if (diag.has(b)) append_knob_moves(out, moves_for(b), std::string(to_string(b)));
    // The profiler measured the issue pipes busy: the kernel is bound by its instructions,
    // whatever class the SOL roofline gave it (a transcendental chain counts a few FLOPs per
    // element in the bound, tens of instructions on the GPU: mish_softplus_chain_f32 ran at 80-87%
    // SM throughput while "memory-bound at 45% of SOL", H200 2026-12-01).
    const bool simt_bound = diag.has(Bottleneck::kSimtComputeBound);
    const double frac = view.fraction_of_sol.value_or(0.0);
    if (bounds && view.fraction_of_sol && frac < kNearSolFraction &&
        !(simt_bound && bounds->kind == BoundKind::kMemory)) {
        const std::string why =
            (bounds->kind == BoundKind::kMemory ? "memory-bound at " : "compute-bound at ") +
            std::to_string(static_cast<int>(frac * 100)) + "% of SOL";
        append_knob_moves(out, roofline_moves(bounds->kind), why);
    }
    return out;
}

std::unique_ptr<Proposer> make_diagnosis_proposer() { return std::make_unique<DiagnosisProposer>(); }

}  // namespace kforge::search
