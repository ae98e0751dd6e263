// The shape ops of the spec (problem/shape_ops.h): attributes, shape inference and spec writing.
// reshape and expand are views (no data moves); permute, slice, cat and pad move data. A target
// shape entry is a dim name, an integer, -1 (the size that makes the element counts agree) or a
// product "C*H*W", which names a derived dim (C_H_W) recomputed whenever the dims are re-bound.
#include "problem/shape_ops.h"

#include <algorithm>

#include "problem/spec.h"

namespace kforge::spec {
namespace {

std::string dims_text(const Tensor& t) {
    std::string s = quote(t.name) + " [";
    for (size_t i = 0; i < t.shape.size(); ++i) {
        s += (i ? ", " : "") + (t.dim_names[i].empty() ? "" : t.dim_names[i] + "=") +
             std::to_string(t.shape[i]);
    }
    return s + "]";
}

Error mismatch(const Op& op, const std::string& where, const std::string& what) {
    return make_error(op.json_path + where, "shape mismatch: " + what);
}

bool all_digits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> split_product(const std::string& s) {
    std::vector<std::string> out;
    size_t at = 0;
    while (true) {
        size_t star = s.find('*', at);
        out.push_back(s.substr(at, star == std::string::npos ? std::string::npos : star - at));
        if (star == std::string::npos) break;
        at = star + 1;
    }
    return out;
}

// One target shape entry, checked for syntax only (resolved at inference).
Expected<std::string> read_shape_entry(const Json& e, const std::string& at) {
    if (e.is_number()) {
        auto i = read_int(e, at);
        if (!i) return i.error();
        if (*i != -1 && (*i < 1 || *i > kMaxDimValue)) {
            return make_error(at, "a shape entry is a positive integer (at most 2^40), -1, a dim "
                                  "name or a product \"C*H*W\"; got " + e.dump());
        }
        return std::to_string(*i);
    }
    auto s = read_string(e, at);
    if (!s) return s.error();
    for (const std::string& f : split_product(*s)) {
        if (!is_identifier(f) && !(all_digits(f) && f.size() <= 13 && std::stoll(f) > 0)) {
            return make_error(at, "a shape entry is a dim name, a positive integer, -1 or a "
                                  "product of dim names and integers (\"C*H*W\"); got " + quote(*s));
        }
    }
    return *s;
}

struct Resolved {
    int64_t value = 0;
    std::string name;  // a dim name, or "" for a literal / -1
    bool infer = false;
    bool product = false;
};

// A shape entry against the dims: its size, and a product's derived dim (entered into dims).
Expected<Resolved> resolve_entry(const Op& op, const std::string& entry, const std::string& at,
                                 std::map<std::string, int64_t>& dims,
                                 std::set<std::string>& derived) {
    Resolved r;
    if (entry == "-1") {
        r.infer = true;
        return r;
    }
    std::vector<std::string> factors = split_product(entry);
    __int128 value = 1;
    for (const std::string& f : factors) {
        if (all_digits(f)) {
            value *= std::stoll(f);
        } else {
            auto it = dims.find(f);
            if (it == dims.end()) {
                std::vector<std::string> known;
                for (const auto& [k, v] : dims) known.push_back(k);
                return make_error(op.json_path + at, "unknown dim " + quote(f) + "; known dims: " +
                                                         join(known));
            }
            value *= it->second;
        }
        if (value > kMaxDimValue) {
            return make_error(op.json_path + at, "shape entry " + quote(entry) +
                                                     " is above 2^40 elements on one axis");
        }
    }
    r.value = static_cast<int64_t>(value);
    if (factors.size() == 1) {
        r.name = all_digits(entry) ? "" : entry;
        return r;
    }
    // a product: a derived dim named by its factors (C*H*W -> C_H_W), a digit appended while
    // the name is a dim of another value or one the spec declares
    r.product = true;
    std::string base;
    for (const std::string& f : factors) base += (base.empty() ? "" : "_") + f;
    if (!is_identifier(base.substr(0, 1))) base = "D" + base;
    base = base.substr(0, 120);
    std::string name = base;
    for (int n = 2;; ++n) {
        auto it = dims.find(name);
        if (it == dims.end()) {
            dims[name] = r.value;
            derived.insert(name);
            break;
        }
        if (derived.count(name) != 0 && it->second == r.value) break;
        name = base + std::to_string(n);
    }
    r.name = name;
    return r;
}

Status normalize_axis(Op& op, int64_t rank, const Tensor& x) {
    int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis;
    if (axis < 0 || axis >= rank) {
        return mismatch(op, ".axis", "axis " + std::to_string(op.attrs.axis) +
                                         " is out of range for " + dims_text(x) + " of rank " +
                                         std::to_string(rank));
    }
    op.attrs.axis = axis;
    return Ok{};
}

std::string shape_list(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// The axes a reshape leaves as they are keep their input's names: a leading run of axes with the
// input's extents (and a trailing one) index the same elements, so an entry written as a number
// or -1 there (a traced module's constant: `q.view(16384, B * heads, d)`) names the input's axis
// instead of an unnamed one that element-wise ops would align apart from the named axis.
void keep_untouched_names(const Tensor& x, Tensor& out) {
    const size_t r = std::min(x.shape.size(), out.shape.size());
    auto adopt = [&](size_t i, size_t j) {  // out axis i is x axis j
        if (!out.dim_names[i].empty() || j >= x.dim_names.size() || x.dim_names[j].empty()) return;
        if (std::find(out.dim_names.begin(), out.dim_names.end(), x.dim_names[j]) !=
            out.dim_names.end())
            return;
        out.dim_names[i] = x.dim_names[j];
    };
    for (size_t i = 0; i < r && out.shape[i] == x.shape[i]; ++i) adopt(i, i);
    for (size_t i = 1; i <= r && out.shape[out.shape.size() - i] == x.shape[x.shape.size() - i]; ++i)
        adopt(out.shape.size() - i, x.shape.size() - i);
}

Expected<Tensor> infer_reshape(Op& op, const Tensor& x, std::map<std::string, int64_t>& dims,
                               std::set<std::string>& derived) {
    Tensor out;
    int64_t known = 1;
    std::optional<size_t> infer;
    for (size_t i = 0; i < op.attrs.view_shape.size(); ++i) {
        const std::string at = ".shape[" + std::to_string(i) + "]";
        auto r = resolve_entry(op, op.attrs.view_shape[i], at, dims, derived);
        if (!r) return r.error();
        if (r->infer) {
            if (infer) return make_error(op.json_path + at, "only one shape entry may be -1");
            infer = i;
        } else {
            if (static_cast<__int128>(known) * r->value > kMaxTensorElements) {
                return mismatch(op, ".shape", "reshape to more than 2^50 elements");
            }
            known *= r->value;
        }
        out.shape.push_back(r->value);
        out.dim_names.push_back(r->name);
    }
    const int64_t n = x.numel();
    if (infer) {
        if (n % known != 0) {
            return mismatch(op, ".shape", "cannot reshape " + dims_text(x) + " (" +
                                              std::to_string(n) + " elements) with -1: the " +
                                              "other entries hold " + std::to_string(known) +
                                              ", which does not divide " + std::to_string(n));
        }
        out.shape[*infer] = n / known;
        known = n;
    }
    if (known != n) {
        return mismatch(op, ".shape", "cannot reshape " + dims_text(x) + " (" + std::to_string(n) +
                                          " elements) to " + shape_list(out.shape) + " (" +
                                          std::to_string(known) + " elements)");
    }
    keep_untouched_names(x, out);
    return out;
}

Expected<Tensor> infer_expand(Op& op, const Tensor& x, std::map<std::string, int64_t>& dims,
                              std::set<std::string>& derived) {
    const auto& entries = op.attrs.view_shape;
    if (entries.size() < x.shape.size()) {
        return mismatch(op, ".shape", "expand of " + dims_text(x) + " to " +
                                          std::to_string(entries.size()) +
                                          " dims: the target has fewer dims than the input");
    }
    const size_t lead = entries.size() - x.shape.size();
    Tensor out;
    for (size_t i = 0; i < entries.size(); ++i) {
        const std::string at = ".shape[" + std::to_string(i) + "]";
        auto r = resolve_entry(op, entries[i], at, dims, derived);
        if (!r) return r.error();
        const bool has_in = i >= lead;
        const size_t j = i - lead;
        if (r->infer) {
            if (!has_in) return make_error(op.json_path + at, "-1 (keep the size) on a new dim");
            out.shape.push_back(x.shape[j]);
            out.dim_names.push_back(x.dim_names[j]);
            continue;
        }
        if (has_in && x.shape[j] != 1 && x.shape[j] != r->value) {
            return mismatch(op, at, "expand of " + dims_text(x) + ": dim " + std::to_string(j) +
                                        " has size " + std::to_string(x.shape[j]) +
                                        ", not 1 or " + std::to_string(r->value));
        }
        out.shape.push_back(r->value);
        out.dim_names.push_back(!r->name.empty() ? r->name
                                : has_in && x.shape[j] == r->value ? x.dim_names[j]
                                                                   : "");
    }
    return out;
}

Expected<Tensor> infer_permute(Op& op, const Tensor& x) {
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    if (static_cast<int64_t>(op.attrs.perm.size()) != rank) {
        return mismatch(op, ".dims", "permute of " + dims_text(x) + " needs " +
                                         std::to_string(rank) + " dims, got " +
                                         std::to_string(op.attrs.perm.size()));
    }
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    Tensor out;
    for (size_t i = 0; i < op.attrs.perm.size(); ++i) {
        int64_t d = op.attrs.perm[i] < 0 ? op.attrs.perm[i] + rank : op.attrs.perm[i];
        const std::string at = ".dims[" + std::to_string(i) + "]";
        if (d < 0 || d >= rank) {
            return mismatch(op, at, "dim " + std::to_string(op.attrs.perm[i]) +
                                        " is out of range for " + dims_text(x));
        }
        if (seen[static_cast<size_t>(d)]) {
            return mismatch(op, at, "dim " + std::to_string(d) + " appears twice in dims");
        }
        seen[static_cast<size_t>(d)] = true;
        op.attrs.perm[i] = d;
        out.shape.push_back(x.shape[static_cast<size_t>(d)]);
        out.dim_names.push_back(x.dim_names[static_cast<size_t>(d)]);
    }
    return out;
}

Expected<Tensor> infer_slice(Op& op, const Tensor& x, const std::map<std::string, int64_t>& dims) {
    if (x.shape.empty()) return mismatch(op, ".inputs[0]", dims_text(x) + " has no axis to slice");
    // bounds written as dim expressions take their values at this binding
    if (!op.attrs.slice_start_expr.empty()) {
        auto v = eval_dim_expr(op.attrs.slice_start_expr, op.json_path + ".start", dims);
        if (!v) return v.error();
        op.attrs.slice_start = *v;
    }
    if (!op.attrs.slice_end_expr.empty()) {
        auto v = eval_dim_expr(op.attrs.slice_end_expr, op.json_path + ".end", dims);
        if (!v) return v.error();
        op.attrs.slice_end = *v;
    }
    if (auto s = normalize_axis(op, static_cast<int64_t>(x.shape.size()), x); !s) return s.error();
    const size_t axis = static_cast<size_t>(op.attrs.axis);
    const int64_t n = x.shape[axis];
    const OpAttrs& a = op.attrs;
    const int64_t start = a.slice_start < 0 ? a.slice_start + n : a.slice_start;
    if (start < 0 || start >= n) {
        return make_error(op.json_path + ".start",
                          "index out of range: start " + std::to_string(a.slice_start) +
                              " on axis " + std::to_string(axis) + " of " + dims_text(x) +
                              " (size " + std::to_string(n) + "; valid: " + std::to_string(-n) +
                              " to " + std::to_string(n - 1) + ")");
    }
    int64_t end = n;
    if (a.slice_end) {
        end = *a.slice_end < 0 ? *a.slice_end + n : *a.slice_end;
        if (end < 0 || end > n) {
            return make_error(op.json_path + ".end",
                              "index out of range: end " + std::to_string(*a.slice_end) +
                                  " on axis " + std::to_string(axis) + " of " + dims_text(x) +
                                  " (size " + std::to_string(n) + "; valid: " +
                                  std::to_string(-n) + " to " + std::to_string(n) + ")");
        }
    }
    if (end <= start) {
        return mismatch(op, ".end", "the slice [" + std::to_string(a.slice_start) + ":" +
                                        std::to_string(a.slice_end ? *a.slice_end : n) +
                                        "] of axis " + std::to_string(axis) + " of " +
                                        dims_text(x) + " is empty");
    }
    SliceRange r = slice_range(op.attrs, n);
    Tensor out = x;
    out.shape[axis] = r.count;
    if (r.count != n) out.dim_names[axis] = "";
    return out;
}

Expected<Tensor> infer_cat(Op& op, const std::vector<const Tensor*>& in) {
    const Tensor& x = *in[0];
    if (x.shape.empty()) return mismatch(op, ".inputs[0]", dims_text(x) + " is a scalar (0-d)");
    if (auto s = normalize_axis(op, static_cast<int64_t>(x.shape.size()), x); !s) return s.error();
    const size_t axis = static_cast<size_t>(op.attrs.axis);
    Tensor out = x;
    for (size_t k = 1; k < in.size(); ++k) {
        const Tensor& t = *in[k];
        const std::string at = ".inputs[" + std::to_string(k) + "]";
        if (t.dtype != x.dtype) {
            return make_error(op.json_path + at, "bad dtype: " + quote(t.name) + " is " +
                                                     std::string(to_string(t.dtype)) + " but " +
                                                     quote(x.name) + " is " +
                                                     std::string(to_string(x.dtype)) +
                                                     " (cat joins tensors of one dtype)");
        }
        bool same = t.shape.size() == x.shape.size();
        for (size_t i = 0; same && i < x.shape.size(); ++i) same = i == axis || t.shape[i] == x.shape[i];
        if (!same) {
            return mismatch(op, at, dims_text(t) + " does not match " + dims_text(x) +
                                        " outside the cat axis " + std::to_string(axis));
        }
        out.shape[axis] += t.shape[axis];
    }
    if (in.size() > 1) out.dim_names[axis] = "";
    return out;
}

Expected<Tensor> infer_pad(Op& op, const Tensor& x, const std::map<std::string, int64_t>& dims) {
    // amounts written as dim expressions take their values at this binding
    for (size_t i = 0; i < op.attrs.pad_exprs.size() && i < op.attrs.pads.size(); ++i) {
        for (size_t k = 0; k < 2; ++k) {
            const std::string& text = op.attrs.pad_exprs[i][k];
            if (text.empty()) continue;
            auto v = eval_dim_expr(text, op.json_path + ".pads[" + std::to_string(i) + "][" +
                                             std::to_string(k) + "]", dims);
            if (!v) return v.error();
            op.attrs.pads[i][k] = *v;
        }
    }
    if (op.attrs.pads.size() != x.shape.size()) {
        return mismatch(op, ".pads", "pads has " + std::to_string(op.attrs.pads.size()) +
                                         " [before, after] pairs; " + dims_text(x) + " has " +
                                         std::to_string(x.shape.size()) + " dims (one pair each)");
    }
    Tensor out = x;
    for (size_t i = 0; i < x.shape.size(); ++i) {
        const auto& [b, a] = op.attrs.pads[i];
        if (b == 0 && a == 0) continue;
        out.shape[i] += b + a;
        if (out.shape[i] > kMaxDimValue) return mismatch(op, ".pads", "a padded dim above 2^40");
        out.dim_names[i] = "";
    }
    return out;
}

// out_names: each named axis must have the dim's value (the op's extent on that axis).
Status apply_out_names(const Op& op, Tensor& out, const std::map<std::string, int64_t>& dims) {
    const auto& names = op.attrs.out_names;
    if (names.empty()) return Ok{};
    if (names.size() != out.shape.size()) {
        return mismatch(op, ".out_names", "out_names has " + std::to_string(names.size()) +
                                              " entries; the output has " +
                                              std::to_string(out.shape.size()) + " dims");
    }
    for (size_t i = 0; i < names.size(); ++i) {
        if (names[i].empty()) continue;
        const std::string at = ".out_names[" + std::to_string(i) + "]";
        auto it = dims.find(names[i]);
        if (it == dims.end()) {
            return make_error(op.json_path + at, "unknown dim " + quote(names[i]));
        }
        if (it->second != out.shape[i]) {
            return mismatch(op, at, "out_names names axis " + std::to_string(i) + " " +
                                        quote(names[i]) + " = " + std::to_string(it->second) +
                                        ", but the output's extent there is " +
                                        std::to_string(out.shape[i]));
        }
        out.dim_names[i] = names[i];
    }
    return Ok{};
}

}  // namespace

ShapeSignature shape_signature(OpKind k) {
    switch (k) {
        case OpKind::kReshape: case OpKind::kExpand: return {1, 1, "X", {"shape"}};
        case OpKind::kPermute: return {1, 1, "X", {"dims"}};
        case OpKind::kSlice: return {1, 1, "X", {"axis", "start", "end", "step", "out_names"}};
        case OpKind::kCat: return {1, 64, "X0, X1, ...", {"axis", "out_names"}};
        case OpKind::kPad: return {1, 1, "X", {"pads", "value", "out_names"}};
        default: return {1, 1, "X", {}};
    }
}

Status read_shape_attr(const Json& v, const std::string& key, const std::string& path, Op& op) {
    OpAttrs& a = op.attrs;
    auto bounded_int = [&](int64_t lo, int64_t hi, const char* what) -> Expected<int64_t> {
        auto i = read_int(v, path);
        if (!i) return i.error();
        if (*i < lo || *i > hi) return make_error(path, std::string(what) + ", got " + v.dump());
        return *i;
    };
    if (key == "shape") {
        if (!v.is_array() || v.size() > static_cast<size_t>(kMaxRank)) {
            return make_error(path, "expected an array of at most 8 shape entries, got " +
                                        (v.is_array() ? "an array of " + std::to_string(v.size())
                                                      : type_name(v)));
        }
        for (size_t i = 0; i < v.size(); ++i) {
            auto e = read_shape_entry(v[i], path + "[" + std::to_string(i) + "]");
            if (!e) return e.error();
            a.view_shape.push_back(*e);
        }
        return Ok{};
    }
    if (key == "dims") {
        if (!v.is_array() || v.size() > static_cast<size_t>(kMaxRank)) {
            return make_error(path, "expected an array of at most 8 axes, got " + type_name(v));
        }
        for (size_t i = 0; i < v.size(); ++i) {
            auto d = read_int(v[i], path + "[" + std::to_string(i) + "]");
            if (!d) return d.error();
            if (*d < -kMaxRank || *d >= kMaxRank) {
                return make_error(path + "[" + std::to_string(i) + "]",
                                  "axis " + std::to_string(*d) + " is out of range");
            }
            a.perm.push_back(*d);
        }
        return Ok{};
    }
    if (key == "axis") {
        auto i = bounded_int(-kMaxRank, kMaxRank - 1, "axis must be in [-8, 8)");
        if (!i) return i.error();
        a.axis = *i;
        return Ok{};
    }
    if ((key == "start" || key == "end") && v.is_string()) {  // a dim expression: "2*E"
        const std::string text = v.get<std::string>();
        if (auto s = check_dim_expr(text, path); !s) return s.error();
        (key == "start" ? a.slice_start_expr : a.slice_end_expr) = text;
        return Ok{};
    }
    if (key == "start" || key == "end") {
        auto i = bounded_int(-kMaxDimValue, kMaxDimValue, "an index of magnitude at most 2^40");
        if (!i) return i.error();
        if (key == "start") a.slice_start = *i;
        else a.slice_end = *i;
        return Ok{};
    }
    if (key == "step") {
        auto i = bounded_int(1, kMaxDimValue, "step must be an integer >= 1");
        if (!i) return i.error();
        a.slice_step = *i;
        return Ok{};
    }
    if (key == "pads") {
        if (!v.is_array() || v.size() > static_cast<size_t>(kMaxRank)) {
            return make_error(path, "expected an array of [before, after] pairs (one per dim of "
                                    "X), got " + type_name(v));
        }
        for (size_t i = 0; i < v.size(); ++i) {
            const std::string at = path + "[" + std::to_string(i) + "]";
            if (!v[i].is_array() || v[i].size() != 2) {
                return make_error(at, "expected a pair [before, after], got " + v[i].dump());
            }
            std::array<int64_t, 2> pair{};
            std::array<std::string, 2> exprs;
            for (size_t k = 0; k < 2; ++k) {
                const std::string at_k = at + "[" + std::to_string(k) + "]";
                if (v[i][k].is_string()) {  // a dim expression: "D96", valued at inference
                    exprs[k] = v[i][k].get<std::string>();
                    if (auto st = check_dim_expr(exprs[k], at_k); !st) return st.error();
                    continue;
                }
                auto x = read_int(v[i][k], at_k);
                if (!x) return x.error();
                if (*x < 0 || *x > kMaxDimValue) {
                    return make_error(at_k, "a pad is an integer >= 0 (crop with slice) or a dim "
                                            "expression (\"C\", \"2*C\"), got " +
                                                v[i][k].dump());
                }
                pair[k] = *x;
            }
            a.pads.push_back(pair);
            a.pad_exprs.push_back(exprs);
        }
        return Ok{};
    }
    if (key == "out_names") {
        if (!v.is_array() || v.size() > static_cast<size_t>(kMaxRank)) {
            return make_error(path, "expected an array of dim names (\"\" for none), one per "
                                    "axis of the output, got " + type_name(v));
        }
        for (size_t i = 0; i < v.size(); ++i) {
            const std::string at = path + "[" + std::to_string(i) + "]";
            auto n = read_string(v[i], at);
            if (!n) return n.error();
            if (!n->empty() && !is_identifier(*n)) {
                return make_error(at, "dim name " + quote(*n) + " is not an identifier");
            }
            a.out_names.push_back(*n);
        }
        return Ok{};
    }
    if (key == "value") {
        auto x = read_number(v, path);
        if (!x) return x.error();
        a.scalar = *x;
        return Ok{};
    }
    return make_error(path, "attribute " + quote(key) + " has no reader");  // unreachable
}

Status check_shape_required(const Json& v, const Op& op) {
    const char* key = nullptr;
    switch (op.kind) {
        case OpKind::kReshape: case OpKind::kExpand: key = "shape"; break;
        case OpKind::kPermute: key = "dims"; break;
        case OpKind::kSlice: case OpKind::kCat: key = "axis"; break;
        case OpKind::kPad: key = "pads"; break;
        default: return Ok{};
    }
    if (!v.contains(key)) {
        return make_error(op.json_path, "missing key " + quote(key) + " (op " +
                                            quote(to_string(op.kind)) + ")");
    }
    return Ok{};
}

Expected<Tensor> infer_shape_op(Op& op, const std::vector<const Tensor*>& in,
                                std::map<std::string, int64_t>& dims,
                                std::set<std::string>& derived) {
    const Tensor& x = *in[0];
    Expected<Tensor> out = Error{};
    switch (op.kind) {
        case OpKind::kReshape: out = infer_reshape(op, x, dims, derived); break;
        case OpKind::kExpand: out = infer_expand(op, x, dims, derived); break;
        case OpKind::kPermute: out = infer_permute(op, x); break;
        case OpKind::kSlice: out = infer_slice(op, x, dims); break;
        case OpKind::kCat: out = infer_cat(op, in); break;
        case OpKind::kPad: out = infer_pad(op, x, dims); break;
        default: return make_error(op.json_path, "internal: not a shape op");
    }
    if (!out) return out;
    if (auto st = apply_out_names(op, *out, dims); !st) return st.error();
    out->name = op.output;
    out->dtype = x.dtype;
    out->role = TensorRole::kIntermediate;
    return out;
}

void write_shape_attrs(const Op& op, Json& j) {
    const OpAttrs& a = op.attrs;
    switch (op.kind) {
        case OpKind::kReshape: case OpKind::kExpand: {
            Json shape = Json::array();
            for (const std::string& e : a.view_shape) {
                if (e == "-1" || all_digits(e)) shape.push_back(std::stoll(e));
                else shape.push_back(e);
            }
            j["shape"] = shape;
            break;
        }
        case OpKind::kPermute: j["dims"] = a.perm; break;
        case OpKind::kSlice:
            j["axis"] = a.axis;
            if (!a.slice_start_expr.empty()) j["start"] = a.slice_start_expr;
            else if (a.slice_start != 0) j["start"] = a.slice_start;
            if (!a.slice_end_expr.empty()) j["end"] = a.slice_end_expr;
            else if (a.slice_end) j["end"] = *a.slice_end;
            if (a.slice_step != 1) j["step"] = a.slice_step;
            break;
        case OpKind::kCat: j["axis"] = a.axis; break;
        case OpKind::kPad: {
            Json pads = Json::array();
            for (size_t i = 0; i < a.pads.size(); ++i) {
                Json pair = Json::array();
                for (size_t k = 0; k < 2; ++k) {
                    const bool expr = i < a.pad_exprs.size() && !a.pad_exprs[i][k].empty();
                    if (expr) pair.push_back(a.pad_exprs[i][k]);
                    else pair.push_back(a.pads[i][k]);
                }
                pads.push_back(pair);
            }
            j["pads"] = pads;
            if (a.scalar != 0) j["value"] = a.scalar;
            break;
        }
        default: break;
    }
    if (!a.out_names.empty()) j["out_names"] = a.out_names;
}

}  // namespace kforge::spec

namespace kforge {

bool is_pure_view(const Op& op) { return op.kind == OpKind::kReshape || op.kind == OpKind::kExpand; }

SliceRange slice_range(const OpAttrs& a, int64_t extent) {
    SliceRange r;
    r.start = a.slice_start < 0 ? a.slice_start + extent : a.slice_start;
    int64_t end = a.slice_end ? (*a.slice_end < 0 ? *a.slice_end + extent : *a.slice_end) : extent;
    r.step = a.slice_step;
    r.count = end > r.start ? (end - r.start + r.step - 1) / r.step : 0;
    return r;
}

}  // namespace kforge

namespace kforge {
namespace {

std::vector<std::string> named_dims_of(const Tensor& t) {
    std::vector<std::string> out;
    for (size_t i = 0; i < t.shape.size(); ++i) {
        if (t.shape[i] == 1) continue;
        out.push_back(t.dim_names[i].empty() ? std::to_string(t.shape[i]) : t.dim_names[i]);
    }
    return out;
}

// The one op that reads `name`, where it is read once and is not an output.
const Op* only_reader(const Problem& p, const std::string& name) {
    if (std::find(p.outputs.begin(), p.outputs.end(), name) != p.outputs.end()) return nullptr;
    const Op* found = nullptr;
    for (const Op& op : p.ops) {
        for (const std::string& in : op.inputs) {
            if (in != name) continue;
            if (found) return nullptr;
            found = &op;
        }
    }
    return found;
}

}  // namespace

bool is_rank_view(const Problem& p, const Op& op) {
    if (op.kind != OpKind::kReshape && op.kind != OpKind::kExpand) return false;
    const Tensor* x = p.find_tensor(op.inputs[0]);
    const Tensor* y = p.find_tensor(op.output);
    if (!x || !y) return false;
    if (op.kind == OpKind::kReshape) return named_dims_of(*x) == named_dims_of(*y);
    // expand: every axis of x that is not 1 keeps its size and name
    const size_t lead = y->shape.size() - x->shape.size();
    for (size_t j = 0; j < x->shape.size(); ++j) {
        if (x->shape[j] == 1) continue;
        if (y->shape[lead + j] != x->shape[j] || y->dim_names[lead + j] != x->dim_names[j])
            return false;
    }
    return true;
}

bool is_unit_reduction(const Problem& p, const Op& op) {
    if (op.kind != OpKind::kSum && op.kind != OpKind::kMean && op.kind != OpKind::kMax &&
        op.kind != OpKind::kMin && op.kind != OpKind::kProd)
        return false;
    const Tensor* x = p.find_tensor(op.inputs[0]);
    if (!x || x->shape.empty()) return false;
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    const int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis;
    if (axis < 0 || axis >= rank) return false;
    const size_t a = static_cast<size_t>(axis);
    return x->shape[a] == 1 && (a >= x->dim_names.size() || x->dim_names[a].empty());
}

std::optional<Op> exclusive_scan_of(const Problem& p, const Op& pad) {
    if (pad.kind != OpKind::kPad) return std::nullopt;
    const Op* scan = p.producer(pad.inputs[0]);
    if (!scan || (scan->kind != OpKind::kCumsum && scan->kind != OpKind::kCumprod) ||
        scan->attrs.exclusive || only_reader(p, scan->output) != &pad)
        return std::nullopt;
    const Op* slice = p.producer(scan->inputs[0]);
    if (!slice || slice->kind != OpKind::kSlice || only_reader(p, slice->output) != scan)
        return std::nullopt;
    const Tensor* x = p.find_tensor(slice->inputs[0]);
    if (!x) return std::nullopt;
    const int64_t axis = slice->attrs.axis;
    if (scan->attrs.axis != axis) return std::nullopt;
    const bool reverse = scan->attrs.reverse;
    const int64_t n = x->shape[static_cast<size_t>(axis)];
    const SliceRange r = slice_range(slice->attrs, n);
    if (n < 2 || r.step != 1 || r.count != n - 1 || r.start != (reverse ? 1 : 0))
        return std::nullopt;
    const double fill = scan->kind == OpKind::kCumsum ? 0.0 : 1.0;
    if (pad.attrs.scalar != fill || pad.attrs.pads.size() != x->shape.size()) return std::nullopt;
    for (size_t i = 0; i < pad.attrs.pads.size(); ++i) {
        const std::array<int64_t, 2> want =
            static_cast<int64_t>(i) != axis ? std::array<int64_t, 2>{0, 0}
            : reverse                       ? std::array<int64_t, 2>{0, 1}
                                            : std::array<int64_t, 2>{1, 0};
        if (pad.attrs.pads[i] != want) return std::nullopt;
    }
    Op out = *scan;
    out.inputs = {x->name};
    out.output = pad.output;
    out.attrs.exclusive = true;
    out.json_path = pad.json_path;
    return out;
}

}  // namespace kforge
