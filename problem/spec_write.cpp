// problem_to_json(): a validated Problem back to its spec. Attributes are written only where
// they differ from the op's default, so a written spec reads like a hand-written one.
#include <array>
#include <cmath>

#include "problem/inputs.h"
#include "problem/spec.h"
#include "problem/spec_internal.h"
#include "problem/shape_ops.h"

namespace kforge {
namespace {

using spec::Json;

Json dim_json(const std::string& name, int64_t value) {
    return name.empty() ? Json(value) : Json(name);
}

void write_attrs(const Op& op, const Problem& p, Json& j) {
    const OpAttrs& a = op.attrs;
    const Tensor* x = p.find_tensor(op.inputs[0]);
    switch (op.kind) {
        case OpKind::kMatmul:
            if (a.transpose_a) j["transpose_a"] = true;
            if (a.transpose_b) j["transpose_b"] = true;
            break;
        case OpKind::kScale: case OpKind::kAddScalar: case OpKind::kMinScalar:
        case OpKind::kMaxScalar:
            j["value"] = a.scalar;
            break;
        case OpKind::kLeakyRelu: j["negative_slope"] = a.negative_slope; break;
        case OpKind::kGelu: if (a.gelu == GeluApprox::kTanh) j["approximate"] = "tanh"; break;
        case OpKind::kHardtanh: case OpKind::kClamp:
            if (std::isfinite(a.lo)) j["min"] = a.lo;
            if (std::isfinite(a.hi)) j["max"] = a.hi;
            break;
        case OpKind::kSoftplus:
            j["beta"] = a.beta;
            j["threshold"] = a.threshold;
            break;
        case OpKind::kDropout: if (a.p != 0) j["p"] = a.p; break;
        case OpKind::kSum: case OpKind::kMean: case OpKind::kMax: case OpKind::kMin:
        case OpKind::kProd: case OpKind::kLogsumexp:
            j["axis"] = a.axis;
            if (a.keepdim) j["keepdim"] = true;
            break;
        case OpKind::kSoftmax: case OpKind::kLogSoftmax: j["axis"] = a.axis; break;
        case OpKind::kLayerNorm: case OpKind::kRmsNorm: {
            Json ns = Json::array();
            for (size_t i = static_cast<size_t>(a.axis); x && i < x->shape.size(); ++i) {
                ns.push_back(dim_json(x->dim_names[i], x->shape[i]));
            }
            j["normalized_shape"] = ns;
            j["eps"] = a.eps;
            break;
        }
        case OpKind::kL1Normalize: case OpKind::kL2Normalize:
            j["axis"] = a.axis;
            if (a.eps != 0) j["eps"] = a.eps;
            break;
        case OpKind::kCumsum: case OpKind::kCumprod:
            j["axis"] = a.axis;
            if (a.reverse) j["reverse"] = true;
            if (a.exclusive) j["exclusive"] = true;
            break;
        case OpKind::kGroupNorm:
            j["num_groups"] = a.num_groups;
            j["eps"] = a.eps;
            break;
        case OpKind::kConv2d: case OpKind::kConv1d: case OpKind::kConv3d:
        case OpKind::kConvTranspose1d: case OpKind::kConvTranspose2d:
        case OpKind::kConvTranspose3d: {
            auto pair = [&](const char* key, const std::vector<int64_t>& v, int64_t dflt) {
                bool all_default = true, all_same = true;
                for (int64_t e : v) {
                    all_default = all_default && e == dflt;
                    all_same = all_same && e == v.front();
                }
                if (all_default) return;
                j[key] = all_same ? Json(v.front()) : Json(v);
            };
            pair("stride", a.stride, 1);
            pair("padding", a.padding, 0);
            pair("dilation", a.dilation, 1);
            if (is_conv_transpose(op.kind)) pair("output_padding", a.output_padding, 0);
            if (!a.groups_expr.empty()) j["groups"] = a.groups_expr;
            else if (a.groups != 1) j["groups"] = a.groups;
            // "" where y's dim is an anonymous literal: then the default names are the names
            bool named = !a.out_dims.empty();
            for (const auto& d : a.out_dims) named = named && !d.empty();
            if (named) j["out_dims"] = a.out_dims;
            break;
        }
        case OpKind::kMaskedFill:
            if (std::isfinite(a.scalar)) j["value"] = a.scalar;
            else j["value"] = a.scalar > 0 ? "inf" : "-inf";
            if (a.tri_mask != TriMask::kNone) {
                j["mask"] = a.tri_mask == TriMask::kTril ? "tril" : "triu";
                if (a.diagonal != 0) j["diagonal"] = a.diagonal;
            }
            break;
        case OpKind::kArgmax: case OpKind::kArgmin:
            j["axis"] = a.axis;
            if (a.keepdim) j["keepdim"] = true;
            break;
        case OpKind::kTril: case OpKind::kTriu:
            if (a.diagonal != 0) j["diagonal"] = a.diagonal;
            break;
        case OpKind::kMaxPool: case OpKind::kAvgPool: case OpKind::kAdaptiveAvgPool:
        case OpKind::kAdaptiveMaxPool:
            spec::write_pool_attrs(op, j);
            break;
        case OpKind::kLstm: case OpKind::kGru:
            spec::write_rnn_attrs(op, j);
            break;
        default: break;
    }
}

}  // namespace

nlohmann::ordered_json problem_to_json(const Problem& p) {
    Json j;
    j["name"] = p.name;
    if (!p.description.empty()) j["description"] = p.description;
    j["dims"] = Json::object();
    for (const auto& [name, value] : p.dims) {
        if (auto e = p.dim_exprs.find(name); e != p.dim_exprs.end()) {
            j["dims"][name] = e->second;  // a derived dim declared by its expression
        } else if (p.derived_dims.count(name) == 0) {
            j["dims"][name] = value;  // (other derived dims are recomputed on parse)
        }
    }
    j["inputs"] = Json::object();
    for (const Tensor* t : p.graph_inputs()) {
        Json shape = Json::array();
        for (size_t i = 0; i < t->shape.size(); ++i) {
            shape.push_back(dim_json(t->dim_names[i], t->shape[i]));
        }
        Json entry;
        entry["shape"] = shape;
        entry["dtype"] = std::string(to_string(t->dtype));
        if (t->role == TensorRole::kParam) entry["param"] = true;
        if (t->distribution != Distribution::kNormal)
            entry["distribution"] = std::string(to_string(t->distribution));
        if (!t->fan_in.empty()) {  // a number as a number, dims by name (they follow a re-bind)
            if (t->fan_in.find_first_not_of("0123456789") == std::string::npos)
                entry["fan_in"] = t->fan_in_value;
            else
                entry["fan_in"] = t->fan_in;
        }
        if (t->scale) entry["scale"] = *t->scale;
        j["inputs"][t->name] = entry;
    }
    j["graph"] = Json::array();
    for (const Op& op : p.ops) {
        Json o;
        o["op"] = std::string(to_string(op.kind));
        o["inputs"] = op.inputs;
        o["output"] = op.output;
        write_attrs(op, p, o);
        if (op_class(op.kind) == OpClass::kShape) spec::write_shape_attrs(op, o);
        j["graph"].push_back(o);
    }
    j["outputs"] = p.outputs;
    Json precision;
    precision["policy"] = std::string(to_string(p.policy));
    precision["atol"] = p.tolerance.atol;
    precision["rtol"] = p.tolerance.rtol;
    precision["min_fraction"] = p.tolerance.min_fraction;
    precision["max_error"] = p.tolerance.max_error;
    j["precision"] = precision;
    return j;
}

}  // namespace kforge
