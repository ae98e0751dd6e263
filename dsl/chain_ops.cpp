#include "dsl/chain_ops.h"

namespace kforge::dsl {

const std::vector<ChainOpSpec>& chain_op_table() {
    using K = ChainOpKind;
    using A = ChainArgs;
    static const std::vector<ChainOpSpec> table = {
        {"add", K::kAdd, A::kTensorOrNumber, {}, "add T[..] | add 1.5 | add t",
         "value + tensor (broadcast by dims), number or named value"},
        {"sub", K::kSub, A::kTensorOrNumber, {}, "sub T[..] | sub 1.5 | sub t", "value - operand"},
        {"mul", K::kMul, A::kTensorOrNumber, {}, "mul T[..] | mul 1.5 | mul t", "value * operand"},
        {"div", K::kDiv, A::kTensorOrNumber, {}, "div T[..] | div 1.5 | div t", "value / operand"},
        {"rsub", K::kRsub, A::kTensorOrNumber, {}, "rsub T[..] | rsub 1.5 | rsub t",
         "operand - value"},
        {"rdiv", K::kRdiv, A::kTensorOrNumber, {}, "rdiv T[..] | rdiv 1.5 | rdiv t",
         "operand / value (softsign: let x; abs; add 1; rdiv x)"},
        {"relu", K::kRelu, A::kNone, {}, "relu", "max(x, 0)"},
        {"leaky_relu", K::kLeakyRelu, A::kOptionalNumber, {0.01}, "leaky_relu [slope]",
         "negative slope, default 0.01"},
        {"gelu", K::kGelu, A::kGeluApprox, {}, "gelu [erf|tanh]", "GELU, default erf"},
        {"silu", K::kSilu, A::kNone, {}, "silu", "x * sigmoid(x)"},
        {"sigmoid", K::kSigmoid, A::kNone, {}, "sigmoid", ""},
        {"tanh", K::kTanh, A::kNone, {}, "tanh", ""},
        {"mish", K::kMish, A::kNone, {}, "mish", "x * tanh(softplus(x))"},
        {"softplus", K::kSoftplus, A::kSoftplus, {1.0, 20.0}, "softplus [beta threshold]",
         "defaults 1 20"},
        {"exp", K::kExp, A::kNone, {}, "exp", ""},
        {"log", K::kLog, A::kNone, {}, "log", ""},
        {"neg", K::kNeg, A::kNone, {}, "neg", ""},
        {"abs", K::kAbs, A::kNone, {}, "abs", ""},
        {"sqrt", K::kSqrt, A::kNone, {}, "sqrt", ""},
        {"rsqrt", K::kRsqrt, A::kNone, {}, "rsqrt", ""},
        {"square", K::kSquare, A::kNone, {}, "square", ""},
        {"erf", K::kErf, A::kNone, {}, "erf", ""},
        {"log1p", K::kLog1p, A::kNone, {}, "log1p", "log(1 + x)"},
        {"expm1", K::kExpm1, A::kNone, {}, "expm1", "exp(x) - 1"},
        {"sin", K::kSin, A::kNone, {}, "sin", ""},
        {"cos", K::kCos, A::kNone, {}, "cos", ""},
        {"sign", K::kSign, A::kNone, {}, "sign", "1, -1 or 0"},
        {"reciprocal", K::kReciprocal, A::kNone, {}, "reciprocal", "1 / x (as rdiv 1)"},
        {"clamp", K::kClamp, A::kTwoNumbers, {}, "clamp lo hi", "clamp into [lo, hi]"},
        {"min", K::kMin, A::kTensorOrNumber, {}, "min c | min T[..] | min t",
         "min(x, operand) (NaN from either side)"},
        {"max", K::kMax, A::kTensorOrNumber, {}, "max c | max T[..] | max t",
         "max(x, operand) (NaN from either side)"},
        {"masked_fill", K::kMaskedFill, A::kMaskThenOperand, {}, "masked_fill M[..] 1.5 | masked_fill M[..] t",
         "M ? operand : value, M a bool tensor (broadcast by dims; where(M, t, x) with a name)"},
        {"load", K::kLoad, A::kTensor, {}, "load T[..]",
         "the value is T's element (broadcast by dims; where: let t; load B[..]; masked_fill M[..] t)"},
        {"cast", K::kCast, A::kDType, {}, "cast f32|f16|bf16", "value dtype from here on"},
        {"store", K::kStore, A::kTensor, {}, "store Y[..]",
         "write the value (several stores allowed; the first defines an intermediate)"},
        {"reduce", K::kReduce, A::kReduce, {}, "reduce sum|max|min|mean over D -> S[..]",
         "reduce the value over dim D into tensor S"},
        {"let", K::kLet, A::kName, {}, "let t",
         "name the value t (a new name per kernel, no tensor's name); t reads it later"},
        {"use", K::kUse, A::kName, {}, "use t", "the value is t again (t bound by let)"},
    };
    return table;
}

const ChainOpSpec* find_chain_op(std::string_view name) {
    for (const ChainOpSpec& s : chain_op_table()) {
        if (s.name == name) return &s;
    }
    return nullptr;
}

const std::vector<RowOpSpec>& row_op_table() {
    static const std::vector<RowOpSpec> table = {
        {"softmax", RowOp::kSoftmax, 1, "softmax over the row"},
        {"log_softmax", RowOp::kLogSoftmax, 1, "log of softmax"},
        {"logsumexp", RowOp::kLogsumexp, 1, "log(sum(exp(x))), one value per row"},
        {"layer_norm", RowOp::kLayerNorm, 3, "(x - mean) / sqrt(var + eps) [* weight [+ bias]]"},
        {"rms_norm", RowOp::kRmsNorm, 2, "x / sqrt(mean(x^2) + eps) [* weight]"},
        {"group_norm", RowOp::kGroupNorm, 3, "layer_norm per channel group [* weight [+ bias]]"},
        {"sum", RowOp::kSum, 1, "sum of the row"},
        {"mean", RowOp::kMean, 1, "mean of the row"},
        {"max", RowOp::kMax, 1, "max of the row"},
        {"min", RowOp::kMin, 1, "min of the row"},
        {"prod", RowOp::kProd, 1, "product of the row (f32, init 1)"},
        {"l1_normalize", RowOp::kL1Normalize, 1, "x / max(sum(|x|), eps)"},
        {"l2_normalize", RowOp::kL2Normalize, 1, "x / max(sqrt(sum(x^2)), eps)"},
        {"cumsum", RowOp::kCumsum, 1, "prefix sum along the row (reverse, exclusive flags)"},
        {"cumprod", RowOp::kCumprod, 1, "prefix product along the row (reverse, exclusive flags)"},
        {"argmax", RowOp::kArgmax, 1, "i64 index of the row's first max (NaN counts as the max)"},
        {"argmin", RowOp::kArgmin, 1, "i64 index of the row's first min (NaN counts as the min)"},
        {"cross_entropy", RowOp::kCrossEntropy, 2,
         "(logits[N,C], targets[N]): mean over rows of logsumexp(row) - row[target], a scalar"},
        {"tril", RowOp::kTril, 1, "lower triangle of the last two dims (the problem op's diagonal)"},
        {"triu", RowOp::kTriu, 1, "upper triangle of the last two dims (the problem op's diagonal)"},
    };
    return table;
}

const RowOpSpec* find_row_op(std::string_view name) {
    for (const RowOpSpec& s : row_op_table()) {
        if (s.name == name) return &s;
    }
    return nullptr;
}

}  // namespace kforge::dsl
