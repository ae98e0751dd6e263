// The shape ops in the fusion planner (planner/partition.h). A view that only adds or drops axes
// of size 1, or broadcasts them (reshape, expand: problem/shape_ops.h is_rank_view), costs
// nothing: its readers read its input under the input's own dims, and the kernels' indexing
// broadcasts it by dim names (`v.unsqueeze(1) * B` is one map kernel reading v[N]). An exclusive
// scan written as slice, scan and pad (exclusive_scan_of) is one scan kernel over the slice's
// input. A view that is a problem output, or that a reader with an axis or a layout reads (a
// norm, a reduction, a GEMM, a pool), is written by a copy map kernel. Other data movement
// (permute, cat, a slice or pad elsewhere, a reshape that merges or splits dims) has no kernel
// the language can express yet: a not-expressible error naming it.
#include "planner/knobs.h"
#include "planner/partition.h"
#include "problem/shape_ops.h"

namespace kforge::planner::detail {
namespace {

std::string join_dims(const std::vector<std::string>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i];
    return s + "]";
}

}  // namespace

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
    if (is_rank_view(p, op)) {
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
        if (is_output(op.output) || !elementwise_readers) {  // a copy kernel writes it
            if (op.kind == OpKind::kExpand && named(src.dims) != named(dims_of(tensor(op.output)))) {
                return not_expressible(op, "an expand that is a problem output or read by other "
                                           "than an element-wise op (a broadcast copy); only "
                                           "element-wise readers can broadcast it");
            }
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
