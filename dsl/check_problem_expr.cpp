// The problem's op graph as canonical expressions (identities in dsl/check_expr.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "dsl/check_attention.h"
#include "dsl/check_internal.h"
#include "dsl/check_rnn.h"
#include "problem/shape_ops.h"

namespace kforge::dsl {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::vector<std::string> dims_of(const Tensor& t) {
    std::vector<std::string> out;
    for (size_t i = 0; i < t.shape.size(); ++i) out.push_back(dim_text(t, i));
    return out;
}

// The dim an op's axis names on its first input.
std::string axis_dim(const Op& op, const Problem& problem) {
    const Tensor* x = problem.find_tensor(op.inputs.at(0));
    if (x == nullptr || x->shape.empty()) return "";
    int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + static_cast<int64_t>(x->shape.size())
                                     : op.attrs.axis;
    if (axis < 0 || axis >= static_cast<int64_t>(x->shape.size())) return "";
    return dim_text(*x, static_cast<size_t>(axis));
}

// layer_norm / rms_norm: the trailing dims normalized_shape covers (default the last).
std::vector<std::string> norm_dims(const Op& op, const Problem& problem) {
    const Tensor* x = problem.find_tensor(op.inputs.at(0));
    std::vector<std::string> dims = x ? dims_of(*x) : std::vector<std::string>{};
    size_t n = std::max<size_t>(1, op.attrs.normalized_shape.size());
    n = std::min(n, dims.size());
    return {dims.end() - static_cast<std::ptrdiff_t>(n), dims.end()};
}

}  // namespace

std::vector<double> conv2d_params(const OpAttrs& a) {
    std::vector<double> p;
    for (const auto* pair : {&a.stride, &a.padding, &a.dilation})
        for (int64_t v : *pair) p.push_back(static_cast<double>(v));
    p.push_back(static_cast<double>(a.groups));
    return p;
}

std::vector<std::string> conv2d_out_dims(const Op& op, const Problem& problem) {
    const Tensor* y = problem.find_tensor(op.output);
    return y ? named_dims(dims_of(*y)) : std::vector<std::string>{};
}

std::string dim_text(const Tensor& tensor, size_t i) {
    if (i < tensor.dim_names.size() && !tensor.dim_names[i].empty()) return tensor.dim_names[i];
    return std::to_string(tensor.shape.at(i));
}

std::vector<std::string> named_dims(const std::vector<std::string>& dims) {
    std::vector<std::string> out;
    for (const auto& d : dims)
        if (d != "1") out.push_back(d);
    return out;
}

std::vector<std::string> distinct_dims(const std::vector<std::string>& dims) {
    std::vector<std::string> out;
    for (const auto& d : dims)
        if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    return out;
}

std::string op_display(const Op& op, const Problem& problem) {
    std::string name(to_string(op.kind));
    const OpAttrs& a = op.attrs;
    switch (op.kind) {
    case OpKind::kGelu: return name + (a.gelu == GeluApprox::kTanh ? " (tanh)" : " (erf)");
    case OpKind::kLeakyRelu: return name + " " + num(a.negative_slope);
    case OpKind::kHardtanh:
    case OpKind::kClamp: return name + " " + num(a.lo) + " " + num(a.hi);
    case OpKind::kSoftplus: return name + " " + num(a.beta) + " " + num(a.threshold);
    case OpKind::kScale:
    case OpKind::kAddScalar:
    case OpKind::kMinScalar:
    case OpKind::kMaxScalar: return name + " " + num(a.scalar);
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm: return name + " eps " + num(a.eps);
    case OpKind::kGroupNorm: return name + " groups " + std::to_string(a.num_groups) + " eps " +
                                    num(a.eps);
    case OpKind::kL1Normalize:
    case OpKind::kL2Normalize:
        return name + " over " + axis_dim(op, problem) + (a.eps != 0 ? " eps " + num(a.eps) : "");
    case OpKind::kCumsum:
    case OpKind::kCumprod: return scan_display(name, axis_dim(op, problem), a.reverse, a.exclusive);
    case OpKind::kConv2d: case OpKind::kConv1d: case OpKind::kConv3d:
    case OpKind::kConvTranspose1d: case OpKind::kConvTranspose2d: case OpKind::kConvTranspose3d: {
        auto pair = [](const std::vector<int64_t>& v) {
            bool same = true;
            for (int64_t e : v) same = same && e == v.front();
            std::string s = std::to_string(v.front());
            for (size_t i = 1; !same && i < v.size(); ++i) s += "x" + std::to_string(v[i]);
            return s;
        };
        return name + " stride " + pair(a.stride) + " padding " + pair(a.padding) +
               " dilation " + pair(a.dilation) +
               (a.groups != 1 ? " groups " + std::to_string(a.groups) : "");
    }
    default: break;
    }
    if (op_class(op.kind) == OpClass::kReduction || op_class(op.kind) == OpClass::kRowwise)
        return name + " over " + axis_dim(op, problem);
    return name;
}

