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

enum class DType { kF64, kF32, kF16, kBF16, kI32, kI64, kBool };  // kBool: 1 byte, 0 or 1
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
    // index and mask ops (problem/shape_infer_index.cpp, problem/interpret_index.cpp)
    kArgmax, kArgmin,        // i64 index of the first max / min over axis (reductions)
    kMaskedFill, kWhere,     // bool mask / condition, broadcast (element-wise)
    kTril, kTriu,            // keep the lower / upper triangle of the last two dims (element-wise)
    kCrossEntropy,           // logits [N, C] (or [C]), i32/i64 targets [N] -> mean loss [] (row-wise)
    // shape ops (problem/shape_ops.h): views (reshape, expand) and data movement
    kReshape, kExpand, kPermute, kSlice, kCat, kPad,
    // pooling over the trailing 1-3 spatial axes of [N, C, *] (problem/pool.h)
    kMaxPool, kAvgPool, kAdaptiveAvgPool, kAdaptiveMaxPool,
    // convolution over 1 or 3 spatial axes, and transposed convolution (PyTorch F.conv1d/3d,
    // F.conv_transpose1d/2d/3d: X [N, C, *], W [K, C/g, *] resp. [C, K/g, *], b [K])
    kConv1d, kConv3d, kConvTranspose1d, kConvTranspose2d, kConvTranspose3d,
    // recurrent layers, PyTorch's nn.LSTM / nn.GRU (problem/rnn.h): x, h0, [c0], then per layer
    // and direction w_ih, w_hh, [b_ih, b_hh]; the result is output, h_n or c_n (attrs.rnn_result)
    kLstm, kGru,
};
std::string_view to_string(OpKind k);
std::optional<OpKind> op_from_string(std::string_view s);
std::vector<std::string_view> all_op_names();  // every op's spec name, in OpKind order

enum class OpClass { kMatrix, kElementwise, kReduction, kRowwise, kConv, kPool, kShape, kRecurrent };
OpClass op_class(OpKind k);
// The number of spatial axes an op's stride / padding / dilation have (conv2d: 2); 0 for ops
// without spatial axes.
int spatial_rank(OpKind k);
bool is_conv_transpose(OpKind k);  // conv_transpose1d/2d/3d
std::string_view to_string(OpClass c);

enum class GeluApprox { kErf, kTanh };

// What an lstm / gru op gives: the last layer's output at every step, or the final hidden (cell)
// state of every layer and direction (PyTorch's `output, (h_n, c_n) = lstm(x, (h0, c0))`).
enum class RnnResult { kOutput, kHn, kCn };
// masked_fill's mask when it is a structured constant instead of a bool input (`"mask": "tril"`
// / `"triu"` with `diagonal`): element (i, j) of X's last two dims is masked where j - i <=
// diagonal (tril) or j - i >= diagonal (triu), computed from the indices (no mask tensor)
enum class TriMask { kNone, kTril, kTriu };
std::string_view to_string(RnnResult r);
std::optional<RnnResult> rnn_result_from_string(std::string_view s);

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
    // Ops with spatial axes (spatial_rank(kind) > 0: conv2d): one value per spatial axis, in
    // X's order (D, H, W); the parser sizes them to the op's spatial rank (defaults stride 1,
    // padding 0, dilation 1), so they are empty only for ops without spatial axes. y's spatial
    // dims are named out_dims (filled in by the parser: the spec's names or the defaults of
    // docs/problem-spec.md)
    std::vector<int64_t> stride;
    std::vector<int64_t> padding;
    std::vector<int64_t> dilation;
    std::vector<int64_t> output_padding;  // conv_transpose: added to one side of y, per axis
    int64_t groups = 1;
    std::string groups_expr;  // groups written as a dim expression (a depthwise conv's "C")
    std::vector<std::string> out_dims;
    int64_t diagonal = 0;         // tril, triu: the diagonal offset (torch.tril(x, diagonal))
    TriMask tri_mask = TriMask::kNone;  // masked_fill with a structured mask (uses diagonal)
    // shape ops (problem/shape_ops.h): reshape / expand's target shape as the spec writes it
    // (a dim name, an integer, -1, or a product "C*H*W"); permute's axis order (output axis i is
    // input axis perm[i]); slice's start / end / step on `axis` (no end: to the end); pad's
    // [before, after] per axis of X, filled with `scalar`
    std::vector<std::string> view_shape;
    std::vector<int64_t> perm;
    int64_t slice_start = 0;
    std::optional<int64_t> slice_end;
    // slice bounds written as dim expressions ("n_embd", "2*n_embd"; "" for a number), resolved
    // into slice_start / slice_end at shape inference
    std::string slice_start_expr, slice_end_expr;
    int64_t slice_step = 1;
    std::vector<std::array<int64_t, 2>> pads;
    // pad amounts written as dim expressions ("D96", "2*C"; "" for a number): empty, or one pair
    // per entry of pads; resolved into pads at shape inference (a cat with zeros_like(v) pads by
    // v's extent, which then follows the dims when they are re-bound)
    std::vector<std::array<std::string, 2>> pad_exprs;
    // slice, cat, pad: the dim names of the output's axes whose extent the op changes ("" where
    // anonymous), checked against the dims (a pad that restores a sliced axis names it again)
    std::vector<std::string> out_names;
    // max_pool / avg_pool (stride, padding, dilation above; the stride defaults to kernel_size),
    // adaptive pools: one entry per spatial axis after shape inference (problem/pool.h)
    std::vector<int64_t> kernel_size;  // max_pool, avg_pool
    std::vector<int64_t> output_size;  // adaptive_avg_pool, adaptive_max_pool
    bool ceil_mode = false;            // max_pool, avg_pool
    bool count_include_pad = true;     // avg_pool
    int64_t divisor_override = 0;      // avg_pool: 0 = none
    // lstm, gru (problem/rnn.h)
    int64_t num_layers = 1;
    bool bidirectional = false;
    bool batch_first = false;          // x and output [B, T, *] instead of [T, B, *]
    bool rnn_bias = true;              // b_ih and b_hh per layer and direction
    RnnResult rnn_result = RnnResult::kOutput;
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

