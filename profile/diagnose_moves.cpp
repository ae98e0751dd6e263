// The moves a diagnosis advises (profile/diagnose.h): the moves table's (diagnosis/moves.h) for
// the kernel's kind, or stop near SOL.
#include "profile/diagnose.h"

#include <algorithm>

namespace kforge::profile {

MoveAdvice advise_moves(Bottleneck b, const DiagnoseContext& ctx) {
    const bool near_sol = ctx.fraction_of_sol && *ctx.fraction_of_sol >= kNearSolFraction;
    if (near_sol && (b == Bottleneck::kDramBound || b == Bottleneck::kTensorComputeBound))
        return {{}, true};
    if (ctx.kind) return {moves_for(b, *ctx.kind), false};
    // kind unknown (e.g. a standalone benchmark kernel): each kind's first move, once per text
    MoveAdvice all;
    auto same_text = [&](const DirectedMove& m) {
        return std::any_of(all.moves.begin(), all.moves.end(), [&](const DirectedMove& a) {
            return move_text(a) == move_text(m);
        });
    };
    for (dsl::KernelKind kind : {dsl::KernelKind::kGemm, dsl::KernelKind::kRowwise,
                                 dsl::KernelKind::kMap}) {
        std::vector<DirectedMove> m = moves_for(b, kind);
        if (!m.empty() && !same_text(m.front())) all.moves.push_back(m.front());
    }
    return all;
}

}  // namespace kforge::profile
