// The shape ops in the fusion planner (planner/partition.h). A view that only adds or drops axes
// of size 1, or broadcasts them (reshape, expand: problem/shape_ops.h is_rank_view), costs
// nothing: its readers read its input under the input's own dims, and the kernels' indexing
// broadcasts it by dim names (`v.unsqueeze(1) * B` is one map kernel reading v[N]). A reshape
// that only renames axes (c[..., None, :] of c[.., Z] as [.., 1, Z_1]: fold_rename) costs
// nothing either where only element-wise ops read it: they read c[.., Z_1]. An exclusive
// scan written as slice, scan and pad (exclusive_scan_of) is one scan kernel over the slice's
// input. A view that is a problem output, or that a reader with an axis or a layout reads (a
// norm, a reduction, a GEMM, a pool), is written by a copy map kernel. Other data movement
// (permute, cat, a slice or pad elsewhere, an expand of a non-1 axis, a reshape that merges or
// splits dims) is one copy kernel (`copy cat(A[..], B[..])`: problem/copy_op.h's gather, the
// element-wise consumers absorbed into its chain as a map's are).
#include "planner/knobs.h"
#include "planner/partition.h"
#include "problem/copy_op.h"
#include "problem/shape_ops.h"

namespace kforge::planner::detail {
namespace {

std::string join_dims(const std::vector<std::string>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i];
    return s + "]";
}

// Rules: 256 threads, vectors of 4 outputs (the lowering narrows the vector to what divides the
// last extent); the safe candidate: 128 threads, scalar.
std::vector<dsl::CopyConfig> copy_candidates() {
    dsl::CopyConfig c;
    dsl::CopyConfig safe;
    safe.threads = 128;
    safe.vec = 1;
    return {c, safe};
}

// One copy kernel computing shape op `op` from its stored inputs; its chain absorbs the
// element-wise consumers and stores what the rest of the program reads.
Status add_copy_kernel(Planner& pl, const Op& op) {
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kCopy;
    kn.copy_op = op.kind;
    for (const std::string& in : op.inputs) {
        const dsl::TensorRef r = pl.ref(in);
        if (r.name != in && !is_view_of(pl.p, in, r.name))
            return not_expressible(op, "its input " + in + " is a folded view of " + r.name +
                                           " that is not a reshape or slice; a copy kernel reads "
                                           "stored tensors through reshapes and slices");
        if (!is_float_storage(pl.dtype_of(in)))
            return not_expressible(op, "copy input " + in + " is " +
                                           std::string(to_string(pl.dtype_of(in))) +
                                           "; a copy kernel moves f32, f16 or bf16");
        dsl::TensorRef arg = r;
        if (arg.name != in && pl.p.find_tensor(arg.name) != nullptr)
            arg.dims = dims_of(pl.tensor(arg.name));  // a renamed view's root as stored: the
                                                      // copy indexes it through the view
        kn.args.push_back(arg);
    }
    DType value = DType::kF32;
    if (auto st = pl.absorb(kn, op.output, value, op); !st) return st;
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind)) + " (copy kernel)"};
    for (const auto& c : copy_candidates()) {
        kn.copy = c;
        pk.candidates.push_back(kn);
    }
    pl.kernels.push_back(std::move(pk));
    return Ok{};
}

// Whether `op` is the slice of an exclusive scan written as slice, scan, pad (one scan kernel
// reads the slice's input under its own dims: no view may stand between).
bool heads_a_scan(const Problem& p, const Op& op) {
    if (op.kind != OpKind::kSlice) return false;
    for (const Op& s : p.ops)
        if (!s.inputs.empty() && s.inputs[0] == op.output &&
            (s.kind == OpKind::kCumsum || s.kind == OpKind::kCumprod))
            return true;
    return false;
}