// How input values are drawn (problem/inputs.h generates them; to_string / from_string there).
// kUniform01: uniform on [0, 1). kUniformPm1: uniform on [-1, 1) (a param at PyTorch's default
// init, with Tensor::fan_in). kNormal: standard normal N(0, 1). kHeavyTailed: Student-t with 3
// degrees of freedom, clipped to [-1e4, 1e4]. kSpecified: each tensor as its spec entry says
// (Tensor::distribution) - the timing inputs; never a tensor's own value.
enum class Distribution { kUniform01, kUniformPm1, kNormal, kHeavyTailed, kSpecified };

struct Tensor {
    std::string name;
    std::vector<std::string> dim_names;  // symbolic dims ("M", "N"), "" where anonymous
    std::vector<int64_t> shape;          // concrete values
    DType dtype = DType::kF32;
    TensorRole role = TensorRole::kInput;
    // How the user's values of this graph input are drawn (the spec's "distribution"; default
    // normal: torch.randn, as KernelBench's get_inputs and kforge's PyTorch baseline draw them).
    // Timing runs on such values: a tensor-core GEMM's power, hence its clock, depends on the
    // bits it multiplies.
    Distribution distribution = Distribution::kNormal;
    // The draw's scale (the spec's "scale" and "fan_in"; problem/inputs.h draw_scale): every value
    // drawn for this input, in every distribution, is multiplied by scale / sqrt(fan_in) -
    // PyTorch's default-init bound of a module's weight, so that a deep network's activations
    // keep their size; the uniform01 round draws such a tensor on [-1, 1) times that bound (zero
    // mean, as the module's init). fan_in is the spec's text (a dim expression: a name, a number,
    // a product "C*3*3" or a sum; "" where absent) and fan_in_value its value at this binding
    // (0 where absent).
    std::optional<double> scale;
    std::string fan_in;
    int64_t fan_in_value = 0;
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
    // Derived dims the spec declares under "dims" by an expression of other dims ("3*n_embd",
    // "input_size+hidden_size", a product of dims a conv or pool derives): in `dims` and
    // `derived_dims` too once resolved, written back as the expression
    std::map<std::string, std::string> dim_exprs;
    std::vector<Tensor> tensors;          // inputs and params first, then in definition order
    std::vector<Op> ops;                  // topological order
    std::vector<std::string> outputs;
    PrecisionPolicy policy = PrecisionPolicy::kFp32Strict;
    Tolerance tolerance;
    // tensor name -> its position in `tensors` (the first, where names repeat); index_tensors
    // builds it, find_tensor reads it (positions, so a copy of the Problem keeps it valid)
    std::map<std::string, size_t, std::less<>> tensor_index;

    // The tensor named `name` (the first such, as a scan of `tensors` finds it), or nullptr;
    // looked up in tensor_index first, which a hit must agree with, else by the scan.
    const Tensor* find_tensor(std::string_view name) const;
    // Rebuilds tensor_index from `tensors` (the parser calls it). Call it after adding, renaming
    // or removing tensors in bulk: a stale index only makes find_tensor slower, never wrong.
    void index_tensors();
    const Op* producer(std::string_view tensor_name) const;  // nullptr for inputs and params
    std::vector<const Tensor*> graph_inputs() const;         // inputs and params, in order
};

}  // namespace kforge
