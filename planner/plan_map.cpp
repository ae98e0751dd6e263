// Element-wise ops that no kernel absorbed, in the fusion planner (planner/partition.h): a map
// kernel from the op's full-shape operand, whose chain absorbs what follows (plan_chain.cpp), or
// the prologue of the row reduction that alone reads it (plan_rowwise.cpp).
#include <algorithm>

#include "planner/knobs.h"
#include "planner/partition.h"

namespace kforge::planner::detail {

using dsl::ChainOpKind;

int Planner::max_bytes(const dsl::Kernel& kn) const {
    int bytes = 1;
    for (const auto& a : kn.args) bytes = std::max(bytes, dtype_bytes(dtype_of(a.name)));
    DType value = DType::kF32;
    for (const auto& c : kn.chain) {
        if (c.kind == ChainOpKind::kCast) value = c.cast_to;
        if (c.kind == ChainOpKind::kStore) bytes = std::max(bytes, dtype_bytes(value));
        else if (c.tensor) bytes = std::max(bytes, dtype_bytes(dtype_of(c.tensor->name)));
    }
    return bytes;
}

Status Planner::add_map(const Op& op) {
    size_t reduction = 0;
    if (auto pre = fold_into_reduction(op, reduction)) {
        done[reduction] = true;
        return add_rowwise(p.ops[reduction], &*pre);
    }
    const auto out = named(dims_of(tensor(op.output)));
    size_t pos = 0;
    std::optional<dsl::TensorRef> other;
    if (op.inputs.size() > 1) {
        const bool first_full = named(dims_of(tensor(op.inputs[0]))) == out;
        const bool second_full = named(dims_of(tensor(op.inputs[1]))) == out;
        if (!first_full && second_full && translate(op, 1, Operand{ref(op.inputs[0]), ""})) pos = 1;
        other = ref(op.inputs[1 - pos]);
    }
    auto stmts = translate(op, pos, Operand{other, ""});
    if (!stmts) return not_expressible(op, "no chain statement computes it");
    // neither operand spans the output's dims: a copy kernel broadcasts one (plan_view.cpp)
    if (other && named(dims_of(tensor(op.inputs[0]))) != out &&
        named(dims_of(tensor(op.inputs[1]))) != out)
        return add_broadcast_copy(*this, op, pos, std::move(*stmts));
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kMap;
    kn.args = {ref(op.inputs[pos])};
    kn.chain = *stmts;
    DType value = DType::kF32;
    if (auto st = absorb(kn, op.output, value, op, op.inputs[pos]); !st) return st;
    // A map whose one store (its last statement, no cast) only a row reduction over the last
    // dim reads, with the map input's dims: its chain (named values and all: the Huber loss's
    // branches) becomes that reduction's prologue and the value is never written.
    if (opt.fuse && !kn.chain.empty() && kn.chain.back().kind == ChainOpKind::kStore) {
        const std::string s_name = kn.chain.back().tensor->name;
        const auto& rs = readers.at(s_name);
        bool plain = true;
        for (size_t i = 0; i + 1 < kn.chain.size(); ++i)
            plain = plain && kn.chain[i].kind != ChainOpKind::kStore &&
                    kn.chain[i].kind != ChainOpKind::kCast;
        if (plain && !is_output(s_name) && rs.size() == 1 && !done[rs[0]] &&
            dims_of(tensor(s_name)) == kn.args[0].dims) {
            const Op& next = p.ops[rs[0]];
            if (is_row_reduction(next.kind) && reduces_last_dim(next, s_name)) {
                Prologue pre{kn.args[0].name, {kn.chain.begin(), kn.chain.end() - 1}};
                done[rs[0]] = true;
                available.erase(s_name);
                stored_dtype.erase(s_name);
                return add_rowwise(next, &pre);
            }
        }
    }
    const Tensor& y = tensor(op.output);
    int64_t innermost = 1;
    for (size_t i = y.shape.size(); i-- > 0;) {
        if (dims_of(y)[i] != "1") {
            innermost = y.shape[i];
            break;
        }
    }
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind))};
    for (const auto& c : map_candidates(y.numel(), innermost, max_bytes(kn), limits)) {
        kn.map = c;
        pk.candidates.push_back(kn);
    }
    kernels.push_back(std::move(pk));
    return Ok{};
}

}  // namespace kforge::planner::detail
