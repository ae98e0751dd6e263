#include "sol/op_cost.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace kforge {
namespace {

// Per-element instruction counts, counted from SASS (CUDA 13.0 nvcc, cuobjdump -sass; redo a
// column with `python3 sol/count_op_instructions.py --arch ARCH`, which needs nvcc and cuobjdump):
//   - each op's expression exactly as codegen/chain.cpp emits it (kernels/chain_ops.cuh helpers,
//     accurate libdevice expf/logf/tanhf/log1pf/erff, IEEE division and sqrt), in a kernel that
//     loads V = 4 and V = 2 floats per thread with one vector load, as kforge's map kernels do;
//   - compiled with kforge's flags (compile/compile.cpp: -gencode arch=compute_XY,code=sm_XY for
//     the arch, -std=c++17 --expt-relaxed-constexpr -O3 -DNDEBUG; no fast-math), disassembled
//     with cuobjdump -sass;
//   - counted on the common path: a shortcut branch that skips MUFU work (softplus's threshold)
//     is followed, a branch that skips a special-value fix-up or the call of an out-of-line
//     slow path (division or sqrt of denormals and infinities) is taken; predicated
//     instructions count; per element = (count at V=4 - count at V=2) / 2, so loads, stores,
//     addresses and shared constants cancel;
//   - sfu = MUFU.*; simt = every other instruction except control (BRA, BSSY, BSYNC, EXIT),
//     memory and constant loads, S2R and uniform-datapath U* instructions.
// Notable: logf and log1pf use no MUFU (a polynomial after exponent extraction with integer ops);
// expf = 1 MUFU.EX2 + 7; tanhf = EX2 + RCP + 13; an IEEE division = RCP + FCHK + 5 FFMA, and a
// division by a constant that is not a power of two drops the RCP. Where the archs differ: sm_100
// spends more on logf-based ops (log1pf 26, softplus 38-46, mish 47) and on sign (14); sm_80
// divides by a constant in 8; sm_89 does softplus at a beta that is no power of two in 41.5.
// Counted 2026-12-06 (CUDA 13.0 nvcc, cuobjdump 13.2); sm_90a's column is the one counted first
// (2026-12, same flags) and did not change.
// Check against a whole generated kernel (sm_90a): problems/mish_softplus_chain_f32 (add b; mish;
// softplus 2 10; mul 0.5; vec 4 items 2) runs a loop body of 32 MUFU + 647 other instructions
// for 8 elements, 4 + 80.9 per element; the table gives 1+42+36+1 = 80 and 0+3+1+0 = 4.
// problems/bias_gelu_mul_f32 (add b; gelu erf; mul G): 1 + 32.9 per element against the table's
// 1 + 27; the rest is loop and operand address arithmetic, which the table leaves out (so the
// bound stays below what the generated code executes).
//
// Row ops (kernels/softmax.cuh, kernels/norm.cuh), per input element: softmax computes
// __expf(x - max) twice (the sum sweep and the output sweep), log_softmax and logsumexp once;
// __expf is 1 MUFU.EX2 + 5 (row softmax_exp). Their max, sum and scaling are left to the nominal
// FLOPs (bounds.cpp takes the larger). Per row: softmax's 1 / sum is an IEEE reciprocal (1
// MUFU.RCP, as division), norms' rsqrtf(var + eps) is MUFU.RSQ + 3 (+1 for the FFMA of
// var * (1/n) + eps: row norm_rsqrt, 1 + 4), log_softmax's logf(sum) is row log.

struct Count {
    double sfu = 0.0, simt = 0.0;
};

// The counted archs, in the order of a row's columns.
constexpr std::array<std::string_view, 4> kArchs = {"sm_80", "sm_89", "sm_90a", "sm_100"};
constexpr size_t kDefaultColumn = 2;  // sm_90a

enum class Row {
    kAdd, kScale, kDiv, kDivScalar3, kRelu, kClamp, kMinScalar, kMaxScalar, kMaximum, kNeg, kAbs,
    kSquare, kExp, kLog, kSqrt, kRsqrt, kErf, kLog1p, kExpm1, kSin, kCos, kSign, kReciprocal,
    kTanh, kSigmoid, kSilu, kGeluErf, kGeluTanh, kMish, kSoftplusBeta1, kSoftplusBeta2,
    kSoftplusBeta3, kSoftmaxExp, kNormRsqrt, kCount
};

// {sfu, simt} per element on sm_80, sm_89, sm_90a, sm_100 (count_op_instructions.py's rows:
// add/sub/mul/add_scalar/scale_0.5 share kAdd's and kScale's 1; leaky_relu is relu's 2; minimum
// is maximum's 3).
constexpr std::array<std::array<Count, 4>, static_cast<size_t>(Row::kCount)> kTable = {{
    /* add          */ {{{0, 1}, {0, 1}, {0, 1}, {0, 1}}},
    /* scale        */ {{{0, 1}, {0, 1}, {0, 1}, {0, 1}}},
    /* div          */ {{{1, 6}, {1, 6}, {1, 6}, {1, 6}}},
    /* div_scalar_3 */ {{{0, 8}, {0, 7}, {0, 7}, {0, 7}}},
    /* relu         */ {{{0, 2}, {0, 2}, {0, 2}, {0, 2}}},
    /* clamp        */ {{{0, 3}, {0, 3}, {0, 3}, {0, 3}}},
    /* min_scalar   */ {{{0, 2}, {0, 2}, {0, 2}, {0, 2}}},
    /* max_scalar   */ {{{0, 1}, {0, 1}, {0, 1}, {0, 1}}},
    /* maximum      */ {{{0, 3}, {0, 3}, {0, 3}, {0, 3}}},
    /* neg          */ {{{0, 1}, {0, 1}, {0, 1}, {0, 1}}},
    /* abs          */ {{{0, 1}, {0, 1}, {0, 1}, {0, 1}}},
    /* square       */ {{{0, 1}, {0, 1}, {0, 1}, {0, 1}}},
    /* exp          */ {{{1, 7}, {1, 7}, {1, 7}, {1, 7}}},
    /* log          */ {{{0, 25}, {0, 25}, {0, 25}, {0, 24}}},
    /* sqrt         */ {{{1, 6}, {1, 6}, {1, 6}, {1, 6}}},
    /* rsqrt        */ {{{1, 3}, {1, 3}, {1, 3}, {1, 3}}},
    /* erf          */ {{{1, 19}, {1, 19}, {1, 19}, {1, 20}}},
    /* log1p        */ {{{0, 22}, {0, 22}, {0, 22}, {0, 26}}},
    /* expm1        */ {{{1, 27}, {1, 27}, {1, 27}, {1, 27}}},
    /* sin          */ {{{0, 21}, {0, 21}, {0, 21}, {0, 21}}},
    /* cos          */ {{{0, 22}, {0, 22}, {0, 22}, {0, 22}}},
    /* sign         */ {{{0, 7}, {0, 7}, {0, 7}, {0, 14}}},
    /* reciprocal   */ {{{1, 6}, {1, 6}, {1, 6}, {1, 6}}},
    /* tanh         */ {{{2, 13}, {2, 13}, {2, 13}, {2, 13}}},
    /* sigmoid      */ {{{2, 13}, {2, 13}, {2, 13}, {2, 15}}},
    /* silu         */ {{{2, 15}, {2, 15}, {2, 15}, {2, 15}}},
    /* gelu_erf     */ {{{1, 25}, {1, 25}, {1, 25}, {1, 24}}},
    /* gelu_tanh    */ {{{2, 20}, {2, 20}, {2, 20}, {2, 20}}},
    /* mish         */ {{{3, 42}, {3, 42}, {3, 42}, {3, 47}}},
    /* softplus b1  */ {{{1, 34}, {1, 34}, {1, 34}, {1, 38}}},
    /* softplus 2^k */ {{{1, 36}, {1, 36}, {1, 36}, {1, 40}}},
    /* softplus b   */ {{{1, 42.5}, {1, 41.5}, {1, 42.5}, {1, 46}}},
    /* softmax_exp  */ {{{1, 5}, {1, 5}, {1, 5}, {1, 5}}},
    /* norm_rsqrt   */ {{{1, 4}, {1, 4}, {1, 4}, {1, 4}}},
}};

size_t column(std::string_view arch) {
    for (size_t i = 0; i < kArchs.size(); ++i)
        if (kArchs[i] == arch) return i;
    return kDefaultColumn;
}

Count count(Row row, size_t col) { return kTable[static_cast<size_t>(row)][col]; }

OpCost elementwise(Row row, size_t col) {
    const Count c = count(row, col);
    return OpCost{false, c.sfu, c.simt, 0.0, 0.0};
}

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

std::string_view counted_arch(std::string_view arch) { return kArchs[column(arch)]; }

std::optional<OpCost> op_cost(const Op& op, std::string_view arch) {
    const size_t col = column(arch);
    const auto row_op = [&](Row per_element, double times, Count per_row) {
        const Count e = count(per_element, col);
        return OpCost{true, times * e.sfu, times * e.simt, per_row.sfu, per_row.simt};
    };
    switch (op.kind) {
        case OpKind::kAdd:
        case OpKind::kSub:
        case OpKind::kMul:
        case OpKind::kAddScalar:  // v + c
            return elementwise(Row::kAdd, col);
        case OpKind::kScale:  // v * c
            return elementwise(Row::kScale, col);
        case OpKind::kNeg:
            return elementwise(Row::kNeg, col);
        case OpKind::kAbs:
            return elementwise(Row::kAbs, col);
        case OpKind::kSquare:
            return elementwise(Row::kSquare, col);
        case OpKind::kMaxScalar:  // max_nan with a number: one FMNMX-like select
            return elementwise(Row::kMaxScalar, col);
        case OpKind::kDiv:  // by a tensor: IEEE division
            return elementwise(Row::kDiv, col);
        case OpKind::kReciprocal:  // 1.0f / x: the same division
            return elementwise(Row::kReciprocal, col);
        case OpKind::kMaximum:  // max_nan / min_nan of two values: compare, NaN test, select
        case OpKind::kMinimum:
            return elementwise(Row::kMaximum, col);
        case OpKind::kSign:  // two compares, a subtract, a convert, the NaN select
            return elementwise(Row::kSign, col);
        case OpKind::kErf:  // erff: a polynomial in x or, past |x| ~ 1, in exp form (1 EX2)
            return elementwise(Row::kErf, col);
        case OpKind::kLog1p:  // log1pf: no MUFU (as logf)
            return elementwise(Row::kLog1p, col);
        case OpKind::kExpm1:
            return elementwise(Row::kExpm1, col);
        case OpKind::kSin:  // accurate sinf / cosf: Cody-Waite reduction and a polynomial; the
            return elementwise(Row::kSin, col);  // Payne-Hanek slow path is not counted
        case OpKind::kCos:
            return elementwise(Row::kCos, col);
        case OpKind::kRelu:
        case OpKind::kLeakyRelu:
            return elementwise(Row::kRelu, col);
        case OpKind::kMinScalar:
            return elementwise(Row::kMinScalar, col);
        case OpKind::kHardtanh:
        case OpKind::kClamp:
            return elementwise(Row::kClamp, col);
        case OpKind::kDropout:  // eval mode: identity
            return OpCost{};
        case OpKind::kExp:
            return elementwise(Row::kExp, col);
        case OpKind::kLog:
            return elementwise(Row::kLog, col);
        case OpKind::kSqrt:
            return elementwise(Row::kSqrt, col);
        case OpKind::kRsqrt:
            return elementwise(Row::kRsqrt, col);
        case OpKind::kTanh:
            return elementwise(Row::kTanh, col);
        case OpKind::kSigmoid:
            return elementwise(Row::kSigmoid, col);
        case OpKind::kSilu:
            return elementwise(Row::kSilu, col);
        case OpKind::kGelu:
            return elementwise(op.attrs.gelu == GeluApprox::kTanh ? Row::kGeluTanh : Row::kGeluErf,
                               col);
        case OpKind::kMish:
            return elementwise(Row::kMish, col);
        case OpKind::kSoftplus:  // x * beta and / beta fold away at beta 1, are FMULs at 2^k
            if (op.attrs.beta == 1.0) return elementwise(Row::kSoftplusBeta1, col);
            if (power_of_two(op.attrs.beta)) return elementwise(Row::kSoftplusBeta2, col);
            return elementwise(Row::kSoftplusBeta3, col);
        case OpKind::kSum:
        case OpKind::kMean:
        case OpKind::kMax:
        case OpKind::kMin:
        case OpKind::kProd:  // one FMUL (FADD, FMNMX) per element
            return row_op(Row::kAdd, 1.0, Count{});
        case OpKind::kSoftmax:  // __expf twice per element, 1 / sum per row
            return row_op(Row::kSoftmaxExp, 2.0, count(Row::kReciprocal, col));
        case OpKind::kLogSoftmax:
        case OpKind::kLogsumexp:  // __expf once per element, logf(sum) per row
            return row_op(Row::kSoftmaxExp, 1.0, count(Row::kLog, col));
        case OpKind::kLayerNorm:
        case OpKind::kRmsNorm:
        case OpKind::kGroupNorm:
            return OpCost{true, 0, 0, count(Row::kNormRsqrt, col).sfu,
                          count(Row::kNormRsqrt, col).simt};
        default:
            return std::nullopt;  // matrix ops and kinds this table does not know
    }
}

OpCost divide_by_number_cost(double divisor, std::string_view arch) {
    return elementwise(power_of_two(std::fabs(divisor)) ? Row::kScale : Row::kDivScalar3,
                       column(arch));
}

std::optional<OpInstructions> count_op_instructions(const Problem& problem, const Op& op,
                                                    std::string_view arch) {
    const auto cost = op_cost(op, arch);
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