ProblemExprs problem_exprs(const Problem& problem, StepBudget* budget) {
    ProblemExprs pe(budget);
    ExprGraph& g = pe.graph;
    for (const Tensor* t : problem.graph_inputs()) {
        pe.value[t->name] = g.leaf(t->name, named_dims(dims_of(*t)), Origin{"its inputs", t->name, t->name});
    }
    for (const Op& op : problem.ops) {
        if (!g.stopped().empty()) break;
        Origin o{op.json_path, op.inputs.empty() ? "" : op.inputs[0], op_display(op, problem)};
        std::vector<int> in;
        bool missing = false;
        for (const auto& name : op.inputs) {
            auto it = pe.value.find(name);
            if (it == pe.value.end()) {
                missing = true;
                break;
            }
            in.push_back(it->second);
        }
        if (missing || in.empty()) continue;  // parse_problem rejects such graphs
        const OpAttrs& a = op.attrs;
        auto unary = [&](const std::string& name, std::vector<double> params = {}) {
            return g.apply(name, {in[0]}, std::move(params), {}, false, o);
        };
        int v = in[0];
        switch (op.kind) {
        case OpKind::kMatmul: {
            const Tensor* ta = problem.find_tensor(op.inputs[0]);
            size_t r = ta->shape.size();
            std::string k = dim_text(*ta, a.transpose_a && r >= 2 ? r - 2 : r - 1);
            v = g.contract(in[0], in[1], k, o);
            break;
        }
        case OpKind::kLinear: {
            const Tensor* tx = problem.find_tensor(op.inputs[0]);
            v = g.contract(in[0], in[1], dim_text(*tx, tx->shape.size() - 1), o);
            if (in.size() > 2) v = g.add(v, in[2], o);
            break;
        }
        case OpKind::kAdd: v = g.add(in[0], in[1], o); break;
        case OpKind::kSub: v = g.add(in[0], g.mul(in[1], g.constant(-1.0, o), o), o); break;
        case OpKind::kMul: v = g.mul(in[0], in[1], o); break;
        case OpKind::kDiv: v = g.div(in[0], in[1], o); break;
        case OpKind::kMaximum: v = g.bound(true, in[0], in[1], o); break;
        case OpKind::kMinimum: v = g.bound(false, in[0], in[1], o); break;
        case OpKind::kReciprocal: v = g.div(g.constant(1.0, o), in[0], o); break;
        case OpKind::kScale: v = g.mul(in[0], g.constant(a.scalar, o), o); break;
        case OpKind::kAddScalar: v = g.add(in[0], g.constant(a.scalar, o), o); break;
        case OpKind::kNeg: v = g.mul(in[0], g.constant(-1.0, o), o); break;
        case OpKind::kRelu: v = g.clamp(in[0], 0.0, kInf, o); break;
        case OpKind::kHardtanh:
        case OpKind::kClamp: v = g.clamp(in[0], a.lo, a.hi, o); break;
        case OpKind::kMinScalar: v = g.clamp(in[0], -kInf, a.scalar, o); break;
        case OpKind::kMaxScalar: v = g.clamp(in[0], a.scalar, kInf, o); break;
        case OpKind::kDropout: break;
        case OpKind::kLeakyRelu: v = unary("leaky_relu", {a.negative_slope}); break;
        case OpKind::kGelu: v = unary("gelu", {a.gelu == GeluApprox::kTanh ? 1.0 : 0.0}); break;
        case OpKind::kSoftplus: v = unary("softplus", {a.beta, a.threshold}); break;
        case OpKind::kSilu: case OpKind::kSigmoid: case OpKind::kTanh: case OpKind::kMish:
        case OpKind::kExp: case OpKind::kLog: case OpKind::kAbs: case OpKind::kSqrt:
        case OpKind::kRsqrt: case OpKind::kSquare: case OpKind::kErf: case OpKind::kLog1p:
        case OpKind::kExpm1: case OpKind::kSin: case OpKind::kCos: case OpKind::kSign:
            v = unary(std::string(to_string(op.kind)));
            break;
        case OpKind::kSum: case OpKind::kMean: case OpKind::kMax: case OpKind::kMin:
        case OpKind::kProd: case OpKind::kArgmax: case OpKind::kArgmin:
            if (is_unit_reduction(problem, op)) break;  // over extent 1: its input's value
            v = g.apply("reduce_" + std::string(to_string(op.kind)), {in[0]}, {},
                        {axis_dim(op, problem)}, true, o);
            break;
        case OpKind::kTril: case OpKind::kTriu: {  // the triangle of the last two dims
            const Tensor* tx = problem.find_tensor(op.inputs[0]);
            const size_t r = tx ? tx->shape.size() : 0;
            if (r < 2) break;
            // keep tril d = fill triu d + 1 with 0 (one node with masked_fill's structured form)
            const bool lower = op.kind == OpKind::kTril;
            v = tri_fill_node(g, in[0], lower ? TriMask::kTriu : TriMask::kTril,
                              a.diagonal + (lower ? 1 : -1), 0.0, dim_text(*tx, r - 2),
                              dim_text(*tx, r - 1), o);
            break;
        }
        case OpKind::kCrossEntropy: {  // logsumexp(row) - row[target], the mean over the rows
            const Tensor* tx = problem.find_tensor(op.inputs[0]);
            v = g.apply("cross_entropy", in, {}, tx ? named_dims(dims_of(*tx)) : std::vector<std::string>{},
                        true, o);
            break;
        }
        case OpKind::kSoftmax: case OpKind::kLogSoftmax:
            v = g.apply(std::string(to_string(op.kind)), {in[0]}, {}, {axis_dim(op, problem)},
                        false, o);
            break;
        case OpKind::kLogsumexp:
            v = g.apply("logsumexp", {in[0]}, {}, {axis_dim(op, problem)}, true, o);
            break;
        case OpKind::kLayerNorm: case OpKind::kRmsNorm:
            v = g.apply(std::string(to_string(op.kind)), in, {a.eps}, norm_dims(op, problem),
                        false, o);
            break;
        case OpKind::kCumsum: case OpKind::kCumprod:
            v = g.apply(std::string(to_string(op.kind)), in,
                        {a.reverse ? 1.0 : 0.0, a.exclusive ? 1.0 : 0.0}, {axis_dim(op, problem)},
                        false, o);
            break;
        case OpKind::kL1Normalize: case OpKind::kL2Normalize:
            v = normalize_expr(g, in[0], op.kind == OpKind::kL2Normalize, a.eps,
                               axis_dim(op, problem), o);
            break;
        case OpKind::kConv2d:
            // conv2d(x, w) + b: the bias is an `add b[K]` in a conv2d kernel's chain
            v = g.conv2d(in[0], in[1], conv2d_params(a), conv2d_out_dims(op, problem), o);
            if (in.size() > 2) v = g.add(v, in[2], o);
            break;
        case OpKind::kConv1d: case OpKind::kConv3d: case OpKind::kConvTranspose1d:
        case OpKind::kConvTranspose2d: case OpKind::kConvTranspose3d: {
            // a node named by the op: a conv2d kernel implementing a conv1d (H = 1) names its
            // node after its op too (check_sem_kernel.cpp); the others no program matches yet
            std::vector<double> params = conv2d_params(a);
            if (is_conv_transpose(op.kind))
                for (int64_t e : a.output_padding) params.push_back(static_cast<double>(e));
            v = g.conv2d(in[0], in[1], std::move(params), conv2d_out_dims(op, problem), o,
                         std::string(to_string(op.kind)));
            if (in.size() > 2) v = g.add(v, in[2], o);
            break;
        }
        case OpKind::kMaxPool: case OpKind::kAvgPool: case OpKind::kAdaptiveAvgPool:
        case OpKind::kAdaptiveMaxPool:  // check_pool.cpp: the node a pool kernel builds too
            v = g.pool(in[0], std::string(to_string(op.kind)), pool_params(a),
                       conv2d_out_dims(op, problem), o);
            break;
        case OpKind::kReshape: case OpKind::kExpand: case OpKind::kPermute: case OpKind::kSlice:
        case OpKind::kCat: case OpKind::kPad: {
            // problem/shape_ops.h: a view that adds, drops or broadcasts axes of size 1 is its
            // input's value (read by dim names); an exclusive scan written as slice, scan, pad is
            // that scan of the slice's input; any other data movement an opaque value with the
            // output's dims, which no program computes (the planner refuses it by name)
            if (is_rank_view(problem, op)) break;
            if (auto scan = exclusive_scan_of(problem, op)) {
                auto x = pe.value.find(scan->inputs[0]);
                if (x == pe.value.end()) break;
                v = g.apply(std::string(to_string(scan->kind)), {x->second},
                            {scan->attrs.reverse ? 1.0 : 0.0, 1.0}, {axis_dim(*scan, problem)},
                            false, o);
                break;
            }
            v = copy_node(g, in, op, problem, o);  // check_copy.cpp: what a copy kernel builds
            break;
        }
        case OpKind::kLstm: case OpKind::kGru:  // check_rnn.cpp: the node an rnn kernel builds
            v = rnn_node(g, in, op, problem, o);
            break;
        case OpKind::kMaskedFill:  // the node an attention kernel's bool mask builds too
            if (a.tri_mask != TriMask::kNone) {  // structured: dsl/attention.h tri_fill_node
                const Tensor* tx = problem.find_tensor(op.inputs[0]);
                const size_t r = tx ? tx->shape.size() : 0;
                if (r < 2) break;
                v = tri_fill_node(g, in[0], a.tri_mask, a.diagonal, a.scalar,
                                  dim_text(*tx, r - 2), dim_text(*tx, r - 1), o);
                break;
            }
            v = g.apply("masked_fill", in, {a.scalar}, {}, false, o);
            break;
        case OpKind::kWhere:  // condition ? A : B (a map's `masked_fill C[..] t` on B's value)
            v = g.apply("where", in, {}, {}, false, o);
            break;
        case OpKind::kGroupNorm: {
            const Tensor* x = problem.find_tensor(op.inputs[0]);
            std::string c = x->shape.size() > 1 ? dim_text(*x, 1) : "";
            v = g.apply("group_norm", in, {static_cast<double>(a.num_groups), a.eps}, {c}, false, o);
            break;
        }
        }
        if (g.stopped().empty()) pe.value[op.output] = v;
    }
    return pe;
}

}  // namespace kforge::dsl
