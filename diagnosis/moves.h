// The one table of knob moves: for each bottleneck class, the moves of the kernel language that
// address it, per kernel kind, as data. The diagnosis advises them (KernelDiagnosis::moves, for
// its kernel's kind) and the diagnosis proposer applies them (search/proposers_diagnosis.cpp).
#pragma once

#include <string>
#include <vector>

#include "diagnosis/bottleneck.h"
#include "dsl/ast.h"
#include "sol/bounds.h"

namespace kforge {

// A move on the knobs of every kernel of `kind`: `knob` stepped one step up (+1) or down (-1)
// its domain (a flag: on or off), or set to `word` (direction 0). A move without a knob is
// advice the knobs cannot carry out (a fusion, an operand layout): text for the LLM prompt and
// `kforge profile`, which the search skips.
struct DirectedMove {
    dsl::KernelKind kind = dsl::KernelKind::kGemm;
    std::string knob;
    int direction = 0;
    std::string word;
    std::string reason;
    bool is_knob_move() const { return !knob.empty(); }
};

// "vec up (wider vector accesses)", "schedule stream_k (...)", "grid_stride on (...)", or the
// advice as written.
std::string move_text(const DirectedMove& m);

// The moves for class `b`, every kind's in one list, in the order the search tries them.
const std::vector<DirectedMove>& moves_for(Bottleneck b);
// The moves for class `b` on kernels of `kind`, in table order.
std::vector<DirectedMove> moves_for(Bottleneck b, dsl::KernelKind kind);

// Without a measured class, far from SOL: the moves for the roofline's bound kind (memory: more
// bytes in flight; compute: bigger tiles, deeper pipelines, clusters, ping-pong consumers).
const std::vector<DirectedMove>& roofline_moves(BoundKind kind);

}  // namespace kforge
