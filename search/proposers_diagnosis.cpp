// The diagnosis-driven proposer (search/proposers.h).
#include <set>

#include "diagnosis/diagnosis.h"
#include "dsl/ast.h"
#include "dsl/printer.h"
#include "search/launch_moves.h"
#include "search/proposers.h"
#include "search/proposers_common.h"
#include "sol/device.h"

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
// checked or proposed again in the run. With `free_only`, only a program that shares the
// parent's compile (launch knobs only, search/knob_space.h) is offered, and its move says so.
void offer(const KnobMove& m, const DirectedMove& d, const detail::Parent& parent,
           detail::ProposalSink& sink, bool free_only) {
    if (free_only) {
        if (!m.free) return;
        const std::string why = " (" + d.reason + "; launch knobs only: no compile)";
        if (sink.add(m.program, {parent.hash}, "free: " + m.move + why) != detail::Admit::kIllegal)
            return;
        for (KnobMove& r : knob_neighbours(m.program)) {
            if (r.knob == m.knob || !is_free_move(parent.program, r.program)) continue;
            detail::Admit a = sink.add(r.program, {parent.hash},
                                       "free: " + m.move + ", " + r.move + why + "; " + r.knob +
                                           " moved too: " + m.move + " alone fails the checker");
            if (a == detail::Admit::kAdded || a == detail::Admit::kFull) return;
        }
        return;
    }
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

void apply(const DirectedMove& d, const detail::Parent& parent, detail::ProposalSink& sink,
           bool free_only) {
    for (size_t ki = 0; ki < parent.program.kernels.size() && !sink.full(); ++ki)
        for (KnobMove& m : moves_of(d, parent.program, ki)) offer(m, d, parent, sink, free_only);
}

// The moves for one parent: its diagnosis's (diagnosis_moves), then, short of SOL, what the
// shape of its GEMMs asks of the launch knobs (search/launch_moves.h: too few output tiles for
// the SMs with a long K, a short last wave) - the profiler's tail rule read from the dims, so
// it holds where no profile was taken.
std::vector<DirectedMove> parent_moves(const detail::Parent& parent, const ProposalContext& context) {
    std::vector<DirectedMove> moves = diagnosis_moves(*parent.view, context.bounds);
    const bool near_sol = parent.view->fraction_of_sol.value_or(0.0) >= kNearSolFraction;
    auto device = find_device(context.device_key);
    if (context.problem && device && !near_sol)
        for (DirectedMove& d : gemm_shape_moves(parent.program, *context.problem, device->sm_count))
            moves.push_back(std::move(d));
    return moves;
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

    // Launch-knob variants first: a move the diagnosis asks for that changes launch knobs only
    // (a sm90 GEMM's raster, swizzle, split-K, stream-K: codegen/launch_knobs.h) shares its
    // parent's compile and costs a quick timing, where any other move costs a compile wave
    // (~50 s for CUTLASS on the H200). Then each parent's moves together and one at a time.
    std::vector<Proposal> propose(const ProposalContext& context) override {
        detail::ProposalSink sink(context, &memo_);
        auto parents = detail::parse_parents(context);
        if (parents.size() > 3) parents.resize(3);
        std::vector<std::vector<DirectedMove>> moves;
        for (const detail::Parent& p : parents) moves.push_back(parent_moves(p, context));
        for (size_t i = 0; i < parents.size() && !sink.full(); ++i)
            for (const DirectedMove& d : moves[i]) apply(d, parents[i], sink, true);
        for (size_t i = 0; i < parents.size() && !sink.full(); ++i) {
            apply_together(moves[i], parents[i], context, memo_, sink);
            for (const DirectedMove& d : moves[i]) apply(d, parents[i], sink, false);
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