// Whether every reader of `t` is a shape op that a copy kernel computes (not a view of its own,
// not the slice of an exclusive scan), or a reshape, no problem output, whose own readers are
// such copies: they can read `t` through its view (problem/copy_op.h view_layout: reshapes,
// slices), so `t` needs no kernel. (A split of a fused projection - q, k, v sliced out of one
// GEMM's output, each reshaped to heads and permuted - is then one permute each.)
bool copies_read_all(const Planner& pl, const std::string& t, const std::string& root,
                     size_t depth = 0) {
    if (pl.readers.at(t).empty() || depth > pl.p.ops.size()) return false;
    for (size_t r : pl.readers.at(t)) {
        const Op& o = pl.p.ops[r];
        if (o.kind == OpKind::kReshape && !is_rank_view(pl.p, o) && !pl.is_output(o.output) &&
            copies_read_all(pl, o.output, root, depth + 1))
            continue;
        if (!is_copy_op(o.kind) || is_rank_view(pl.p, o) || o.kind == OpKind::kReshape ||
            heads_a_scan(pl.p, o))
            return false;
    }
    return view_layout(pl.p, root, t).has_value();
}

// A merging or splitting reshape of x folded into the kernel that stores x, where that kernel
// stores at the value's row-major index (rowwise, pool, copy: dsl/check_sem_kernel.cpp reads a
// store under other dims of as many elements as the value reshaped): it stores the reshape's
// output instead. Only where the reshape is x's one reader, x is no problem output, and both
// are stored in one dtype.
bool store_reshaped(Planner& pl, const Op& op) {
    const std::string& x = op.inputs[0];
    if (pl.is_output(x) || pl.readers.at(x).size() != 1 || pl.views.count(x)) return false;
    if (pl.store_dtype(x) != pl.store_dtype(op.output)) return false;
    for (PlannedKernel& pk : pl.kernels) {
        if (pk.candidates.empty()) continue;
        const dsl::KernelKind kind = pk.candidates.front().kind;
        bool stores_x = false;
        for (const dsl::ChainOp& c : pk.candidates.front().chain)
            stores_x = stores_x || (c.kind == dsl::ChainOpKind::kStore && c.tensor && c.tensor->name == x);
        if (!stores_x) continue;
        if (kind != dsl::KernelKind::kRowwise && kind != dsl::KernelKind::kPool &&
            kind != dsl::KernelKind::kCopy)
            return false;
        const dsl::Kernel& first = pk.candidates.front();
        if (kind == dsl::KernelKind::kCopy &&
            (first.copy_op == OpKind::kPermute || first.copy_op == OpKind::kExpand) &&
            first.args.size() == 1 && pl.p.find_tensor(first.args[0].name) == nullptr)
            return false;  // a permute of the program's own (a row op's transpose back) stores
                           // a reordering of its input's dims (dsl/check_copy.cpp)
        for (dsl::Kernel& kn : pk.candidates)
            for (dsl::ChainOp& c : kn.chain)
                if (c.kind == dsl::ChainOpKind::kStore && c.tensor && c.tensor->name == x)
                    c.tensor = pl.ref(op.output);
        pk.origin += ", " + op.json_path + " reshape (its store)";
        pl.available.insert(op.output);
        pl.stored_dtype[op.output] = pl.dtype_of(x);
        return true;
    }
    return false;
}

// Whether every use of `t` reads it element by element (an element-wise op, or a rank view or
// reshape, no problem output, whose own uses do): such readers index an operand by its dim
// names, so they can read a renamed view's root under the view's names.
bool read_elementwise(const Planner& pl, const std::string& t, size_t depth = 0) {
    if (pl.readers.at(t).empty() || depth > pl.p.ops.size()) return false;
    for (size_t r : pl.readers.at(t)) {
        const Op& o = pl.p.ops[r];
        if (op_class(o.kind) == OpClass::kElementwise) continue;
        if ((o.kind == OpKind::kReshape || is_rank_view(pl.p, o)) && !pl.is_output(o.output) &&
            read_elementwise(pl, o.output, depth + 1))
            continue;
        return false;
    }
    return true;
}

