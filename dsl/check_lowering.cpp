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

// The contraction dim of gemm(A, B): shared by both operands within their last two dims.
std::string contraction_dim(const Kernel& kn) {
    const auto& a = kn.args[0].dims;
    const auto& b = kn.args[1].dims;
    for (size_t i = a.size() >= 2 ? a.size() - 2 : 0; i < a.size(); ++i)
        for (size_t j = b.size() >= 2 ? b.size() - 2 : 0; j < b.size(); ++j)
            if (a[i] == b[j]) return a[i];
    return {};
}

// The operand layouts of a tf32 gemm with a Hopper schedule, as codegen/gemm_transpose.h routes
// them: wgmma reads 32-bit operands from shared memory only K-major. Both K-major: as written; an
// M-major A beside a K-major B: CUTLASS's register-sourced mainloop; a K-major A beside an
// N-major B: computed as C^T = B^T A^T (CUTLASS 4.2 alone builds that case with its operands
// swapped inside the mainloop only: wrong results, seen on the H200 on 2026-11-30); both
// MN-major: not lowered.
enum class Tf32Majors { kNotTf32, kLowered, kTransposed, kBothMnMajor };

Tf32Majors tf32_majors(const Kernel& kn, const Problem& problem) {
    const GemmConfig& c = kn.gemm;
    if (c.schedule == Schedule::kMultistage || kn.args.size() != 2) return Tf32Majors::kNotTf32;
    const Tensor* a = problem.find_tensor(kn.args[0].name);
    const bool f32_operands = a != nullptr && a->dtype == DType::kF32;
    // Not under fp32_strict: there check_math already rejects tf32 math on f32 data.
    const bool tf32 = f32_operands && problem.policy != PrecisionPolicy::kFp32Strict &&
                      (c.math == MathMode::kTf32 || c.math == MathMode::kAuto);
    const std::string k = contraction_dim(kn);
    if (!tf32 || k.empty() || kn.args[0].dims.empty() || kn.args[1].dims.empty())
        return Tf32Majors::kNotTf32;
    const bool a_k_major = kn.args[0].dims.back() == k;
    const bool b_k_major = kn.args[1].dims.back() == k;
    if (b_k_major) return Tf32Majors::kLowered;
    return a_k_major ? Tf32Majors::kTransposed : Tf32Majors::kBothMnMajor;
}

void check_tf32_majors(const Kernel& kn, const Problem& problem, Reporter& rep) {
    if (tf32_majors(kn, problem) != Tf32Majors::kBothMnMajor) return;
    const TensorRef& a = kn.args[0];
    rep.error(a.loc, a.name + ", " + kn.args[1].name + ": math tf32 with a Hopper schedule needs "
                     "a K-major operand (" + contraction_dim(kn) + " contiguous) and neither is "
                     "(their contiguous dims are " + a.dims.back() + " and " +
                     kn.args[1].dims.back() + "): make one K-major, or use schedule multistage");
}

}  // namespace

bool gemm_lowered_transposed(const Kernel& kn, const Problem& problem) {
    return kn.kind == KernelKind::kGemm && tf32_majors(kn, problem) == Tf32Majors::kTransposed;
}

void check_lowering(const Kernel& kn, const Problem& problem, Reporter& rep) {
    check_chain_lowerable(kn, rep);
    if (kn.kind == KernelKind::kGemm) {
        const GemmConfig& c = kn.gemm;
        if (c.math == MathMode::kTf32x3 && c.schedule != Schedule::kMultistage) {
            rep.error(knob_loc(kn, "math"),
                      "math tf32x3 is lowered only with schedule multistage (CUTLASS 4.2 has "
                      "3xTF32 for sm_90 only in its sm_100 form); use schedule multistage");
        }
        check_tf32_majors(kn, problem, rep);
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
