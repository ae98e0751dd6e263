// The gather of a shape op (problem/copy_op.h).
#include "problem/copy_op.h"

#include <algorithm>
#include <limits>

#include "problem/shape_ops.h"

namespace kforge {
namespace {

std::vector<int64_t> row_major(const std::vector<int64_t>& shape) {
    std::vector<int64_t> s(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
    return s;
}

// A source valid everywhere on `rank` output axes of `out`.
CopySource whole(const std::string& name, const std::vector<int64_t>& out) {
    CopySource s;
    s.tensor = name;
    s.stride.assign(out.size(), 0);
    s.lo.assign(out.size(), 0);
    s.hi = out;
    return s;
}

}  // namespace

bool CopyGeometry::unbounded() const {
    for (const CopySource& s : sources)
        for (size_t a = 0; a < out_shape.size(); ++a)
            if (s.lo[a] != 0 || s.hi[a] != out_shape[a]) return false;
    return true;
}

bool is_copy_op(OpKind k) {
    return k == OpKind::kReshape || k == OpKind::kExpand || k == OpKind::kPermute ||
           k == OpKind::kSlice || k == OpKind::kCat || k == OpKind::kPad;
}

CopyGeometry copy_geometry(const Problem& problem, const Op& op,
                           const std::vector<std::optional<ViewLayout>>& in_views) {
    CopyGeometry g;
    const Tensor& y = *problem.find_tensor(op.output);
    const Tensor& x = *problem.find_tensor(op.inputs.at(0));
    g.out_shape = y.shape;
    const size_t r = y.shape.size();
    const auto view_of = [&](size_t k, const Tensor& t) {
        return k < in_views.size() && in_views[k] ? *in_views[k] : ViewLayout{0, row_major(t.shape)};
    };
    const ViewLayout xv = view_of(0, x);
    const std::vector<int64_t>& xs = xv.stride;
    CopySource s = whole(x.name, y.shape);
    s.base = xv.base;
    switch (op.kind) {
        case OpKind::kReshape:  // of a stored buffer, or of a view that strides express
            s.stride = reshape_strides(x.shape, xs, y.shape).value_or(row_major(y.shape));
            break;
        case OpKind::kExpand: {  // X's axes align with the trailing output axes
            const size_t lead = r - x.shape.size();
            for (size_t a = lead; a < r; ++a)
                s.stride[a] = x.shape[a - lead] == 1 && y.shape[a] != 1 ? 0 : xs[a - lead];
            break;
        }
        case OpKind::kPermute:
            for (size_t a = 0; a < r; ++a) s.stride[a] = xs[static_cast<size_t>(op.attrs.perm[a])];
            break;
        case OpKind::kSlice: {
            const size_t ax = static_cast<size_t>(op.attrs.axis);
            const SliceRange sr = slice_range(op.attrs, x.shape[ax]);
            s.stride = xs;
            s.stride[ax] = xs[ax] * sr.step;
            s.base += sr.start * xs[ax];
            break;
        }
        case OpKind::kPad:
            s.stride = xs;
            for (size_t a = 0; a < r; ++a) {
                s.lo[a] = op.attrs.pads[a][0];
                s.hi[a] = op.attrs.pads[a][0] + x.shape[a];
                s.base -= op.attrs.pads[a][0] * xs[a];
            }
            g.pad_value = op.attrs.scalar;
            break;
        case OpKind::kCat: {
            const size_t ax = static_cast<size_t>(op.attrs.axis);
            int64_t at = 0;
            for (size_t k = 0; k < op.inputs.size(); ++k) {
                const std::string& in = op.inputs[k];
                const Tensor& t = *problem.find_tensor(in);
                CopySource c = whole(in, y.shape);
                const ViewLayout v = view_of(k, t);
                c.stride = v.stride;
                c.lo[ax] = at;
                c.hi[ax] = at + t.shape[ax];
                c.base = v.base - at * c.stride[ax];
                at += t.shape[ax];
                g.sources.push_back(std::move(c));
            }
            return g;
        }
        default: break;
    }
    g.sources.push_back(std::move(s));
    return g;
}

std::vector<const Op*> views_between(const Problem& problem, const std::string& root,
                                     const std::string& name) {
    std::vector<const Op*> path;
    std::string at = name;
    while (at != root) {
        const Op* by = nullptr;
        for (const Op& op : problem.ops)
            if (op.output == at) by = &op;
        const bool view = by != nullptr && (by->kind == OpKind::kReshape || by->kind == OpKind::kSlice ||
                                             (by->kind == OpKind::kExpand && is_rank_view(problem, *by)));
        if (!view || path.size() > problem.ops.size()) return {};
        path.insert(path.begin(), by);
        at = by->inputs.at(0);
    }
    return path;
}

bool is_view_of(const Problem& problem, const std::string& name, const std::string& root) {
    return name == root || view_layout(problem, root, name).has_value();
}

std::optional<std::vector<int64_t>> reshape_strides(const std::vector<int64_t>& shape,
                                                    const std::vector<int64_t>& stride,
                                                    const std::vector<int64_t>& to) {
    int64_t n = 1, m = 1;
    for (int64_t e : shape) n *= e;
    for (int64_t e : to) m *= e;
    if (n != m || stride.size() != shape.size()) return std::nullopt;
    std::vector<int64_t> out(to.size(), 1);
    if (n == 0) return row_major(to);
    // Walk the input's axes from the last in runs that are one stretch of memory (each axis's
    // stride is the next one's times its extent; axes of extent 1 join any run); each run must be
    // covered by a run of the new shape's axes of the same element count, strided from its base.
    auto t = static_cast<ptrdiff_t>(to.size()) - 1;
    int64_t base = shape.empty() ? 1 : stride.back();
    int64_t run = 1, covered = 1;
    for (auto a = static_cast<ptrdiff_t>(shape.size()) - 1; a >= 0; --a) {
        run *= shape[static_cast<size_t>(a)];
        const bool ends = a == 0 || (shape[static_cast<size_t>(a - 1)] != 1 &&
                                     stride[static_cast<size_t>(a - 1)] != run * base);
        if (!ends) continue;
        while (t >= 0 && (covered < run || to[static_cast<size_t>(t)] == 1)) {
            out[static_cast<size_t>(t)] = covered * base;
            covered *= to[static_cast<size_t>(t)];
            --t;
        }
        if (covered != run) return std::nullopt;
        if (a > 0) {
            base = stride[static_cast<size_t>(a - 1)];
            run = covered = 1;
        }
    }
    return out;  // leading axes of extent 1 left over keep stride 1
}

std::optional<ViewLayout> view_layout(const Problem& problem, const std::string& root,
                                      const std::string& name) {
    const Tensor* t = problem.find_tensor(root);
    if (t == nullptr) return std::nullopt;
    ViewLayout v{0, row_major(t->shape)};
    if (name == root) return v;
    const std::vector<const Op*> path = views_between(problem, root, name);
    if (path.empty()) return std::nullopt;
    bool broadcast = false;  // a reshape after a broadcast: no strides express it
    for (const Op* op : path) {
        const Tensor& in = *problem.find_tensor(op->inputs[0]);
        const Tensor& out = *problem.find_tensor(op->output);
        if (op->kind == OpKind::kReshape) {
            if (broadcast) return std::nullopt;
            auto st = reshape_strides(in.shape, v.stride, out.shape);
            if (!st) return std::nullopt;
            v.stride = std::move(*st);
            continue;
        }
        if (op->kind == OpKind::kSlice) {
            const auto ax = static_cast<size_t>(op->attrs.axis);
            if (ax >= v.stride.size()) return std::nullopt;
            const SliceRange sr = slice_range(op->attrs, in.shape[ax]);
            v.base += sr.start * v.stride[ax];
            v.stride[ax] *= sr.step;
            continue;
        }
        std::vector<int64_t> next(out.shape.size(), 0);  // expand: broadcast axes read stride 0
        const size_t lead = out.shape.size() - in.shape.size();
        for (size_t a = lead; a < out.shape.size(); ++a) {
            const bool b = in.shape[a - lead] == 1 && out.shape[a] != 1;
            next[a] = b ? 0 : v.stride[a - lead];
            broadcast = broadcast || b;
        }
        v.stride = std::move(next);
    }
    return v;
}

std::optional<std::vector<std::string>> rename_dims(const Problem& problem, const std::string& root,
                                                    const std::string& view) {
    const Tensor* r = problem.find_tensor(root);
    const Tensor* v = problem.find_tensor(view);
    if (r == nullptr || v == nullptr || root == view) return std::nullopt;
    const std::vector<const Op*> path = views_between(problem, root, view);
    if (path.empty()) return std::nullopt;
    for (const Op* op : path)
        if (op->kind != OpKind::kReshape) return std::nullopt;
    std::vector<size_t> kept;  // the view's axes of extent > 1
    for (size_t i = 0; i < v->shape.size(); ++i)
        if (v->shape[i] != 1) kept.push_back(i);
    std::vector<std::string> dims;
    size_t k = 0;
    for (size_t i = 0; i < r->shape.size(); ++i) {
        if (r->shape[i] == 1) {
            dims.push_back("1");
            continue;
        }
        if (k >= kept.size() || v->shape[kept[k]] != r->shape[i]) return std::nullopt;
        const size_t a = kept[k++];
        dims.push_back(a < v->dim_names.size() && !v->dim_names[a].empty()
                           ? v->dim_names[a]
                           : std::to_string(v->shape[a]));
    }
    if (k != kept.size()) return std::nullopt;
    return dims;
}

const Tensor* renamed_view(const Problem& problem, const std::string& root,
                           const std::vector<std::string>& dims) {
    for (const Op& op : problem.ops) {
        if (op.kind != OpKind::kReshape) continue;
        const auto d = rename_dims(problem, root, op.output);
        if (d && *d == dims) return problem.find_tensor(op.output);
    }
    return nullptr;
}

const Op* find_copy_op(const Problem& problem, OpKind kind, const std::vector<std::string>& inputs,
                       const std::string& stored, const std::vector<std::string>& chain_reads) {
    std::vector<const Op*> cands;
    for (const Op& op : problem.ops)
        if (op.kind == kind && op.inputs.size() == inputs.size()) {
            bool reads = true;
            for (size_t i = 0; i < inputs.size() && reads; ++i)
                reads = is_view_of(problem, op.inputs[i], inputs[i]);
            if (reads) cands.push_back(&op);
        }
    if (cands.empty()) return nullptr;
    for (const Op* op : cands)
        if (op->output == stored) return op;
    // a value the chain reads as an operand is another kernel's: no path of this kernel's own
    // value goes through it (sigmoid(a) + tanh(b) of two slices: the kernel of b reads a's)
    const auto read = [&](const std::string& t) {
        return std::find(chain_reads.begin(), chain_reads.end(), t) != chain_reads.end();
    };
    // the stored tensor reached from a candidate's output through element-wise ops and
    // reshapes (the planner folds a reshape into the store of the kernel that makes its input)
    for (const Op* c : cands) {
        if (read(c->output)) continue;
        std::vector<std::string> frontier{c->output};
        for (size_t steps = 0; !frontier.empty() && steps < problem.ops.size(); ++steps) {
            std::vector<std::string> next;
            for (const Op& op : problem.ops) {
                if (op_class(op.kind) != OpClass::kElementwise && op.kind != OpKind::kReshape) continue;
                for (const std::string& f : frontier) {
                    bool reads = false;
                    for (const std::string& in : op.inputs) reads = reads || in == f;
                    if (!reads) continue;
                    if (op.output == stored) return c;
                    if (!read(op.output)) next.push_back(op.output);
                }
            }
            frontier = std::move(next);
        }
    }
    return cands.front();
}

std::vector<double> run_copy(const CopyGeometry& g,
                             const std::vector<const std::vector<double>*>& sources) {
    int64_t n = 1;
    for (int64_t e : g.out_shape) n *= e;
    std::vector<double> out(static_cast<size_t>(n), g.pad_value);
    std::vector<int64_t> idx(g.out_shape.size(), 0);
    for (int64_t e = 0; e < n; ++e) {
        for (size_t k = 0; k < g.sources.size(); ++k) {
            const CopySource& s = g.sources[k];
            bool valid = true;
            int64_t off = s.base;
            for (size_t a = 0; a < idx.size(); ++a) {
                valid = valid && idx[a] >= s.lo[a] && idx[a] < s.hi[a];
                off += idx[a] * s.stride[a];
            }
            if (!valid) continue;
            out[static_cast<size_t>(e)] = sources.at(k)->at(static_cast<size_t>(off));
            break;
        }
        for (size_t i = idx.size(); i-- > 0;) {
            if (++idx[i] < g.out_shape[i]) break;
            idx[i] = 0;
        }
    }
    return out;
}

}  // namespace kforge