// A reshape that only renames axes of its input (problem/copy_op.h rename_dims: the same extents
// in the same order, axes of extent 1 added or dropped, an axis given another dim name as the
// importer does for the second of two axes of one extent) read only element by element: no
// kernel, its readers read the stored root under the view's names (the lowerings index an
// operand position by position, its names matched to the kernel's index space).
bool fold_rename(Planner& pl, const Op& op) {
    if (op.kind != OpKind::kReshape || pl.is_output(op.output)) return false;
    const dsl::TensorRef src = pl.ref(op.inputs[0]);
    if (pl.p.find_tensor(src.name) == nullptr || !read_elementwise(pl, op.output)) return false;
    const auto dims = rename_dims(pl.p, src.name, op.output);
    if (!dims) return false;
    pl.views[op.output] = dsl::TensorRef{src.name, *dims, {}};
    pl.available.insert(op.output);
    pl.stored_dtype[op.output] = pl.dtype_of(src.name);
    return true;
}

}  // namespace

// Binary element-wise `op` whose output spans dims that neither input has (a [B,1,K] times a
// [1,F,K]): one copy kernel expands input `pos` to the output's dims (an expand of the
// program's own, by dim names) and its chain applies the op with the other input broadcast,
// then absorbs what follows.
Status add_broadcast_copy(Planner& pl, const Op& op, size_t pos, std::vector<dsl::ChainOp> stmts) {
    const dsl::TensorRef x = pl.ref(op.inputs[pos]);
    if (!is_float_storage(pl.dtype_of(op.inputs[pos])))
        return not_expressible(op, "an operand to broadcast that is not f32, f16 or bf16");
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kCopy;
    kn.copy_op = OpKind::kExpand;
    kn.args = {x};
    kn.chain = std::move(stmts);
    DType value = DType::kF32;
    if (auto st = pl.absorb(kn, op.output, value, op); !st) return st;
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind)) +
                             " (a copy broadcasting " + op.inputs[pos] + ")"};
    for (const auto& c : copy_candidates()) {
        kn.copy = c;
        pk.candidates.push_back(kn);
    }
    pl.kernels.push_back(std::move(pk));
    return Ok{};
}

