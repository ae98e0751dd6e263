// Names of the kernel language's enums: the spelling in programs (docs/language.md).
#include "dsl/ast.h"

#include <array>
#include <utility>

namespace kforge::dsl {
namespace {

template <typename E, size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
    for (const auto& [value, name] : table) {
        if (value == e) return name;
    }
    return "?";
}

template <typename E, size_t N>
std::optional<E> value_of(const std::array<std::pair<E, std::string_view>, N>& table,
                          std::string_view s) {
    for (const auto& [value, name] : table) {
        if (name == s) return value;
    }
    return std::nullopt;
}

constexpr std::array<std::pair<KernelKind, std::string_view>, 8> kKernelKinds{{
    {KernelKind::kGemm, "gemm"}, {KernelKind::kRowwise, "rowwise"}, {KernelKind::kMap, "map"},
    {KernelKind::kConv2d, "conv2d"}, {KernelKind::kPool, "pool"},
    {KernelKind::kAttention, "attention"}, {KernelKind::kCopy, "copy"},
    {KernelKind::kRnn, "rnn"}}};

constexpr std::array<std::pair<ChainOpKind, std::string_view>, 38> kChainOps{{
    {ChainOpKind::kAdd, "add"},       {ChainOpKind::kSub, "sub"},
    {ChainOpKind::kMul, "mul"},       {ChainOpKind::kDiv, "div"},
    {ChainOpKind::kRsub, "rsub"},     {ChainOpKind::kRdiv, "rdiv"},
    {ChainOpKind::kRelu, "relu"},     {ChainOpKind::kLeakyRelu, "leaky_relu"},
    {ChainOpKind::kGelu, "gelu"},     {ChainOpKind::kSilu, "silu"},
    {ChainOpKind::kSigmoid, "sigmoid"}, {ChainOpKind::kTanh, "tanh"},
    {ChainOpKind::kMish, "mish"},     {ChainOpKind::kSoftplus, "softplus"},
    {ChainOpKind::kExp, "exp"},       {ChainOpKind::kLog, "log"},
    {ChainOpKind::kNeg, "neg"},       {ChainOpKind::kAbs, "abs"},
    {ChainOpKind::kSqrt, "sqrt"},     {ChainOpKind::kRsqrt, "rsqrt"},
    {ChainOpKind::kSquare, "square"}, {ChainOpKind::kErf, "erf"},
    {ChainOpKind::kLog1p, "log1p"},   {ChainOpKind::kExpm1, "expm1"},
    {ChainOpKind::kSin, "sin"},       {ChainOpKind::kCos, "cos"},
    {ChainOpKind::kSign, "sign"},     {ChainOpKind::kReciprocal, "reciprocal"},
    {ChainOpKind::kClamp, "clamp"},
    {ChainOpKind::kMin, "min"},       {ChainOpKind::kMax, "max"},
    {ChainOpKind::kMaskedFill, "masked_fill"}, {ChainOpKind::kLoad, "load"},
    {ChainOpKind::kCast, "cast"},     {ChainOpKind::kStore, "store"},
    {ChainOpKind::kReduce, "reduce"}, {ChainOpKind::kLet, "let"},
    {ChainOpKind::kUse, "use"}}};

constexpr std::array<std::pair<ReduceKind, std::string_view>, 4> kReduceKinds{{
    {ReduceKind::kSum, "sum"}, {ReduceKind::kMax, "max"},
    {ReduceKind::kMin, "min"}, {ReduceKind::kMean, "mean"}}};

constexpr std::array<std::pair<Schedule, std::string_view>, 6> kSchedules{{
    {Schedule::kTmaWarpSpecialized, "tma_ws"}, {Schedule::kCooperative, "cooperative"},
    {Schedule::kPingpong, "pingpong"}, {Schedule::kStreamK, "stream_k"},
    {Schedule::kMultistage, "multistage"}, {Schedule::kDirect, "direct"}}};

constexpr std::array<std::pair<MathMode, std::string_view>, 6> kMathModes{{
    {MathMode::kAuto, "auto"}, {MathMode::kF32Simt, "f32_simt"}, {MathMode::kTf32, "tf32"},
    {MathMode::kTf32x3, "tf32x3"}, {MathMode::kBf16, "bf16"}, {MathMode::kF16, "f16"}}};

constexpr std::array<std::pair<Raster, std::string_view>, 3> kRasters{{
    {Raster::kAuto, "auto"}, {Raster::kAlongM, "along_m"}, {Raster::kAlongN, "along_n"}}};

constexpr std::array<std::pair<RowOp, std::string_view>, 20> kRowOps{{
    {RowOp::kSoftmax, "softmax"}, {RowOp::kLogSoftmax, "log_softmax"},
    {RowOp::kLogsumexp, "logsumexp"}, {RowOp::kLayerNorm, "layer_norm"},
    {RowOp::kRmsNorm, "rms_norm"}, {RowOp::kGroupNorm, "group_norm"}, {RowOp::kSum, "sum"},
    {RowOp::kMean, "mean"}, {RowOp::kMax, "max"}, {RowOp::kMin, "min"},
    {RowOp::kProd, "prod"},
    {RowOp::kL1Normalize, "l1_normalize"}, {RowOp::kL2Normalize, "l2_normalize"},
    {RowOp::kCumsum, "cumsum"}, {RowOp::kCumprod, "cumprod"},
    {RowOp::kArgmax, "argmax"}, {RowOp::kArgmin, "argmin"}, {RowOp::kCrossEntropy, "cross_entropy"},
    {RowOp::kTril, "tril"}, {RowOp::kTriu, "triu"}}};

}  // namespace

std::string_view to_string(KernelKind k) { return name_of(kKernelKinds, k); }
std::optional<KernelKind> kernel_kind_from_string(std::string_view s) {
    return value_of(kKernelKinds, s);
}
std::string_view to_string(ChainOpKind k) { return name_of(kChainOps, k); }
std::optional<ChainOpKind> chain_op_from_string(std::string_view s) {
    return value_of(kChainOps, s);
}
std::string_view to_string(ReduceKind k) { return name_of(kReduceKinds, k); }
std::optional<ReduceKind> reduce_kind_from_string(std::string_view s) {
    return value_of(kReduceKinds, s);
}
std::string_view to_string(Schedule s) { return name_of(kSchedules, s); }
std::optional<Schedule> schedule_from_string(std::string_view s) {
    return value_of(kSchedules, s);
}
std::string_view to_string(MathMode m) { return name_of(kMathModes, m); }
std::optional<MathMode> math_from_string(std::string_view s) { return value_of(kMathModes, s); }
std::string_view to_string(Raster r) { return name_of(kRasters, r); }
std::optional<Raster> raster_from_string(std::string_view s) { return value_of(kRasters, s); }
std::string_view to_string(RowOp r) { return name_of(kRowOps, r); }
std::optional<RowOp> row_op_from_string(std::string_view s) { return value_of(kRowOps, s); }

Program strip_locations(Program p) {
    p.loc = {};
    for (Kernel& k : p.kernels) {
        k.loc = {};
        k.knob_locs.clear();
        for (TensorRef& t : k.args) t.loc = {};
        for (std::vector<ChainOp>* ops : {&k.pre, &k.chain}) {
            for (ChainOp& op : *ops) {
                op.loc = {};
                op.name_loc = {};
                if (op.tensor) op.tensor->loc = {};
            }
        }
    }
    return p;
}

}  // namespace kforge::dsl
