// The shape ops of the spec (OpClass::kShape: reshape, expand, permute, slice, cat, pad): their
// attributes, shape inference, spec writing and fp64 evaluation, in one place
// (problem/shape_ops.cpp, problem/interpret_shape.cpp). The parser, shape inference, the spec
// writer and the interpreter call these for every op of the class.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/expected.h"
#include "problem/problem.h"
#include "problem/spec_internal.h"

namespace kforge::spec {

// The operand list and attribute names of shape op `k` (for op_parse's signature table).
struct ShapeSignature {
    size_t min_inputs, max_inputs;
    const char* operands;
    std::vector<std::string> attributes;
};
ShapeSignature shape_signature(OpKind k);

// Reads one attribute of a shape op into op.attrs (`path` names it for errors).
Status read_shape_attr(const Json& v, const std::string& key, const std::string& path, Op& op);

// The attributes a shape op requires (reshape/expand: shape; permute: dims; slice, cat: axis;
// pad: pads), checked after every attribute was read.
Status check_shape_required(const Json& v, const Op& op);

// The output of shape op `op` (dims it derives, a reshape's products, go into `dims` and
// `derived`); op.attrs are normalized (axis >= 0, slice bounds resolved).
Expected<Tensor> infer_shape_op(Op& op, const std::vector<const Tensor*>& in,
                                std::map<std::string, int64_t>& dims,
                                std::set<std::string>& derived);

// A shape op's attributes for problem_to_json (as the spec writes them).
void write_shape_attrs(const Op& op, Json& j);

}  // namespace kforge::spec

namespace kforge {

// Whether `op`'s output aliases its input's memory as it is (a reshape, or an expand that
// only broadcasts): it moves no bytes.
bool is_pure_view(const Op& op);

// For slice: the element range it keeps on attrs.axis, normalized (start >= 0, step >= 1, count
// elements), given the input's extent on that axis.
struct SliceRange {
    int64_t start = 0, step = 1, count = 0;
};
SliceRange slice_range(const OpAttrs& a, int64_t extent);

// Whether reshape / expand `op` only adds or drops axes of size 1 (and, for expand, broadcasts
// axes of size 1): the value is the input's, read through broadcasting by dim names.
bool is_rank_view(const Problem& p, const Op& op);

// Whether `op` is a sum / mean / max / min / prod over an axis of extent 1 that no dim name
// re-binds: the value is its input's, one element per row (a view, as a rank view is).
bool is_unit_reduction(const Problem& p, const Op& op);

// An exclusive scan written with shape ops, as KernelBench writes it: pad(cumsum(slice(x, a, 0,
// -1), a), one 0 before on a) (cumprod: a 1; reverse: the slice from 1, a reverse scan, the pad
// after). Returns that scan of x with `exclusive` set (inputs {x}, output the pad's, the pad's
// json_path), or nullopt where `pad` is not such a pad, or the slice or scan has another reader
// or is an output. The planner plans it as one scan kernel; the checker reads it as that scan.
std::optional<Op> exclusive_scan_of(const Problem& p, const Op& pad);

}  // namespace kforge
