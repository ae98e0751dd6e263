// Names of the IR's enums, op classes and the small queries on Tensor and Problem.
#include "problem/problem.h"

#include <array>
#include <utility>

namespace kforge {
namespace {

constexpr std::array<std::pair<DType, std::string_view>, 7> kDTypeNames{{
    {DType::kF64, "f64"}, {DType::kF32, "f32"}, {DType::kF16, "f16"},
    {DType::kBF16, "bf16"}, {DType::kI32, "i32"}, {DType::kI64, "i64"}, {DType::kBool, "bool"},
}};

constexpr std::array<std::pair<PrecisionPolicy, std::string_view>, 4> kPolicyNames{{
    {PrecisionPolicy::kFp32Strict, "fp32_strict"}, {PrecisionPolicy::kTf32, "tf32"},
    {PrecisionPolicy::kBf16, "bf16"}, {PrecisionPolicy::kFp16, "fp16"},
}};

constexpr std::array<std::pair<OpKind, std::string_view>, 77> kOpNames{{
    {OpKind::kMatmul, "matmul"}, {OpKind::kLinear, "linear"},
    {OpKind::kAdd, "add"}, {OpKind::kSub, "sub"}, {OpKind::kMul, "mul"}, {OpKind::kDiv, "div"},
    {OpKind::kMaximum, "maximum"}, {OpKind::kMinimum, "minimum"},
    {OpKind::kScale, "scale"}, {OpKind::kRelu, "relu"}, {OpKind::kLeakyRelu, "leaky_relu"},
    {OpKind::kGelu, "gelu"}, {OpKind::kSilu, "silu"}, {OpKind::kSigmoid, "sigmoid"},
    {OpKind::kTanh, "tanh"}, {OpKind::kMish, "mish"}, {OpKind::kHardtanh, "hardtanh"},
    {OpKind::kClamp, "clamp"}, {OpKind::kSoftplus, "softplus"}, {OpKind::kExp, "exp"},
    {OpKind::kLog, "log"}, {OpKind::kMinScalar, "min_scalar"},
    {OpKind::kMaxScalar, "max_scalar"}, {OpKind::kDropout, "dropout"}, {OpKind::kNeg, "neg"},
    {OpKind::kAbs, "abs"}, {OpKind::kSqrt, "sqrt"}, {OpKind::kRsqrt, "rsqrt"},
    {OpKind::kSquare, "square"}, {OpKind::kAddScalar, "add_scalar"},
    {OpKind::kErf, "erf"}, {OpKind::kLog1p, "log1p"}, {OpKind::kExpm1, "expm1"},
    {OpKind::kSin, "sin"}, {OpKind::kCos, "cos"}, {OpKind::kSign, "sign"},
    {OpKind::kReciprocal, "reciprocal"},
    {OpKind::kSum, "sum"}, {OpKind::kMean, "mean"}, {OpKind::kMax, "max"}, {OpKind::kMin, "min"},
    {OpKind::kProd, "prod"},
    {OpKind::kSoftmax, "softmax"}, {OpKind::kLogSoftmax, "log_softmax"},
    {OpKind::kLogsumexp, "logsumexp"}, {OpKind::kLayerNorm, "layer_norm"},
    {OpKind::kRmsNorm, "rms_norm"}, {OpKind::kGroupNorm, "group_norm"},
    {OpKind::kL1Normalize, "l1_normalize"}, {OpKind::kL2Normalize, "l2_normalize"},
    {OpKind::kCumsum, "cumsum"}, {OpKind::kCumprod, "cumprod"},
    {OpKind::kConv2d, "conv2d"},
    {OpKind::kArgmax, "argmax"}, {OpKind::kArgmin, "argmin"},
    {OpKind::kMaskedFill, "masked_fill"}, {OpKind::kWhere, "where"},
    {OpKind::kTril, "tril"}, {OpKind::kTriu, "triu"}, {OpKind::kCrossEntropy, "cross_entropy"},
    {OpKind::kReshape, "reshape"}, {OpKind::kExpand, "expand"}, {OpKind::kPermute, "permute"},
    {OpKind::kSlice, "slice"}, {OpKind::kCat, "cat"}, {OpKind::kPad, "pad"},
    {OpKind::kMaxPool, "max_pool"}, {OpKind::kAvgPool, "avg_pool"},
    {OpKind::kAdaptiveAvgPool, "adaptive_avg_pool"}, {OpKind::kAdaptiveMaxPool, "adaptive_max_pool"},
    {OpKind::kConv1d, "conv1d"}, {OpKind::kConv3d, "conv3d"},
    {OpKind::kConvTranspose1d, "conv_transpose1d"}, {OpKind::kConvTranspose2d, "conv_transpose2d"},
    {OpKind::kConvTranspose3d, "conv_transpose3d"},
    {OpKind::kLstm, "lstm"}, {OpKind::kGru, "gru"},
}};

template <typename Table, typename Enum>
std::string_view name_of(const Table& table, Enum e) {
    for (const auto& [value, name] : table) {
        if (value == e) return name;
    }
    return "?";
}

template <typename Enum, typename Table>
std::optional<Enum> value_of(const Table& table, std::string_view s) {
    for (const auto& [value, name] : table) {
        if (name == s) return value;
    }
    return std::nullopt;
}

}  // namespace

std::string_view to_string(DType d) { return name_of(kDTypeNames, d); }
std::optional<DType> dtype_from_string(std::string_view s) {
    return value_of<DType>(kDTypeNames, s);
}

int dtype_bytes(DType d) {
    switch (d) {
        case DType::kF64: case DType::kI64: return 8;
        case DType::kF32: case DType::kI32: return 4;
        case DType::kF16: case DType::kBF16: return 2;
        case DType::kBool: return 1;
    }
    return 0;
}

std::string_view to_string(PrecisionPolicy p) { return name_of(kPolicyNames, p); }
std::optional<PrecisionPolicy> policy_from_string(std::string_view s) {
    return value_of<PrecisionPolicy>(kPolicyNames, s);
}

std::string_view to_string(OpKind k) { return name_of(kOpNames, k); }
std::optional<OpKind> op_from_string(std::string_view s) { return value_of<OpKind>(kOpNames, s); }

std::vector<std::string_view> all_op_names() {
    std::vector<std::string_view> names;
    for (const auto& entry : kOpNames) names.push_back(entry.second);
    return names;
}

OpClass op_class(OpKind k) {
    switch (k) {
        case OpKind::kMatmul: case OpKind::kLinear:
            return OpClass::kMatrix;
        case OpKind::kSum: case OpKind::kMean: case OpKind::kMax: case OpKind::kMin:
        case OpKind::kProd: case OpKind::kArgmax: case OpKind::kArgmin:
            return OpClass::kReduction;
        case OpKind::kSoftmax: case OpKind::kLogSoftmax: case OpKind::kLogsumexp:
        case OpKind::kLayerNorm: case OpKind::kRmsNorm: case OpKind::kGroupNorm:
        case OpKind::kL1Normalize: case OpKind::kL2Normalize:
        case OpKind::kCumsum: case OpKind::kCumprod: case OpKind::kCrossEntropy:
            return OpClass::kRowwise;
        case OpKind::kConv2d: case OpKind::kConv1d: case OpKind::kConv3d:
        case OpKind::kConvTranspose1d: case OpKind::kConvTranspose2d: case OpKind::kConvTranspose3d:
            return OpClass::kConv;
        case OpKind::kMaxPool: case OpKind::kAvgPool: case OpKind::kAdaptiveAvgPool:
        case OpKind::kAdaptiveMaxPool:
            return OpClass::kPool;
        case OpKind::kReshape: case OpKind::kExpand: case OpKind::kPermute: case OpKind::kSlice:
        case OpKind::kCat: case OpKind::kPad:
            return OpClass::kShape;
        case OpKind::kLstm: case OpKind::kGru:
            return OpClass::kRecurrent;
        default:
            return OpClass::kElementwise;
    }
}

int spatial_rank(OpKind k) {
    switch (k) {
        case OpKind::kConv1d: case OpKind::kConvTranspose1d: return 1;
        case OpKind::kConv2d: case OpKind::kConvTranspose2d: return 2;
        case OpKind::kConv3d: case OpKind::kConvTranspose3d: return 3;
        default: return 0;
    }
}

bool is_conv_transpose(OpKind k) {
    return k == OpKind::kConvTranspose1d || k == OpKind::kConvTranspose2d ||
           k == OpKind::kConvTranspose3d;
}

std::string_view to_string(TensorRole r) {
    switch (r) {
        case TensorRole::kInput: return "input";
        case TensorRole::kParam: return "param";
        case TensorRole::kIntermediate: return "intermediate";
        case TensorRole::kOutput: return "output";
    }
    return "?";
}

std::string_view to_string(OpClass c) {
    switch (c) {
        case OpClass::kMatrix: return "matrix";
        case OpClass::kElementwise: return "elementwise";
        case OpClass::kReduction: return "reduction";
        case OpClass::kRowwise: return "rowwise";
        case OpClass::kConv: return "conv";
        case OpClass::kShape: return "shape";
        case OpClass::kPool: return "pool";
        case OpClass::kRecurrent: return "recurrent";
    }
    return "?";
}

int64_t Tensor::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

int64_t Tensor::bytes() const { return numel() * dtype_bytes(dtype); }

const Tensor* Problem::find_tensor(std::string_view tensor_name) const {
    auto it = tensor_index.find(tensor_name);
    if (it != tensor_index.end() && it->second < tensors.size() &&
        tensors[it->second].name == tensor_name)
        return &tensors[it->second];
    for (const Tensor& t : tensors) {  // not indexed, or indexed before tensors changed
        if (t.name == tensor_name) return &t;
    }
    return nullptr;
}

void Problem::index_tensors() {
    tensor_index.clear();
    for (size_t i = 0; i < tensors.size(); ++i) tensor_index.emplace(tensors[i].name, i);
}

const Op* Problem::producer(std::string_view tensor_name) const {
    for (const Op& op : ops) {
        if (op.output == tensor_name) return &op;
    }
    return nullptr;
}

std::vector<const Tensor*> Problem::graph_inputs() const {
    std::vector<const Tensor*> result;
    for (const Tensor& t : tensors) {
        if (t.role == TensorRole::kInput || t.role == TensorRole::kParam) result.push_back(&t);
    }
    return result;
}

}  // namespace kforge
