// A shape op's data movement as one gather (the copy kernel kind: dsl/check_copy.cpp,
// codegen/lower_copy.cpp, kernels/copy.cuh): every output element reads one element of one
// input, or the pad value. Stated once here, so the checker, the lowering, the time model and
// the tests agree on which problem op a copy kernel computes and how it indexes.
//
// For output multi-index o (row-major over the op's output shape), source s is valid where
// lo[a] <= o[a] < hi[a] for every axis a, and then reads element base + sum_a o[a] * stride[a]
// of its tensor (row-major). The first valid source wins; where none is valid the element is
// `pad_value`. permute: strides are the input's, permuted; slice: base start, stride step;
// cat: one source per input, valid on its range of the cat axis; pad: valid inside the input,
// base shifted back by the leading pads; expand: stride 0 on broadcast axes; reshape: the
// row-major strides of the output (the flat index is the input's).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "problem/problem.h"

namespace kforge {

struct CopySource {
    std::string tensor;
    int64_t base = 0;
    std::vector<int64_t> stride;   // per output axis, in elements of `tensor`
    std::vector<int64_t> lo, hi;   // per output axis: the valid range of the output index
};

struct CopyGeometry {
    std::vector<int64_t> out_shape;
    std::vector<CopySource> sources;
    double pad_value = 0.0;
    // Whether every source is valid on every output element (no bounds to test).
    bool unbounded() const;
};

// Whether `k` is a shape op that a copy kernel computes (reshape, expand, permute, slice, cat,
// pad).
bool is_copy_op(OpKind k);

// A view's layout in its root's buffer: element o (multi-index over the view's shape) is the
// root's row-major element base + sum_a o[a] * stride[a].
struct ViewLayout {
    int64_t base = 0;
    std::vector<int64_t> stride;
};

// The gather of shape op `op` (is_copy_op) of `problem`, at the problem's shapes. `in_views`:
// per input, where it lies in the buffer read (nullopt: row-major, as stored; view_layout for an
// input read through views).
CopyGeometry copy_geometry(const Problem& problem, const Op& op,
                           const std::vector<std::optional<ViewLayout>>& in_views = {});

// Whether `name` is `root` or a view of it through reshapes, slices and broadcasting expands (a
// copy kernel reading `root`'s buffer reads `name` at its view_layout).
bool is_view_of(const Problem& problem, const std::string& name, const std::string& root);
// The view ops (reshape, slice, expand of a rank view) from `root` to `name`, in graph order;
// empty where `name` is no such view of `root` (or is `root`).
std::vector<const Op*> views_between(const Problem& problem, const std::string& root,
                                     const std::string& name);
// Where view `name` of `root` reads in root's row-major buffer (a slice moves the base and
// multiplies its axis's stride by the step; a reshape regroups runs of axes that are one stretch
// of memory); nullopt where `name` is no view of `root` or no strides express it (a reshape that
// merges axes a slice or a broadcast has separated).
std::optional<ViewLayout> view_layout(const Problem& problem, const std::string& root,
                                      const std::string& name);
// The strides of shape `shape` at `stride` read as shape `to` (a reshape without a copy); nullopt
// where the element counts differ or `to` merges axes that are not one stretch of memory.
std::optional<std::vector<int64_t>> reshape_strides(const std::vector<int64_t>& shape,
                                                    const std::vector<int64_t>& stride,
                                                    const std::vector<int64_t>& to);

// A pure rename: `view` is a view of `root` through reshapes only (views_between) whose axes
// of extent > 1 have root's extents in root's order (an unsqueeze, or a reshape that gives an
// axis another dim name: c[..., None, :] of c[.., Z] as [.., 1, Z_1]), so its row-major buffer
// is root's, read position by position under other names. Returns the dims to read root's
// buffer under (root's rank: "1" on root's axes of extent 1, the view's dim names in order on
// the others); nullopt where `view` is no such view of `root` (or is `root`).
std::optional<std::vector<std::string>> rename_dims(const Problem& problem, const std::string& root,
                                                    const std::string& view);
// The first tensor of `problem` (in graph order) that renames `root` (rename_dims) and reads it
// under `dims`; nullptr where none does.
const Tensor* renamed_view(const Problem& problem, const std::string& root,
                           const std::vector<std::string>& dims);

// The op of `problem` of kind `kind` reading `inputs` (in order; an input may be a reshape of
// the tensor named: is_view_of) that a copy kernel
// storing `stored` computes: the one whose output is `stored`, else one whose output reaches
// `stored` through element-wise ops (the kernel's chain absorbed them) and reshapes (folded
// into its store), else the first; null
// where none reads `inputs`. `chain_reads`: the tensors the kernel's chain reads as operands,
// other kernels' values - neither a candidate's output nor a step of its path to `stored` (two
// slices of one tensor where the chain of one reads the other or a value made from it: a GLU's
// a * sigmoid(b), sigmoid(a) + tanh(b)).
const Op* find_copy_op(const Problem& problem, OpKind kind, const std::vector<std::string>& inputs,
                       const std::string& stored,
                       const std::vector<std::string>& chain_reads = {});

// The gather run on fp64 data (tensor name -> row-major values): the copy kernel's meaning, as
// the tests compare it with the interpreter's shape ops.
std::vector<double> run_copy(const CopyGeometry& g,
                             const std::vector<const std::vector<double>*>& sources);

}  // namespace kforge
