// The pooling ops in the spec: their attributes (read, checked, written back) and their shape
// inference, including the output's derived spatial dims (docs/problem-spec.md, "Pooling").
#include <algorithm>
#include <map>

#include "problem/pool.h"
#include "problem/spec.h"
#include "problem/spec_internal.h"

namespace kforge::spec {
namespace {

// An integer or an array of 1-3 integers, each >= min.
Status read_int_list(const Json& v, const std::string& key, const std::string& path, int64_t min,
                     std::vector<int64_t>& field) {
    const std::string bound = min == 0 ? "an integer >= 0" : "an integer >= 1";
    auto one = [&](const Json& e, const std::string& at) -> Expected<int64_t> {
        if (!e.is_number()) {
            return make_error(at, key + " must be " + bound + " or an array of 1 to 3 of them "
                                        "(one per spatial axis), got " + type_name(e));
        }
        auto i = read_int(e, at);
        if (!i) return i.error();
        if (*i < min || *i > kMaxDimValue) {
            return make_error(at, key + " must be " + bound + " (at most 2^40), got " + e.dump());
        }
        return *i;
    };
    field.clear();
    if (!v.is_array()) {
        auto x = one(v, path);
        if (!x) return x.error();
        field.push_back(*x);
        return Ok{};
    }
    if (v.empty() || v.size() > 3) {
        return make_error(path, key + " must be an integer or an array of 1 to 3 of them (one per "
                                      "spatial axis), got an array of " + std::to_string(v.size()));
    }
    for (size_t i = 0; i < v.size(); ++i) {
        auto x = one(v[i], path + "[" + std::to_string(i) + "]");
        if (!x) return x.error();
        field.push_back(*x);
    }
    return Ok{};
}

std::string shape_text(const Tensor& t) {
    std::string s = quote(t.name) + " [";
    for (size_t i = 0; i < t.shape.size(); ++i) {
        s += (i ? ", " : "") + (t.dim_names[i].empty() ? "" : t.dim_names[i] + "=") +
             std::to_string(t.shape[i]);
    }
    return s + "]";
}

std::string list_text(const std::vector<int64_t>& v) {
    std::string s;
    for (int64_t e : v) s += (s.empty() ? "" : ", ") + std::to_string(e);
    return "[" + s + "]";
}

// Sizes an attribute to `rank` entries (one given entry counts for every axis); empty stays
// empty. Error where it has another count.
Status fit_rank(const Op& op, const char* key, std::vector<int64_t>& v, size_t rank,
                const Tensor& x) {
    if (v.empty() || v.size() == rank) return Ok{};
    if (v.size() == 1) {
        v.assign(rank, v[0]);
        return Ok{};
    }
    return make_error(op.json_path + "." + key,
                      "shape mismatch: " + std::string(key) + " " + list_text(v) + " has " +
                          std::to_string(v.size()) + " entries but " + shape_text(x) + " has " +
                          std::to_string(rank) + " spatial axes (one entry, or one per axis)");
}

// Names y's spatial dims (max_pool / avg_pool): the spec's out_dims or the defaults of
// docs/problem-spec.md; enters new ones into `dims` and `derived`. op.attrs.out_dims gets one
// name per axis ("" where y's dim is an anonymous literal, as x's is).
Status name_pool_dims(Op& op, const Tensor& x, const std::vector<int64_t>& size,
                      std::map<std::string, int64_t>& dims, std::set<std::string>& derived) {
    const OpAttrs& a = op.attrs;
    const size_t rank = size.size();
    const bool explicit_names = !a.out_dims.empty();
    if (explicit_names && a.out_dims.size() != rank) {
        return make_error(op.json_path + ".out_dims",
                          "out_dims must name y's " + std::to_string(rank) + " spatial dims, got " +
                              std::to_string(a.out_dims.size()) + " names");
    }
    std::vector<std::string> names(rank);
    auto alike = [&](size_t i, size_t j) {  // same x dim and attributes: the same y dim
        return !x.dim_names[2 + i].empty() && x.dim_names[2 + i] == x.dim_names[2 + j] &&
               a.kernel_size[i] == a.kernel_size[j] && a.stride[i] == a.stride[j] &&
               a.padding[i] == a.padding[j] && a.dilation[i] == a.dilation[j];
    };
    for (size_t i = 0; i < rank; ++i) {
        const std::string& xname = x.dim_names[2 + i];
        std::string& name = names[i];
        const bool keeps = a.stride[i] == 1 && 2 * a.padding[i] == a.dilation[i] * (a.kernel_size[i] - 1);
        if (explicit_names) {
            name = a.out_dims[i];
        } else if (xname.empty() || keeps) {
            name = xname;  // a literal stays a literal; a kept size keeps x's name
        } else {
            for (size_t j = 0; j < i && name.empty(); ++j) {
                if (alike(i, j)) name = names[j];
            }
            if (name.empty()) {
                const std::string base = xname + "o";
                name = base;
                for (int n = 2; dims.count(name) != 0 ||
                                std::find(names.begin(), names.begin() + i, name) != names.begin() + i;
                     ++n) {
                    name = base + std::to_string(n);
                }
            }
        }
        if (name.empty()) continue;
        const std::string where = op.json_path + ".out_dims[" + std::to_string(i) + "]";
        if (explicit_names && !is_identifier(name)) {
            return make_error(where, "dim name " + quote(name) + " is not an identifier");
        }
        const std::string what = "spatial size " + std::to_string(size[i]);
        auto it = dims.find(name);
        if (it == dims.end()) {
            dims[name] = size[i];
            derived.insert(name);
            continue;
        }
        const bool own = name == xname ||
                         std::find(names.begin(), names.begin() + i, name) != names.begin() + i;
        if (it->second != size[i]) {
            return make_error(where, "shape mismatch: out_dims names y's " + what + " " +
                                         quote(name) + ", but dim " + quote(name) + " = " +
                                         std::to_string(it->second));
        }
        // a dim another op derives with this value is that axis derived twice (a strided conv
        // and its strided 1x1 shortcut, added): a binding where they differ fails above
        if (!own && derived.count(name) == 0) {
            return make_error(where, "out_dims " + quote(name) + " is already a dim; name y's " +
                                         "spatial dims with new names (or x's own dim name " +
                                         "where the output keeps x's size)");
        }
    }
    op.attrs.out_dims = names;
    return Ok{};
}

}  // namespace

std::vector<std::string> pool_attribute_names(OpKind k) {
    switch (k) {
        case OpKind::kMaxPool:
            return {"kernel_size", "stride", "padding", "dilation", "ceil_mode", "out_dims"};
        case OpKind::kAvgPool:
            return {"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                    "divisor_override", "out_dims"};
        default:
            return {"output_size"};
    }
}

Status read_pool_attr(const Json& v, const std::string& key, const std::string& path,
                      OpAttrs& a) {
    if (key == "kernel_size") return read_int_list(v, key, path, 1, a.kernel_size);
    if (key == "output_size") return read_int_list(v, key, path, 1, a.output_size);
    if (key == "stride") return read_int_list(v, key, path, 1, a.stride);
    if (key == "padding") return read_int_list(v, key, path, 0, a.padding);
    if (key == "dilation") return read_int_list(v, key, path, 1, a.dilation);
    if (key == "ceil_mode" || key == "count_include_pad") {
        auto b = read_bool(v, path);
        if (!b) return b.error();
        (key == "ceil_mode" ? a.ceil_mode : a.count_include_pad) = *b;
        return Ok{};
    }
    if (key == "divisor_override") {
        auto i = read_int(v, path);
        if (!i) return i.error();
        if (*i < 1 || *i > kMaxDimValue) {
            return make_error(path, "divisor_override must be an integer >= 1, got " + v.dump());
        }
        a.divisor_override = *i;
        return Ok{};
    }
    if (key == "out_dims") {
        if (!v.is_array() || v.empty() || v.size() > 3) {
            return make_error(path, "out_dims must be an array of 1 to 3 dim names (y's spatial "
                                    "dims), got " +
                                        (v.is_array() ? "an array of " + std::to_string(v.size())
                                                      : type_name(v)));
        }
        a.out_dims.clear();
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
    return make_error(path, "attribute " + quote(key) + " has no reader");  // unreachable
}

Status check_pool_op(const Json& v, const std::string& path, const Op& op) {
    const char* needed = is_adaptive_pool(op.kind) ? "output_size" : "kernel_size";
    if (!v.contains(needed)) {
        return make_error(path, "missing key " + quote(needed) + " (op " +
                                    quote(to_string(op.kind)) + ")");
    }
    return Ok{};
}

Expected<Tensor> infer_pool(Op& op, const std::vector<const Tensor*>& in,
                            std::map<std::string, int64_t>& dims, std::set<std::string>& derived) {
    const Tensor& x = *in[0];
    OpAttrs& a = op.attrs;
    const std::string name(to_string(op.kind));
    if (x.shape.size() < 3 || x.shape.size() > 5) {
        return make_error(op.json_path + ".inputs[0]",
                          "shape mismatch: " + name + " takes [N, C, L], [N, C, H, W] or [N, C, D, "
                          "H, W]; " + shape_text(x) + " has rank " +
                              std::to_string(x.shape.size()));
    }
    const size_t rank = x.shape.size() - 2;
    Tensor out;
    out.shape = {x.shape[0], x.shape[1]};
    out.dim_names = {x.dim_names[0], x.dim_names[1]};
    if (is_adaptive_pool(op.kind)) {
        if (auto s = fit_rank(op, "output_size", a.output_size, rank, x); !s) return s.error();
        for (size_t i = 0; i < rank; ++i) {
            out.shape.push_back(a.output_size[i]);
            out.dim_names.push_back(a.output_size[i] == x.shape[2 + i] ? x.dim_names[2 + i] : "");
        }
        return out;
    }
    if (auto s = fit_rank(op, "kernel_size", a.kernel_size, rank, x); !s) return s.error();
    if (a.stride.empty()) a.stride = a.kernel_size;  // PyTorch: stride defaults to kernel_size
    if (a.padding.empty()) a.padding.assign(rank, 0);
    if (a.dilation.empty()) a.dilation.assign(rank, 1);
    for (auto [key, field] : {std::pair<const char*, std::vector<int64_t>*>{"stride", &a.stride},
                              {"padding", &a.padding}, {"dilation", &a.dilation}}) {
        if (auto s = fit_rank(op, key, *field, rank, x); !s) return s.error();
    }
    std::vector<int64_t> size(rank);
    for (size_t i = 0; i < rank; ++i) {
        const std::string axis = "[" + std::to_string(i) + "]";
        if (a.padding[i] * 2 > a.kernel_size[i]) {
            return make_error(op.json_path + ".padding",
                              "padding" + axis + " = " + std::to_string(a.padding[i]) +
                                  " must be at most half of kernel_size" + axis + " = " +
                                  std::to_string(a.kernel_size[i]) + " (PyTorch's rule)");
        }
        if (a.kernel_size[i] > kMaxDimValue / a.dilation[i]) {
            return make_error(op.json_path + ".kernel_size", "kernel_size" + axis +
                                                                 " * dilation is above 2^40");
        }
        size[i] = pool_output_size(x.shape[2 + i], a.kernel_size[i], a.stride[i], a.padding[i],
                                   a.dilation[i], a.ceil_mode);
        if (size[i] < 1) {
            return make_error(op.json_path + ".inputs[0]",
                              "shape mismatch: " + name + " output size would be < 1 on spatial "
                              "axis " + std::to_string(i) + ": the window (kernel_size " +
                                  std::to_string(a.kernel_size[i]) + ", dilation " +
                                  std::to_string(a.dilation[i]) + ") spans " +
                                  std::to_string(a.dilation[i] * (a.kernel_size[i] - 1) + 1) +
                                  " but the padded input has " +
                                  std::to_string(x.shape[2 + i] + 2 * a.padding[i]) + " (" +
                                  shape_text(x) + ")");
        }
    }
    if (auto s = name_pool_dims(op, x, size, dims, derived); !s) return s.error();
    for (size_t i = 0; i < rank; ++i) {
        out.shape.push_back(size[i]);
        out.dim_names.push_back(a.out_dims[i]);
    }
    return out;
}

void write_pool_attrs(const Op& op, Json& j) {
    const OpAttrs& a = op.attrs;
    auto list = [&](const char* key, const std::vector<int64_t>& v) {
        bool same = true;
        for (int64_t e : v) same = same && e == v.front();
        j[key] = same ? Json(v.front()) : Json(v);
    };
    auto all = [](const std::vector<int64_t>& v, int64_t value) {
        return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == value; });
    };
    if (is_adaptive_pool(op.kind)) {
        list("output_size", a.output_size);
        return;
    }
    list("kernel_size", a.kernel_size);
    if (a.stride != a.kernel_size) list("stride", a.stride);
    if (!all(a.padding, 0)) list("padding", a.padding);
    if (op.kind == OpKind::kMaxPool && !all(a.dilation, 1)) list("dilation", a.dilation);
    if (a.ceil_mode) j["ceil_mode"] = true;
    if (op.kind == OpKind::kAvgPool) {
        if (!a.count_include_pad) j["count_include_pad"] = false;
        if (a.divisor_override != 0) j["divisor_override"] = a.divisor_override;
    }
    // "" where y's dim is an anonymous literal: the defaults name the others alike on re-parse
    const bool named = std::all_of(a.out_dims.begin(), a.out_dims.end(),
                                   [](const std::string& n) { return !n.empty(); });
    if (named && !a.out_dims.empty()) j["out_dims"] = a.out_dims;
}

}  // namespace kforge::spec
