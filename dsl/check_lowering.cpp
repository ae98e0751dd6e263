// What kforge's code generators can lower today, checked before compile so a search never
// spends a compile on a program that codegen would refuse. These are limits of the lowering,
// not of the device (check_legality*.cpp) or of the language: each message says so and names
// the nearest program that lowers. Keep in step with codegen/gemm_spec.cpp, codegen/chain.cpp
// and codegen/lower_rowwise*.cpp.
#include "dsl/check_internal.h"

namespace kforge::dsl {

namespace {

constexpr int kMaxRowSplit = 8;  // portable cluster size: the split-row path uses one cluster

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

void check_lowering(const Kernel& kn, Reporter& rep) {
    check_chain_lowerable(kn, rep);
    if (kn.kind == KernelKind::kGemm) {
        const GemmConfig& c = kn.gemm;
        if (c.math == MathMode::kTf32x3 && c.schedule != Schedule::kMultistage) {
            rep.error(knob_loc(kn, "math"),
                      "math tf32x3 is lowered only with schedule multistage (CUTLASS 4.2 has "
                      "3xTF32 for sm_90 only in its sm_100 form); use schedule multistage");
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
    }
}

}  // namespace kforge::dsl
