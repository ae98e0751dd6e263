// What kforge's code generators can lower today, checked before compile so a search never
// spends a compile on a program that codegen would refuse. These are limits of the lowering,
// not of the device (check_legality*.cpp) or of the language: each message says so and names
// the nearest program that lowers. Keep in step with codegen/gemm_spec.cpp, codegen/chain.cpp
// and codegen/lower_rowwise*.cpp.
#include "dsl/check_internal.h"

namespace kforge::dsl {

namespace {

// The split-row path uses one cluster per row: up to 16 CTAs on sm_90 (above 8 the launch
// allows a non-portable cluster size).
constexpr int kMaxRowSplit = 16;

void check_chain_lowerable(const Kernel& kn, Reporter& rep) {
    for (const ChainOp& op : kn.chain) {
        if (op.kind == ChainOpKind::kReduce) {
            rep.error(op.loc, "reduce in a chain is not lowered yet (no CUTLASS epilogue or "
                              "template reduction); store the value to an intermediate and add a "
                              "rowwise " + std::string(to_string(op.reduce)) + " kernel over it");
        }
    }
}

}  // namespace

void check_lowering(const Kernel& kn, const Problem& problem, Reporter& rep) {
    check_chain_lowerable(kn, rep);
    if (kn.kind == KernelKind::kGemm) {
        // tf32 with MN-major operands (both, or either) lowers staged K-major
        // (codegen/gemm_stage.h). 3xTF32 on the Hopper schedules lowers too (one tf32 GEMM over
        // K' = 3K of staged hi/lo parts) but is refused: on the H200 (2026-12-01,
        // bench/NOTES.md) it failed the fp32_strict precision profile at full size - median
        // relative error 5.4e-5 at K = 4096 against 5.1e-7 for the multistage 3xTF32 of the
        // same problem, about what 512 truncating wgmma accumulation steps would give - so the
        // search would only compile candidates that the gates flag.
        (void)problem;
        if (kn.gemm.math == MathMode::kTf32x3 && kn.gemm.schedule != Schedule::kMultistage) {
            rep.error(knob_loc(kn, "math"),
                      "math tf32x3 is lowered only with schedule multistage: the staged wgmma "
                      "form loses the hi/lo terms' precision in wgmma accumulation (median "
                      "relative error 5.4e-5 at K = 4096 on the H200, 100x the multistage "
                      "3xTF32); use schedule multistage");
        }
    }
    if (kn.kind == KernelKind::kRowwise) {
        const bool over_last = kn.over.empty() || (!kn.args.empty() && !kn.args[0].dims.empty() &&
                                                   kn.over == kn.args[0].dims.back());
        if (over_last && kn.rowwise.split > kMaxRowSplit) {
            rep.error(knob_loc(kn, "split"),
                      "split " + std::to_string(kn.rowwise.split) + ": a split row is one thread-"
                      "block cluster, at most " + std::to_string(kMaxRowSplit) + " CTAs");
        }
        const RowOp op = kn.row_op;
        const bool one_sweep = op == RowOp::kSum || op == RowOp::kMean || op == RowOp::kMax ||
                               op == RowOp::kMin || (op == RowOp::kLogsumexp && kn.rowwise.online);
        if (kn.rowwise.smem_stage && one_sweep) {
            rep.error(knob_loc(kn, "smem_stage"),
                      "smem_stage stages a row that is swept more than once; " +
                          std::string(to_string(op)) +
                          (kn.rowwise.online ? " online" : "") + " reads it once: drop smem_stage");
        }
    }
}

}  // namespace kforge::dsl
