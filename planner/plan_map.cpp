// Element-wise ops that no kernel absorbed, in the fusion planner (planner/partition.h): a map
// kernel from the op's full-shape operand, whose chain absorbs what follows (plan_chain.cpp), or
// the prologue of the row reduction that alone reads it (plan_rowwise.cpp).
#include <algorithm>

#include "dsl/printer.h"
#include "planner/knobs.h"
#include "planner/partition.h"

namespace kforge::planner::detail {

using dsl::ChainOp;
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
    const auto full = [&](size_t i) { return named(dims_of(tensor(op.inputs[i]))) == out; };
    // where(C, A, B) and a masked_fill whose X is broadcast: a map over an operand that spans
    // the output, the branches read with `load` (dsl/chain_ops.h)
    std::optional<std::vector<ChainOp>> select;
    size_t arg = 0;
    if (op.kind == OpKind::kWhere || (op.kind == OpKind::kMaskedFill && op.inputs.size() == 2 &&
                                      op.attrs.tri_mask == TriMask::kNone && !full(0) && full(1))) {
        std::string w = "w0";
        for (int n = 1; p.find_tensor(w); ++n) w = "w" + std::to_string(n);
        const auto load = [&](const std::string& t) {
            ChainOp c = stmt(ChainOpKind::kLoad);
            c.tensor = ref(t);
            return c;
        };
        ChainOp let = stmt(ChainOpKind::kLet);
        let.name = w;
        ChainOp fill = stmt(ChainOpKind::kMaskedFill);
        fill.tensor = ref(op.inputs[0]);
        if (op.kind == OpKind::kMaskedFill) {  // masked_fill(X, M, c) over M: load X
            fill.tensor = ref(op.inputs[1]);
            fill.numbers = {op.attrs.scalar};
            arg = 1;
            select = std::vector{load(op.inputs[0]), fill};
        } else {  // C ? A : B
            fill.name = w;
            if (full(1)) {
                arg = 1;
                select = std::vector{let, load(op.inputs[2]), fill};
            } else if (full(2) || full(0)) {
                arg = full(2) ? 2 : 0;
                select = std::vector{load(op.inputs[1]), let, load(op.inputs[2]), fill};
            } else {
                return not_expressible(op, "where: none of its condition, A and B spans the "
                                           "output's dims " + dsl::dims_text(out) +
                                           " (all three broadcast); expand one of them first");
            }
        }
    }
    if (select) {
        dsl::Kernel kn;
        kn.kind = dsl::KernelKind::kMap;
        kn.args = {ref(op.inputs[arg])};
        kn.chain = std::move(*select);
        DType value = DType::kF32;
        if (auto st = absorb(kn, op.output, value, op, op.inputs[arg]); !st) return st;
        return add_map_kernel(op, std::move(kn));
    }
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
    return add_map_kernel(op, std::move(kn));
}

// The map kernel `kn` computing `op`, with the configurations it may take (knobs_map.cpp).
Status Planner::add_map_kernel(const Op& op, dsl::Kernel kn) {
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
