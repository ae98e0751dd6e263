// The problem IR: named dims, tensors, an op graph in topological order, outputs, a precision
// policy and a tolerance. Produced by parse_problem() (problem/spec.h), which validates it and
// infers every intermediate tensor's shape and dtype; all other stages read it, none changes it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

enum class DType { kF64, kF32, kF16, kBF16, kI32, kI64 };
std::string_view to_string(DType d);
std::optional<DType> dtype_from_string(std::string_view s);
int dtype_bytes(DType d);

// What compute precision a candidate may use; results are reported per policy.
enum class PrecisionPolicy { kFp32Strict, kTf32, kBf16, kFp16 };
std::string_view to_string(PrecisionPolicy p);
std::optional<PrecisionPolicy> policy_from_string(std::string_view s);

enum class OpKind {
    // matrix
    kMatmul, kLinear,
    // binary element-wise with broadcasting (numpy rules)
    kAdd, kSub, kMul, kDiv,
    kMaximum, kMinimum,  // NaN from either operand propagates (torch.maximum / minimum)
    // unary element-wise
    kScale, kRelu, kLeakyRelu, kGelu, kSilu, kSigmoid, kTanh, kMish, kHardtanh, kClamp,
    kSoftplus, kExp, kLog, kMinScalar, kMaxScalar, kDropout, kNeg, kAbs, kSqrt, kRsqrt, kSquare,
    kAddScalar, kErf, kLog1p, kExpm1, kSin, kCos, kSign, kReciprocal,
    // reductions over one axis
    kSum, kMean, kMax, kMin, kProd,
    // row-wise (over one axis, default the last)
    kSoftmax, kLogSoftmax, kLogsumexp, kLayerNorm, kRmsNorm, kGroupNorm,
    kL1Normalize, kL2Normalize,  // x / max(||x||_p over axis, eps)
    kCumsum, kCumprod,           // inclusive (or exclusive, reverse) prefix scan over axis
    // convolution (PyTorch F.conv2d: NCHW input, KCRS weight, optional bias [K])
    kConv2d,
};
std::string_view to_string(OpKind k);
std::optional<OpKind> op_from_string(std::string_view s);
std::vector<std::string_view> all_op_names();  // every op's spec name, in OpKind order

enum class OpClass { kMatrix, kElementwise, kReduction, kRowwise, kConv };
OpClass op_class(OpKind k);
std::string_view to_string(OpClass c);

enum class GeluApprox { kErf, kTanh };

// Attributes; each op reads only the ones it documents (docs/problem-spec.md).
struct OpAttrs {
    bool transpose_a = false;     // matmul
    bool transpose_b = false;     // matmul
    int64_t axis = -1;            // reductions, softmax family, norms (normalized: >= 0 after parse)
    bool keepdim = false;         // reductions
    bool reverse = false;         // cumsum, cumprod: scan from the end of the axis
    bool exclusive = false;       // cumsum, cumprod: element i combines elements before i only
    double scalar = 0.0;          // scale, min/max with a scalar, add_scalar
    double negative_slope = 0.01; // leaky_relu
    double lo = -1.0, hi = 1.0;   // hardtanh, clamp
    double beta = 1.0, threshold = 20.0;  // softplus
    double eps = 1e-5;            // layer_norm, rms_norm, group_norm; l1/l2_normalize: 0
    int64_t num_groups = 1;       // group_norm (channels on axis 1)
    double p = 0.0;               // dropout (eval mode: identity)
    GeluApprox gelu = GeluApprox::kErf;
    std::vector<int64_t> normalized_shape;  // layer_norm / rms_norm: trailing dims normalized
    // normalized_shape's dim names as the spec writes them ("" for a literal); a name is resolved
    // at shape inference, so it may name a dim that a conv2d derives
    std::vector<std::string> normalized_dims;
    // conv2d: per spatial axis (H, W); y's spatial dims are named out_dims (filled in by the
    // parser: the spec's names or the defaults of docs/problem-spec.md)
    std::array<int64_t, 2> stride{1, 1};
    std::array<int64_t, 2> padding{0, 0};
    std::array<int64_t, 2> dilation{1, 1};
    int64_t groups = 1;
    std::vector<std::string> out_dims;
};

struct Op {
    OpKind kind;
    std::vector<std::string> inputs;  // tensor names; optional operands (bias, weight) appended
    std::string output;
    OpAttrs attrs;
    std::string json_path;            // "graph[3]" for messages
};

enum class TensorRole { kInput, kParam, kIntermediate, kOutput };
std::string_view to_string(TensorRole r);

struct Tensor {
    std::string name;
    std::vector<std::string> dim_names;  // symbolic dims ("M", "N"), "" where anonymous
    std::vector<int64_t> shape;          // concrete values
    DType dtype = DType::kF32;
    TensorRole role = TensorRole::kInput;
    int64_t numel() const;
    int64_t bytes() const;
};

struct Tolerance {
    double atol = 1e-4;
    double rtol = 1e-4;
    double min_fraction = 1.0;  // required fraction of elements within atol + rtol * |ref|
    double max_error = 0.0;     // cap on the worst |out - ref| (0: 100 * (atol + rtol))
};

struct Problem {
    std::string name;
    std::string description;
    std::map<std::string, int64_t> dims;  // named dims and their values (derived ones included)
    // Dims computed from others (a conv2d's output sizes, named by its out_dims): in `dims` so
    // every stage can look them up, never written under the spec's "dims" and recomputed
    // whenever the other dims are re-bound.
    std::set<std::string> derived_dims;
    std::vector<Tensor> tensors;          // inputs and params first, then in definition order
    std::vector<Op> ops;                  // topological order
    std::vector<std::string> outputs;
    PrecisionPolicy policy = PrecisionPolicy::kFp32Strict;
    Tolerance tolerance;

    const Tensor* find_tensor(std::string_view name) const;
    const Op* producer(std::string_view tensor_name) const;  // nullptr for inputs and params
    std::vector<const Tensor*> graph_inputs() const;         // inputs and params, in order
};

}  // namespace kforge