// softmax / log_softmax / logsumexp, l1 / l2_normalize and cumsum / cumprod over `axis` of x
// that is not the last: x transposed (a copy permute by dim names) so that the axis is last,
// the row op over it, and but for logsumexp the result transposed back, its chain absorbing the
// element-wise consumers (logsumexp drops the axis: its rows come out in x's order). The
// transposes are intermediates of the program (`<x>_t<k>`, f32) that compute no problem op.
Status add_rowwise_transposed(Planner& pl, const Op& op, size_t axis) {
    const Tensor& x = pl.tensor(op.inputs[0]);
    const std::vector<std::string> dx = dims_of(x);
    for (size_t i = 0; i < dx.size(); ++i)
        for (size_t j = i + 1; j < dx.size(); ++j)
            if (dx[i] == dx[j] && dx[i] != "1")  // extent-1 axes move by position
                return not_expressible(op, "over " + dx[axis] + ", not the last dim, of " + x.name +
                                               " whose dims repeat a name: the transpose to "
                                               "the last dim goes by distinct dim names");
    if (pl.ref(x.name).name != x.name || !is_float_storage(pl.dtype_of(x.name)))
        return not_expressible(op, "over " + dx[axis] + ", not the last dim, of a view or a "
                                   "non-float tensor");
    std::vector<std::string> moved;
    std::vector<int64_t> moved_shape;
    for (size_t i = 0; i < dx.size(); ++i)
        if (i != axis) moved.push_back(dx[i]), moved_shape.push_back(x.shape[i]);
    moved.push_back(dx[axis]);
    moved_shape.push_back(x.shape[axis]);
    const std::string tag = "_t" + std::to_string(pl.kernels.size());
    const dsl::TensorRef xt{x.name + tag, moved, {}};
    const dsl::TensorRef yt{op.output + tag, moved, {}};
    const auto permute = [&](const dsl::TensorRef& from) {
        dsl::Kernel kn;
        kn.kind = dsl::KernelKind::kCopy;
        kn.copy_op = OpKind::kPermute;
        kn.args = {from};
        return kn;
    };
    const auto store = [](dsl::Kernel& kn, const dsl::TensorRef& t) {
        dsl::ChainOp c = stmt(dsl::ChainOpKind::kStore);
        c.tensor = t;
        kn.chain.push_back(c);
    };
    const auto push = [&](dsl::Kernel kn, const std::string& origin) {
        PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind)) + " " + origin};
        for (const auto& c : copy_candidates()) {
            kn.copy = c;
            pk.candidates.push_back(kn);
        }
        pl.kernels.push_back(std::move(pk));
    };
    dsl::Kernel in = permute(pl.ref(x.name));
    store(in, xt);
    push(in, "(transpose to the last dim)");

    const bool scan = op.kind == OpKind::kCumsum || op.kind == OpKind::kCumprod;
    dsl::Kernel row;
    row.kind = dsl::KernelKind::kRowwise;
    switch (op.kind) {
        case OpKind::kSoftmax: row.row_op = dsl::RowOp::kSoftmax; break;
        case OpKind::kLogSoftmax: row.row_op = dsl::RowOp::kLogSoftmax; break;
        case OpKind::kL1Normalize: row.row_op = dsl::RowOp::kL1Normalize; break;
        case OpKind::kL2Normalize: row.row_op = dsl::RowOp::kL2Normalize; break;
        case OpKind::kCumsum: row.row_op = dsl::RowOp::kCumsum; break;
        case OpKind::kCumprod: row.row_op = dsl::RowOp::kCumprod; break;
        default: row.row_op = dsl::RowOp::kLogsumexp; break;
    }
    if ((op.kind == OpKind::kL1Normalize || op.kind == OpKind::kL2Normalize) && op.attrs.eps != 0)
        row.eps = op.attrs.eps;  // 0: the knob's default (as over the last dim)
    row.args = {xt};
    RowShape s;
    s.elem_bytes = 4;
    s.softmax_family = row.row_op == dsl::RowOp::kSoftmax ||
                       row.row_op == dsl::RowOp::kLogSoftmax ||
                       row.row_op == dsl::RowOp::kLogsumexp;
    s.len = x.shape[axis];
    s.rows = std::max<int64_t>(1, x.numel() / std::max<int64_t>(1, s.len));
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind)) + " (over the transpose)"};
    const bool keeps_axis = op.kind != OpKind::kLogsumexp;
    if (keeps_axis) {
        store(row, yt);
    } else {
        DType value = DType::kF32;
        if (auto st = pl.absorb(row, op.output, value, op); !st) return st;
    }
    if (scan) {
        for (dsl::RowwiseConfig c : scan_candidates(s.rows, s.len, s.elem_bytes,
                                                    pl.limits.sm_count)) {
            c.reverse = op.attrs.reverse;
            c.exclusive = op.attrs.exclusive;
            row.rowwise = c;
            pk.candidates.push_back(row);
        }
    } else {
        for (const auto& c : rowwise_candidates(s, pl.limits, pl.opt)) {
            row.rowwise = c;
            pk.candidates.push_back(row);
        }
    }
    pl.kernels.push_back(std::move(pk));
    if (!keeps_axis) return Ok{};

    dsl::Kernel out = permute(yt);
    DType value = DType::kF32;
    if (auto st = pl.absorb(out, op.output, value, op); !st) return st;
    push(out, "(transpose back)");
    return Ok{};
}

