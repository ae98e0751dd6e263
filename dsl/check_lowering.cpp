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

// The contraction dim of gemm(A, B): shared by both operands within their last two dims.
std::string contraction_dim(const Kernel& kn) {
    const auto& a = kn.args[0].dims;
    const auto& b = kn.args[1].dims;
    for (size_t i = a.size() >= 2 ? a.size() - 2 : 0; i < a.size(); ++i)
        for (size_t j = b.size() >= 2 ? b.size() - 2 : 0; j < b.size(); ++j)
            if (a[i] == b[j]) return a[i];
    return {};
}

// Hopper wgmma reads 32-bit (tf32) operands from shared memory only K-major; CUTLASS 4.2 builds
// an MN-major tf32 kernel anyway and it computes wrong results (seen on the H200, 2026-11-30:
// gemm_tf32_4096 with B[K,N], 5.7% of elements right).
void check_tf32_k_major(const Kernel& kn, const Problem& problem, Reporter& rep) {
    const GemmConfig& c = kn.gemm;
    if (c.schedule == Schedule::kMultistage || kn.args.size() != 2) return;
    const Tensor* a = problem.find_tensor(kn.args[0].name);
    const bool f32_operands = a != nullptr && a->dtype == DType::kF32;
    // Only under the tf32 policy: elsewhere check_math already rejects tf32 math on f32 data.
    const bool tf32 = f32_operands && problem.policy == PrecisionPolicy::kTf32 &&
                      (c.math == MathMode::kTf32 || c.math == MathMode::kAuto);
    if (!tf32) return;
    const std::string k = contraction_dim(kn);
    for (const TensorRef& t : kn.args) {
        if (!k.empty() && !t.dims.empty() && t.dims.back() != k) {
            rep.error(t.loc, t.name + ": math tf32 with a Hopper schedule needs K-major operands "
                             "(" + k + " contiguous); this operand's contiguous dim is " +
                             t.dims.back() + ": use schedule multistage");
            return;
        }
    }
}

}  // namespace

void check_lowering(const Kernel& kn, const Problem& problem, Reporter& rep) {
    check_chain_lowerable(kn, rep);
    if (kn.kind == KernelKind::kGemm) {
        const GemmConfig& c = kn.gemm;
        if (c.math == MathMode::kTf32x3 && c.schedule != Schedule::kMultistage) {
            rep.error(knob_loc(kn, "math"),
                      "math tf32x3 is lowered only with schedule multistage (CUTLASS 4.2 has "
                      "3xTF32 for sm_90 only in its sm_100 form); use schedule multistage");
        }
        check_tf32_k_major(kn, problem, rep);
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
