// The index row ops in the fusion planner (planner/partition.h): argmax / argmin (over any dim:
// the row form over the last, the column form over a leading one), cross_entropy, and tril /
// triu (after a matmul: the GEMM stores its full output, this kernel masks it) and masked_fill
// with a structured mask (the same kernel, the other triangle kept, the value elsewhere), each one
// rowwise kernel whose chain is the store of its result (an i64 index, or the mean loss); the
// element-wise ops that read it get kernels of their own. Candidates differ in block size.
#include "planner/partition.h"

namespace kforge::planner::detail {

bool is_index_kernel_op(OpKind k) {
    return k == OpKind::kArgmax || k == OpKind::kArgmin || k == OpKind::kCrossEntropy ||
           k == OpKind::kTril || k == OpKind::kTriu;
}

bool is_index_kernel_op(const Op& op) {
    return is_index_kernel_op(op.kind) ||
           (op.kind == OpKind::kMaskedFill && op.attrs.tri_mask != TriMask::kNone);
}

Status add_index_kernel(Planner& pl, const Op& op) {
    const Tensor& x = pl.tensor(op.inputs[0]);
    const auto dx = dims_of(x);
    if (dx.empty()) return not_expressible(op, "a scalar input");
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kRowwise;
    kn.row_op = op.kind == OpKind::kArgmax   ? dsl::RowOp::kArgmax
                : op.kind == OpKind::kArgmin ? dsl::RowOp::kArgmin
                : op.kind == OpKind::kTril   ? dsl::RowOp::kTril
                : op.kind == OpKind::kTriu   ? dsl::RowOp::kTriu
                                             : dsl::RowOp::kCrossEntropy;
    // a masked_fill with a structured mask keeps the other triangle (dsl/tri_mask.h)
    const bool tri_fill = op.kind == OpKind::kMaskedFill;
    if (tri_fill)
        kn.row_op = op.attrs.tri_mask == TriMask::kTriu ? dsl::RowOp::kTril : dsl::RowOp::kTriu;
    const bool triangle = op.kind == OpKind::kTril || op.kind == OpKind::kTriu || tri_fill;
    for (const auto& in : op.inputs) kn.args.push_back(pl.ref(in));
    if (op.kind != OpKind::kCrossEntropy && !triangle) {
        const size_t axis = static_cast<size_t>(op.attrs.axis);
        if (std::count(dx.begin(), dx.end(), dx[axis]) != 1) {
            return not_expressible(op, "the reduced dim " + dx[axis] + " appears more than once in " +
                                           x.name + "; name the dims apart");
        }
        if (axis + 1 != dx.size()) kn.over = dx[axis];
    }
    dsl::ChainOp store = stmt(dsl::ChainOpKind::kStore);
    store.tensor = pl.ref(op.output);
    kn.chain.push_back(store);
    pl.available.insert(op.output);
    pl.stored_dtype[op.output] = pl.tensor(op.output).dtype;
    // the vector width divides the row (cross_entropy: C; argmax: the reduced dim's extent)
    const int64_t len = op.kind == OpKind::kCrossEntropy || triangle
                            ? x.shape.back()
                            : x.shape[static_cast<size_t>(op.attrs.axis)];
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind))};
    for (int threads : {256, 512, 128, 1024}) {
        kn.rowwise = dsl::RowwiseConfig{};
        kn.rowwise.threads = threads;
        kn.rowwise.vec = dsl::widest_vec(4, len);
        pk.candidates.push_back(kn);
    }
    pl.kernels.push_back(std::move(pk));
    return Ok{};
}

}  // namespace kforge::planner::detail