// A view of its input (a rank view: problem/shape_ops.h is_rank_view, or a reduction over an
// axis of extent 1): element-wise readers read the input under its own dims; a problem output,
// or a view that a reader with an axis or a layout reads, is written by a copy (map) kernel.
Status Planner::add_rank_view(const Op& op) {
    const dsl::TensorRef src = ref(op.inputs[0]);  // itself folded where it is a view
    // element-wise readers broadcast by dim names; a reader with an axis, a layout or a
    // window (a norm, a reduction, a GEMM, a pool) counts the view's own axes: it reads a copy
    bool elementwise_readers = true;
    for (size_t r : readers.at(op.output)) {
        const Op& reader = p.ops[r];
        elementwise_readers = elementwise_readers &&
                              (op_class(reader.kind) == OpClass::kElementwise ||
                               is_rank_view(p, reader));  // a view of a view folds too
    }
    // under the output's own dims (a reduction over an axis of extent 1 keeping it) any reader
    // reads the input in its place
    const bool same_dims = src.dims == dims_of(tensor(op.output));
    if (is_output(op.output) || !(elementwise_readers || same_dims)) {  // a copy kernel writes it
        if (!is_output(op.output) && copies_read_all(*this, op.output, src.name)) {
            views[op.output] = src;  // the copies that read it index through the view
            available.insert(op.output);
            stored_dtype[op.output] = dtype_of(src.name);
            return Ok{};
        }
        if (op.kind == OpKind::kReshape && store_reshaped(*this, op)) return Ok{};
        if (op.kind == OpKind::kReshape && named(src.dims) != named(dims_of(tensor(op.output))))
            return add_copy_kernel(*this, op);  // dims of extent 1 by name: a copy kernel
        // a broadcast that is a problem output or read by other than an element-wise op (a
        // reshape merging the new axis: x.repeat, a nearest upsampling): a copy kernel writes it
        if (op.kind == OpKind::kExpand && named(src.dims) != named(dims_of(tensor(op.output))))
            return add_copy_kernel(*this, op);
        dsl::Kernel kn;
        kn.kind = dsl::KernelKind::kMap;
        kn.args = {src};
        DType value = DType::kF32;
        if (auto st = emit_store(kn, value, op.output, op); !st) return st;
        const Tensor& y = tensor(op.output);
        PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind)) + " (copy)"};
        for (const auto& c : map_candidates(y.numel(), y.shape.empty() ? 1 : y.shape.back(),
                                            max_bytes(kn), limits)) {
            kn.map = c;
            pk.candidates.push_back(kn);
        }
        kernels.push_back(std::move(pk));
        return Ok{};
    }
    views[op.output] = src;
    available.insert(op.output);
    stored_dtype[op.output] = dtype_of(src.name);
    return Ok{};
}

Status Planner::add_shape(const Op& op) {
    if (op.kind == OpKind::kSlice) {  // the head of an exclusive scan: slice -> scan -> pad
        for (size_t s : readers.at(op.output)) {
            for (size_t r : readers.at(p.ops[s].output)) {
                if (auto scan = exclusive_scan_of(p, p.ops[r])) {
                    done[s] = done[r] = true;
                    return add_rowwise(*scan);
                }
            }
        }
    }
    if (is_rank_view(p, op)) return add_rank_view(op);
    if (op.kind == OpKind::kReshape && store_reshaped(*this, op)) return Ok{};
    if ((op.kind == OpKind::kReshape || op.kind == OpKind::kSlice) && !is_output(op.output)) {
        // read through by the copy kernels of its readers (each indexes the buffer by the
        // reshape's shape, a slice's at its offset and step): no kernel of its own
        if (copies_read_all(*this, op.output, ref(op.inputs[0]).name) &&
            is_float_storage(dtype_of(ref(op.inputs[0]).name))) {
            views[op.output] = ref(op.inputs[0]);
            available.insert(op.output);
            stored_dtype[op.output] = dtype_of(views[op.output].name);
            return Ok{};
        }
    }
    if (fold_rename(*this, op)) return Ok{};
    if (is_copy_op(op.kind)) return add_copy_kernel(*this, op);
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.output);
    std::string why;
    switch (op.kind) {
        case OpKind::kReshape:
            why = "a reshape that merges or splits dims (" + join_dims(dims_of(x)) + " -> " +
                  join_dims(dims_of(y)) + ") reads the buffer under other dims, which no kernel "
                  "reads yet";
            break;
        case OpKind::kExpand:
            why = "an expand of an axis that is not 1";
            break;
        case OpKind::kSlice:
            why = "a slice that no scan absorbs (as an exclusive scan) needs a copy kernel with "
                  "strided indexing, which the kernel language has not yet";
            break;
        default:
            why = std::string(to_string(op.kind)) + " moves data; no kernel absorbs it and the "
                  "kernel language has no copy with its indexing yet";
            break;
    }
    return not_expressible(op, why);
}

}  // namespace kforge::planner::detail
