// One graph entry -> Op: the op name, its operand list and its attributes, each checked against
// the table in docs/problem-spec.md. Shapes are checked later (shape_infer.cpp).
#include <array>
#include <cmath>
#include <limits>

#include "problem/spec.h"
#include "problem/spec_internal.h"
#include "problem/shape_ops.h"

namespace kforge::spec {
namespace {

struct OpSignature {
    size_t min_inputs, max_inputs;
    const char* operands;                 // for messages: "X, W, [b]"
    std::vector<std::string> attributes;  // besides op, inputs, output
};

OpSignature signature(OpKind k) {
    switch (k) {
        case OpKind::kMatmul: return {2, 2, "A, B", {"transpose_a", "transpose_b"}};
        case OpKind::kLinear: return {2, 3, "X, W, [b]", {}};
        case OpKind::kAdd: case OpKind::kSub: case OpKind::kMul: case OpKind::kDiv:
        case OpKind::kMaximum: case OpKind::kMinimum:
            return {2, 2, "A, B", {}};
        case OpKind::kScale: case OpKind::kAddScalar: case OpKind::kMinScalar:
        case OpKind::kMaxScalar:
            return {1, 1, "X", {"value"}};
        case OpKind::kLeakyRelu: return {1, 1, "X", {"negative_slope"}};
        case OpKind::kGelu: return {1, 1, "X", {"approximate"}};
        case OpKind::kHardtanh: case OpKind::kClamp: return {1, 1, "X", {"min", "max"}};
        case OpKind::kSoftplus: return {1, 1, "X", {"beta", "threshold"}};
        case OpKind::kDropout: return {1, 1, "X", {"p"}};
        case OpKind::kSum: case OpKind::kMean: case OpKind::kMax: case OpKind::kMin:
        case OpKind::kProd: case OpKind::kLogsumexp:
            return {1, 1, "X", {"axis", "keepdim"}};
        case OpKind::kSoftmax: case OpKind::kLogSoftmax: return {1, 1, "X", {"axis"}};
        case OpKind::kLayerNorm:
            return {1, 3, "X, [weight], [bias]", {"normalized_shape", "eps"}};
        case OpKind::kRmsNorm: return {1, 2, "X, [weight]", {"normalized_shape", "eps"}};
        case OpKind::kGroupNorm: return {1, 3, "X, [weight], [bias]", {"num_groups", "eps"}};
        case OpKind::kL1Normalize: case OpKind::kL2Normalize: return {1, 1, "X", {"axis", "eps"}};
        case OpKind::kCumsum: case OpKind::kCumprod:
            return {1, 1, "X", {"axis", "reverse", "exclusive"}};
        case OpKind::kConv2d: case OpKind::kConv1d: case OpKind::kConv3d:
            return {2, 3, "X, W, [b]", {"stride", "padding", "dilation", "groups", "out_dims"}};
        case OpKind::kConvTranspose1d: case OpKind::kConvTranspose2d:
        case OpKind::kConvTranspose3d:
            return {2, 3, "X, W, [b]",
                    {"stride", "padding", "output_padding", "dilation", "groups", "out_dims"}};
        case OpKind::kArgmax: case OpKind::kArgmin: return {1, 1, "X", {"axis", "keepdim"}};
        case OpKind::kMaskedFill: return {1, 2, "X, mask (none with a structured \"mask\")",
                                          {"value", "mask", "diagonal"}};
        case OpKind::kWhere: return {3, 3, "condition, A, B", {}};
        case OpKind::kTril: case OpKind::kTriu: return {1, 1, "X", {"diagonal"}};
        case OpKind::kCrossEntropy: return {2, 2, "logits, target", {}};
        case OpKind::kMaxPool: case OpKind::kAvgPool: case OpKind::kAdaptiveAvgPool:
        case OpKind::kAdaptiveMaxPool:
            return {1, 1, "X", pool_attribute_names(k)};
        case OpKind::kReshape: case OpKind::kExpand: case OpKind::kPermute: case OpKind::kSlice:
        case OpKind::kCat: case OpKind::kPad: {
            ShapeSignature g = shape_signature(k);
            return {g.min_inputs, g.max_inputs, g.operands, g.attributes};
        }
        case OpKind::kLstm: case OpKind::kGru:  // the exact count: check_rnn_op
            return {4, 4096, "x, h0, [c0], then per layer and direction w_ih, w_hh, [b_ih, b_hh]",
                    rnn_attribute_names()};
        default: return {1, 1, "X", {}};
    }
}

bool is_scalar_op(OpKind k) {
    return k == OpKind::kScale || k == OpKind::kAddScalar || k == OpKind::kMinScalar ||
           k == OpKind::kMaxScalar || k == OpKind::kMaskedFill;
}

// stride, padding, dilation (and the like) of an op with `rank` spatial axes: an integer (every
// spatial axis) or an array of `rank` of them ([h, w] for conv2d), each at least `min` and at
// most kMaxDimValue.
Status read_axes(const Json& v, const std::string& key, const std::string& path, int64_t min,
                 int rank, std::vector<int64_t>& field) {
    std::string bound = min == 0 ? "an integer >= 0" : "an integer >= 1";
    std::string what = rank == 1 ? "a 1-element array" : rank == 2 ? "a pair [h, w]"
                                                                  : "a triple [d, h, w]";
    auto one = [&](const Json& e, const std::string& at) -> Expected<int64_t> {
        if (!e.is_number()) {
            return make_error(at, key + " must be " + bound + " or " +
                                      (rank == 2 ? "a pair of them" : what + " of them") +
                                      ", got " + type_name(e));
        }
        auto i = read_int(e, at);
        if (!i) return i.error();
        if (*i < min || *i > kMaxDimValue) {
            return make_error(at, key + " must be " + bound + " (at most 2^40), got " + e.dump());
        }
        return *i;
    };
    if (v.is_array()) {
        if (v.size() != static_cast<size_t>(rank)) {
            return make_error(path, key + " must be an integer or " + what + ", got an array of " +
                                        std::to_string(v.size()));
        }
        field.assign(static_cast<size_t>(rank), 0);
        for (size_t i = 0; i < v.size(); ++i) {
            auto x = one(v[i], path + "[" + std::to_string(i) + "]");
            if (!x) return x.error();
            field[i] = *x;
        }
        return Ok{};
    }
    auto x = one(v, path);
    if (!x) return x.error();
    field.assign(static_cast<size_t>(rank), *x);
    return Ok{};
}

Status read_attr(const Json& v, const std::string& key, const std::string& path, Op& op,
                 const std::map<std::string, int64_t>& dims) {
    if (op_class(op.kind) == OpClass::kPool) return read_pool_attr(v, key, path, op.attrs);
    if (op_class(op.kind) == OpClass::kShape) return read_shape_attr(v, key, path, op);
    if (op_class(op.kind) == OpClass::kRecurrent) return read_rnn_attr(v, key, path, op.attrs);
    OpAttrs& a = op.attrs;
    auto number = [&](double& field) -> Status {
        auto x = read_number(v, path);
        if (!x) return x.error();
        field = *x;
        return Ok{};
    };
    if (key == "reverse" || key == "exclusive") {
        auto b = read_bool(v, path);
        if (!b) return b.error();
        (key == "reverse" ? a.reverse : a.exclusive) = *b;
        return Ok{};
    }
    if (key == "transpose_a" || key == "transpose_b" || key == "keepdim") {
        auto b = read_bool(v, path);
        if (!b) return b.error();
        (key == "transpose_a" ? a.transpose_a : key == "transpose_b" ? a.transpose_b : a.keepdim) = *b;
        return Ok{};
    }
    if (key == "value" && op.kind == OpKind::kMaskedFill && v.is_string()) {
        const std::string w = v.get<std::string>();  // JSON has no infinities: "inf", "-inf"
        if (w != "inf" && w != "-inf") {
            return make_error(path, "value must be a number, \"inf\" or \"-inf\", got " +
                                        quote(w));
        }
        a.scalar = w == "inf" ? std::numeric_limits<double>::infinity()
                              : -std::numeric_limits<double>::infinity();
        return Ok{};
    }
    if (key == "value") return number(a.scalar);
    if (key == "mask") {  // masked_fill's structured mask
        auto w = read_string(v, path);
        if (!w) return w.error();
        if (*w != "tril" && *w != "triu")
            return make_error(path, "mask must be \"tril\" or \"triu\" (a structured mask over "
                                    "X's last two dims), got " + quote(*w));
        a.tri_mask = *w == "tril" ? TriMask::kTril : TriMask::kTriu;
        return Ok{};
    }
    if (key == "diagonal") {
        auto i = read_int(v, path);
        if (!i) return i.error();
        if (*i < -kMaxDimValue || *i > kMaxDimValue) {
            return make_error(path, "diagonal must be an integer of magnitude at most 2^40");
        }
        a.diagonal = *i;
        return Ok{};
    }
    if (key == "negative_slope") return number(a.negative_slope);
    if (key == "min") return number(a.lo);
    if (key == "max") return number(a.hi);
    if (key == "threshold") return number(a.threshold);
    if (key == "beta") {
        if (auto s = number(a.beta); !s) return s;
        if (a.beta == 0) return make_error(path, "beta must be non-zero");
        return Ok{};
    }
    if (key == "eps") {
        if (auto s = number(a.eps); !s) return s;
        if (a.eps < 0) return make_error(path, "eps must be >= 0, got " + v.dump());
        return Ok{};
    }
    if (key == "p") {
        if (auto s = number(a.p); !s) return s;
        if (a.p < 0 || a.p >= 1) return make_error(path, "p must be in [0, 1), got " + v.dump());
        return Ok{};
    }
    if (key == "axis" || key == "num_groups") {
        auto i = read_int(v, path);
        if (!i) return i.error();
        if (key == "axis") {
            if (*i < -kMaxRank || *i >= kMaxRank) {
                return make_error(path, "axis " + std::to_string(*i) + " is out of range");
            }
            a.axis = *i;
        } else {
            if (*i <= 0 || *i > kMaxDimValue) {
                return make_error(path, "num_groups must be a positive integer, got " + v.dump());
            }
            a.num_groups = *i;
        }
        return Ok{};
    }
    const int rank = spatial_rank(op.kind);
    if (key == "stride") return read_axes(v, key, path, 1, rank, a.stride);
    if (key == "padding") return read_axes(v, key, path, 0, rank, a.padding);
    if (key == "dilation") return read_axes(v, key, path, 1, rank, a.dilation);
    if (key == "output_padding") return read_axes(v, key, path, 0, rank, a.output_padding);
    if (key == "groups" && v.is_string()) {  // a dim expression: a depthwise conv's "C"
        const std::string text = v.get<std::string>();
        if (auto s = check_dim_expr(text, path); !s) return s.error();
        a.groups_expr = text;
        return Ok{};
    }
    if (key == "groups") {
        auto i = read_int(v, path);
        if (!i) return i.error();
        if (*i < 1 || *i > kMaxDimValue) {
            return make_error(path, "groups must be a positive integer, got " + v.dump());
        }
        a.groups = *i;
        return Ok{};
    }
    if (key == "out_dims") {
        if (!v.is_array() || v.size() != static_cast<size_t>(rank)) {
            const std::string want = rank == 1   ? "an array of one dim name [Q]"
                                     : rank == 2 ? "a pair of dim names [P, Q]"
                                                 : "a triple of dim names [Z, P, Q]";
            return make_error(path, "out_dims must be " + want + " (the output's spatial dims), got " +
                                        (v.is_array() ? "an array of " + std::to_string(v.size())
                                                      : type_name(v)));
        }
        for (size_t i = 0; i < v.size(); ++i) {
            std::string at = path + "[" + std::to_string(i) + "]";
            auto name = read_string(v[i], at);
            if (!name) return name.error();
            if (!is_identifier(*name)) {
                return make_error(at, "dim name " + quote(*name) + " is not an identifier");
            }
            a.out_dims.push_back(*name);
        }
        return Ok{};
    }
    if (key == "approximate") {
        auto s = read_string(v, path);
        if (!s) return s.error();
        if (*s == "none") a.gelu = GeluApprox::kErf;
        else if (*s == "tanh") a.gelu = GeluApprox::kTanh;
        else return make_error(path, "approximate must be \"none\" or \"tanh\", got " + quote(*s));
        return Ok{};
    }
    if (key == "normalized_shape") {
        if (!v.is_array() || v.empty()) {
            return make_error(path, "expected a non-empty array of dims, got " + type_name(v));
        }
        if (v.size() > static_cast<size_t>(kMaxRank)) {
            return make_error(path, "normalized_shape has more than 8 dims");
        }
        for (size_t i = 0; i < v.size(); ++i) {
            if (v[i].is_string() && dims.count(v[i].get<std::string>()) == 0) {
                // not a spec dim: a derived one (resolved at shape inference) or unknown
                a.normalized_shape.push_back(0);
                a.normalized_dims.push_back(v[i].get<std::string>());
                continue;
            }
            auto d = read_dim_entry(v[i], path + "[" + std::to_string(i) + "]", dims);
            if (!d) return d.error();
            a.normalized_shape.push_back(d->value);
            a.normalized_dims.push_back(d->name);
        }
        return Ok{};
    }
    return make_error(path, "attribute " + quote(key) + " has no reader");  // unreachable
}

}  // namespace

Expected<Op> parse_op(const Json& v, const std::string& path,
                      const std::map<std::string, int64_t>& dims) {
    if (!v.is_object()) {
        return make_error(path, "expected an op object {op, inputs, output, ...}, got " +
                                    type_name(v));
    }
    for (const char* key : {"op", "inputs", "output"}) {
        if (!v.contains(key)) return make_error(path, "missing key " + quote(key));
    }
    Op op;
    op.json_path = path;
    auto name = read_string(v["op"], path + ".op");
    if (!name) return name.error();
    auto kind = op_from_string(*name);
    if (!kind) {
        std::vector<std::string> known;
        for (std::string_view n : all_op_names()) known.emplace_back(n);
        return make_error(path + ".op", "unknown op " + quote(*name) + "; known ops: " + join(known));
    }
    op.kind = *kind;
    OpSignature sig = signature(op.kind);

    const Json& inputs = v["inputs"];
    if (!inputs.is_array()) {
        return make_error(path + ".inputs", "expected an array of tensor names, got " +
                                                type_name(inputs));
    }
    if (inputs.size() < sig.min_inputs || inputs.size() > sig.max_inputs) {
        std::string count = sig.min_inputs == sig.max_inputs
                                ? std::to_string(sig.min_inputs)
                                : std::to_string(sig.min_inputs) + " to " +
                                      std::to_string(sig.max_inputs);
        return make_error(path + ".inputs", "op " + quote(*name) + " takes " + count +
                                                " inputs (" + sig.operands + "); got " +
                                                std::to_string(inputs.size()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
        auto t = read_string(inputs[i], path + ".inputs[" + std::to_string(i) + "]");
        if (!t) return t.error();
        op.inputs.push_back(*t);
    }
    auto output = read_string(v["output"], path + ".output");
    if (!output) return output.error();
    if (!is_identifier(*output)) {
        return make_error(path + ".output", "tensor name " + quote(*output) +
                                                " is not an identifier");
    }
    op.output = *output;

    if (op.kind == OpKind::kL1Normalize || op.kind == OpKind::kL2Normalize) {
        op.attrs.eps = 0.0;  // no clamp: x / ||x||, as `x / x.norm(...)`
    }
    if (int rank = spatial_rank(op.kind); rank > 0) {  // defaults, one per spatial axis
        op.attrs.stride.assign(static_cast<size_t>(rank), 1);
        op.attrs.padding.assign(static_cast<size_t>(rank), 0);
        op.attrs.dilation.assign(static_cast<size_t>(rank), 1);
        op.attrs.output_padding.assign(static_cast<size_t>(rank), 0);
    }
    if (op.kind == OpKind::kClamp) {  // a bound that is not given does not clamp
        op.attrs.lo = -std::numeric_limits<double>::infinity();
        op.attrs.hi = std::numeric_limits<double>::infinity();
    }
    for (const auto& [key, value] : v.items()) {
        if (key == "op" || key == "inputs" || key == "output") continue;
        bool known = false;
        for (const std::string& a : sig.attributes) known = known || a == key;
        if (!known) {
            return make_error(path + "." + key, "unknown attribute " + quote(key) + " for op " +
                                                    quote(*name) + "; known attributes: " +
                                                    join(sig.attributes));
        }
        if (auto s = read_attr(value, key, path + "." + key, op, dims); !s) return s.error();
    }
    if (op_class(op.kind) == OpClass::kShape) {
        if (auto s = check_shape_required(v, op); !s) return s.error();
    }
    if (is_scalar_op(op.kind) && !v.contains("value")) {
        return make_error(path, "missing key \"value\" (op " + quote(*name) + ")");
    }
    if (op.kind == OpKind::kClamp && !v.contains("min") && !v.contains("max")) {
        return make_error(path, "op \"clamp\" needs at least one of \"min\" and \"max\"");
    }
    if ((op.kind == OpKind::kHardtanh || op.kind == OpKind::kClamp) && op.attrs.lo > op.attrs.hi) {
        return make_error(path + ".min", "min must not exceed max");
    }
    if (op_class(op.kind) == OpClass::kPool) {
        if (auto s = check_pool_op(v, path, op); !s) return s.error();
    }
    if (op_class(op.kind) == OpClass::kRecurrent) {
        if (auto s = check_rnn_op(path, op); !s) return s.error();
    }
    if (op.kind == OpKind::kMaskedFill &&
        (op.inputs.size() == 1) != (op.attrs.tri_mask != TriMask::kNone)) {
        return make_error(path, op.inputs.size() == 1
                                    ? "masked_fill with one input needs a structured \"mask\" "
                                      "(\"tril\" or \"triu\"); else give the bool mask input"
                                    : "masked_fill takes either a bool mask input or a structured "
                                      "\"mask\", not both");
    }
    if (op.kind == OpKind::kMaskedFill && v.contains("diagonal") && op.attrs.tri_mask == TriMask::kNone)
        return make_error(path + ".diagonal", "diagonal needs a structured \"mask\"");
    if (op.kind == OpKind::kGroupNorm && !v.contains("num_groups")) {
        return make_error(path, "missing key \"num_groups\" (op \"group_norm\")");
    }
    return op;
}

}  // namespace kforge::spec
