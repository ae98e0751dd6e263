#include "sol/op_cost.h"

#include <cmath>

namespace kforge {
namespace {

// Per-element instruction counts, counted from SASS (sm_90a, CUDA 13.0 nvcc; redo with
// `python3 sol/count_op_instructions.py`, which needs nvcc and cuobjdump):
//   - each op's expression exactly as codegen/chain.cpp emits it (kernels/chain_ops.cuh helpers,
//     accurate libdevice expf/logf/tanhf/log1pf/erff, IEEE division and sqrt), in a kernel that
//     loads V = 4 and V = 2 floats per thread with one vector load, as kforge's map kernels do;
//   - compiled with kforge's flags (compile/compile.cpp: -gencode arch=compute_90a,code=sm_90a
//     -std=c++17 --expt-relaxed-constexpr -O3 -DNDEBUG; no fast-math), disassembled with
//     cuobjdump -sass;
//   - counted on the common path: a shortcut branch that skips MUFU work (softplus's threshold)
//     is followed, a branch that skips a special-value fix-up or the call of an out-of-line
//     slow path (division or sqrt of denormals and infinities) is taken; predicated
//     instructions count; per element = (count at V=4 - count at V=2) / 2, so loads, stores,
//     addresses and shared constants cancel;
//   - sfu = MUFU.*; simt = every other instruction except control (BRA, BSSY, BSYNC, EXIT),
//     memory and constant loads, S2R and uniform-datapath U* instructions.
// Notable: logf and log1pf use no MUFU on sm_90 (a polynomial after exponent extraction with
// integer ops); expf = 1 MUFU.EX2 + 7; tanhf = EX2 + RCP + 13; an IEEE division = RCP + FCHK +
// 5 FFMA, and a division by a constant that is not a power of two drops the RCP.
// Check against a whole generated kernel: problems/mish_softplus_chain_f32 (add b; mish;
// softplus 2 10; mul 0.5; vec 4 items 2) runs a loop body of 32 MUFU + 647 other instructions
// for 8 elements, 4 + 80.9 per element; the table gives 1+42+36+1 = 80 and 0+3+1+0 = 4.
// problems/bias_gelu_mul_f32 (add b; gelu erf; mul G): 1 + 32.9 per element against the table's
// 1 + 27; the rest is loop and operand address arithmetic, which the table leaves out (so the
// bound stays below what the generated code executes).
//
// Row ops (kernels/softmax.cuh, kernels/norm.cuh), per input element: softmax computes
// __expf(x - max) twice (the sum sweep and the output sweep), log_softmax and logsumexp once;
// __expf is 1 MUFU.EX2 + 5 (count_op_instructions.py: softmax_exp). Their max, sum and scaling
// are left to the nominal FLOPs (bounds.cpp takes the larger). Per row: softmax's 1 / sum is an
// IEEE reciprocal (1 MUFU.RCP, as division), norms' rsqrtf(var + eps) is MUFU.RSQ + 3 (+1 for
// the FFMA of var * (1/n) + eps: norm_rsqrt, 1 + 4).
constexpr double kExpfSfu = 1, kExpfSimt = 5;  // __expf

OpCost elementwise(double sfu, double simt) { return OpCost{false, sfu, simt, 0.0, 0.0}; }

bool power_of_two(double v) {
    if (!(v > 0.0) || !std::isfinite(v)) return false;
    int e = 0;
    return std::frexp(v, &e) == 0.5;
}

// Rows of a row op: the elements of the input over the normalized (or reduced) extent.
double row_count(const Op& op, const Tensor& in) {
    const auto& s = in.shape;
    const double n = static_cast<double>(in.numel());
    if (s.empty()) return 1.0;
    if (op.kind == OpKind::kGroupNorm) {
        return static_cast<double>(s[0]) *
               static_cast<double>(std::max<int64_t>(op.attrs.num_groups, 1));
    }
    const size_t axis = op.attrs.axis >= 0 && static_cast<size_t>(op.attrs.axis) < s.size()
                            ? static_cast<size_t>(op.attrs.axis)
                            : s.size() - 1;
    double cols = 1.0;
    if (op.kind == OpKind::kLayerNorm || op.kind == OpKind::kRmsNorm) {
        for (size_t i = axis; i < s.size(); ++i) cols *= static_cast<double>(s[i]);
    } else {
        cols = static_cast<double>(s[axis]);
    }
    return cols > 0.0 ? n / cols : 0.0;
}

}  // namespace

std::optional<OpCost> op_cost(const Op& op) {
    switch (op.kind) {
        case OpKind::kAdd:
        case OpKind::kSub:
        case OpKind::kMul:
        case OpKind::kScale:      // v * c
        case OpKind::kAddScalar:  // v + c
        case OpKind::kNeg:
        case OpKind::kAbs:
        case OpKind::kSquare:
        case OpKind::kMaxScalar:  // max_nan: one FMNMX-like select
            return elementwise(0, 1);
        case OpKind::kDiv:         // by a tensor: IEEE division
        case OpKind::kReciprocal:  // 1.0f / x: the same division
            return elementwise(1, 6);
        case OpKind::kMaximum:  // max_nan / min_nan of two values: compare, NaN test, select
        case OpKind::kMinimum:
            return elementwise(0, 3);
        case OpKind::kSign:  // two compares, a subtract, a convert, the NaN select
            return elementwise(0, 7);
        case OpKind::kErf:  // erff: a polynomial in x or, past |x| ~ 1, in exp form (1 EX2)
            return elementwise(1, 19);
        case OpKind::kLog1p:  // log1pf: no MUFU (as logf)
            return elementwise(0, 22);
        case OpKind::kExpm1:  // expm1f
            return elementwise(1, 27);
        case OpKind::kSin:  // accurate sinf / cosf: Cody-Waite reduction and a polynomial; the
            return elementwise(0, 21);  // Payne-Hanek slow path of huge arguments is not counted
        case OpKind::kCos:
            return elementwise(0, 22);
        case OpKind::kRelu:
        case OpKind::kLeakyRelu:
        case OpKind::kMinScalar:
            return elementwise(0, 2);
        case OpKind::kHardtanh:
        case OpKind::kClamp:
            return elementwise(0, 3);
        case OpKind::kDropout:  // eval mode: identity
            return elementwise(0, 0);
        case OpKind::kExp:
            return elementwise(1, 7);
        case OpKind::kLog:
            return elementwise(0, 25);
        case OpKind::kSqrt:
            return elementwise(1, 6);
        case OpKind::kRsqrt:
            return elementwise(1, 3);
        case OpKind::kTanh:
        case OpKind::kSigmoid:
            return elementwise(2, 13);
        case OpKind::kSilu:
            return elementwise(2, 15);
        case OpKind::kGelu:
            return op.attrs.gelu == GeluApprox::kTanh ? elementwise(2, 20) : elementwise(1, 25);
        case OpKind::kMish:
            return elementwise(3, 42);
        case OpKind::kSoftplus:  // x * beta and / beta fold away at beta 1, are FMULs at 2^k
            if (op.attrs.beta == 1.0) return elementwise(1, 34);
            if (power_of_two(op.attrs.beta)) return elementwise(1, 36);
            return elementwise(1, 42.5);
        case OpKind::kSum:
        case OpKind::kMean:
        case OpKind::kMax:
        case OpKind::kMin:
        case OpKind::kProd:  // one FMUL per element
            return OpCost{true, 0, 1, 0, 0};
        case OpKind::kSoftmax:
            return OpCost{true, 2 * kExpfSfu, 2 * kExpfSimt, 1, 6};
        case OpKind::kLogSoftmax:
        case OpKind::kLogsumexp:
            return OpCost{true, kExpfSfu, kExpfSimt, 0, 25};  // + logf(sum) per row
        case OpKind::kLayerNorm:
        case OpKind::kRmsNorm:
        case OpKind::kGroupNorm:
            return OpCost{true, 0, 0, 1, 4};
        default:
            return std::nullopt;  // matrix ops and kinds this table does not know
    }
}

std::optional<OpInstructions> count_op_instructions(const Problem& problem, const Op& op) {
    const auto cost = op_cost(op);
    if (!cost || op.inputs.empty()) return std::nullopt;
    const Tensor* in = problem.find_tensor(op.inputs.front());
    const Tensor* out = problem.find_tensor(op.output);
    if (!in || !out) return std::nullopt;
    const double elements =
        static_cast<double>(cost->per_input_element ? in->numel() : out->numel());
    const double rows = cost->per_input_element ? row_count(op, *in) : 0.0;
    return OpInstructions{elements * cost->sfu_per_element + rows * cost->sfu_per_row,
                          elements * cost->simt_per_element + rows * cost->simt_per_row};
}

}  // namespace kforge
