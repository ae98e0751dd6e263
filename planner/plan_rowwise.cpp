// Reductions, the softmax family, norms and scans in the fusion planner (planner/partition.h):
// one rowwise kernel over the stored input, whose chain absorbs the element-wise ops that follow;
// a run of element-wise ops that only a row reduction reads becomes its prologue (`pre { .. }`).
#include <algorithm>

#include "codegen/kernel_lowering.h"
#include "planner/knobs.h"
#include "planner/partition.h"
#include "problem/shape_ops.h"

namespace kforge::planner::detail {
namespace {

dsl::RowOp row_op_of(OpKind k) {
    switch (k) {
    case OpKind::kSoftmax: return dsl::RowOp::kSoftmax;
    case OpKind::kLogSoftmax: return dsl::RowOp::kLogSoftmax;
    case OpKind::kLogsumexp: return dsl::RowOp::kLogsumexp;
    case OpKind::kLayerNorm: return dsl::RowOp::kLayerNorm;
    case OpKind::kRmsNorm: return dsl::RowOp::kRmsNorm;
    case OpKind::kGroupNorm: return dsl::RowOp::kGroupNorm;
    case OpKind::kSum: return dsl::RowOp::kSum;
    case OpKind::kMean: return dsl::RowOp::kMean;
    case OpKind::kMax: return dsl::RowOp::kMax;
    case OpKind::kProd: return dsl::RowOp::kProd;
    case OpKind::kL1Normalize: return dsl::RowOp::kL1Normalize;
    case OpKind::kL2Normalize: return dsl::RowOp::kL2Normalize;
    case OpKind::kCumsum: return dsl::RowOp::kCumsum;
    case OpKind::kCumprod: return dsl::RowOp::kCumprod;
    default: return dsl::RowOp::kMin;
    }
}

}  // namespace

// plan_view.cpp: softmax / log_softmax / logsumexp, l1 / l2_normalize and cumsum / cumprod over
// a dim that is not the last, between copy kernels that transpose it last and back.
Status add_rowwise_transposed(Planner& pl, const Op& op, size_t axis);

// The dims (of `op`'s input, named as `dx` names them) that `op` (sum / mean / max / min over
// `axis`) and the reductions of its kind that follow it reduce: each step the only reader of
// the last one's value, over a dim of dx named once that the set does not have yet, no value in
// between a problem output. Only a set with dx's last dim that keeps another is taken (its run
// of contiguous elements is what the kernel reads in vectors, codegen/lower_rowwise_col.cpp);
// else {dx[axis]}.
std::vector<std::string> Planner::reduction_set(const Op& op, const std::vector<std::string>& dx,
                                                size_t axis) const {
    std::vector<std::string> set{dx[axis]};
    if (!opt.fuse || !is_row_reduction(op.kind) || std::count(dx.begin(), dx.end(), dx[axis]) != 1)
        return set;
    const Op* cur = &op;
    while (!is_output(cur->output)) {
        const auto& rs = readers.at(cur->output);
        if (rs.size() != 1 || done[rs[0]]) break;
        const Op& next = p.ops[rs[0]];
        if (next.kind != op.kind || next.inputs.size() != 1 || next.inputs[0] != cur->output) break;
        const auto dn = dims_of(tensor(cur->output));
        const int64_t rank = static_cast<int64_t>(dn.size());
        const int64_t a = next.attrs.axis < 0 ? next.attrs.axis + rank : next.attrs.axis;
        if (a < 0 || a >= rank) break;
        const std::string& d = dn[static_cast<size_t>(a)];
        if (d == "1" || std::count(dn.begin(), dn.end(), d) != 1 ||
            std::count(dx.begin(), dx.end(), d) != 1 ||
            std::find(set.begin(), set.end(), d) != set.end())
            break;
        set.push_back(d);
        cur = &next;
    }
    // Every dim reduced (an MSE's mean over all): one output, where the set kernel read 6%
    // slower than the row reduction plus a one-block mean of its rows (94_MSELoss, H100, s28).
    const bool keeps = std::any_of(dx.begin(), dx.end(), [&](const std::string& d) {
        return d != "1" && std::find(set.begin(), set.end(), d) == set.end();
    });
    if (!keeps || std::find(set.begin(), set.end(), dx.back()) == set.end() ||
        std::count(dx.begin(), dx.end(), dx.back()) != 1)
        return {dx[axis]};
    return set;
}

bool Planner::reduces_last_dim(const Op& next, const std::string& value) const {
    const auto dn = dims_of(tensor(value));
    const int64_t rank = static_cast<int64_t>(dn.size());
    if (rank == 0 || next.inputs[0] != value) return false;
    const int64_t axis = next.attrs.axis < 0 ? next.attrs.axis + rank : next.attrs.axis;
    return axis == rank - 1 && dn.back() != "1" &&
           std::count(dn.begin(), dn.end(), dn.back()) == 1;
}

Status Planner::add_rowwise(const Op& op, const Prologue* pre) {
    const Tensor& x = tensor(pre ? pre->x : op.inputs[0]);
    const auto dx = dims_of(x);
    const size_t rank = dx.size();
    if (rank == 0) return not_expressible(op, "a scalar input");
    const size_t axis = static_cast<size_t>(op.attrs.axis < 0 ? op.attrs.axis + int64_t(rank)
                                                              : op.attrs.axis);
    if (!pre && is_unit_reduction(p, op)) return add_rank_view(op);  // the value itself
    const bool norm = op.kind == OpKind::kLayerNorm || op.kind == OpKind::kRmsNorm;
    const bool group = op.kind == OpKind::kGroupNorm;
    const bool softmax = op.kind == OpKind::kSoftmax || op.kind == OpKind::kLogSoftmax ||
                         op.kind == OpKind::kLogsumexp;
    const bool normalize = op.kind == OpKind::kL1Normalize || op.kind == OpKind::kL2Normalize;
    const bool scan = op.kind == OpKind::kCumsum || op.kind == OpKind::kCumprod;
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kRowwise;
    kn.row_op = row_op_of(op.kind);
    for (const auto& in : op.inputs) kn.args.push_back(ref(in));
    if (pre) {
        kn.args[0] = ref(pre->x);
        kn.pre = pre->stmts;
    }
    RowShape s;
    s.elem_bytes = dtype_bytes(dtype_of(x.name));
    s.softmax_family = softmax;
    int64_t numel = 1;
    for (int64_t v : x.shape) numel *= v;
    if (norm) {
        // Over the trailing dims normalized_shape covers: one row of their product, named by
        // the first of them (`over`) when there are several.
        const size_t n = std::clamp<size_t>(op.attrs.normalized_shape.size(), 1, rank);
        if (n > 1) kn.over = dx[rank - n];
        kn.eps = op.attrs.eps;
        s.len = 1;
        for (size_t i = rank - n; i < rank; ++i) s.len *= x.shape[i];
    } else if (group) {
        if (rank < 2) return not_expressible(op, "group_norm needs X[N, C, *]");
        kn.eps = op.attrs.eps;
        kn.groups = op.attrs.num_groups;
        s.rows = x.shape[0] * op.attrs.num_groups;
        s.len = numel / std::max<int64_t>(1, s.rows);
    } else if (const auto set = reduction_set(op, dx, axis); set.size() > 1) {
        // a chain of reductions of one kind ending over a set of the input's dims with its
        // last one (BatchNorm's mean over W, then H, then N): one kernel over the set, the
        // chain's later steps taken (the checker's expressions merge such chains alike)
        std::string over;
        for (size_t d = 0; d < rank; ++d)
            if (std::find(set.begin(), set.end(), dx[d]) != set.end())
                over += (over.empty() ? "" : ",") + dx[d];
        kn.over = over;
        s.column = true;
        s.len = x.shape.back();
        s.rows = numel / std::max<int64_t>(1, s.len);
        const Op* last = &op;
        for (size_t i = 1; i < set.size(); ++i) {
            const size_t next = readers.at(last->output)[0];
            done[next] = true;
            last = &p.ops[next];
        }
        DType value = DType::kF32;
        if (auto st = absorb(kn, last->output, value, *last); !st) return st;
        PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind)) + " over " + over};
        // An output of at most kSetOneBlockElements is one block's (codegen/kernel_lowering.h):
        // 512 threads put twice the loads in flight over it (ResNet-18's 40 statistics of
        // 6272 elements took 6.6 us each at 256, H100, session 28; not yet measured at 512).
        int64_t kept = 1;
        for (size_t d = 0; d < rank; ++d)
            if (std::find(set.begin(), set.end(), dx[d]) == set.end()) kept *= x.shape[d];
        const bool one_block = numel / std::max<int64_t>(1, kept) <= codegen::kSetOneBlockElements;
        for (auto c : rowwise_candidates(s, limits, opt)) {
            if (one_block && c.threads < 512) c.threads = std::min(512, limits.max_threads_per_block);
            kn.rowwise = c;
            pk.candidates.push_back(kn);
        }
        kernels.push_back(std::move(pk));
        return Ok{};
    } else {
        if (std::count(dx.begin(), dx.end(), dx[axis]) != 1) {
            return not_expressible(op, "the reduced dim " + dx[axis] + " appears more than once in " +
                                           x.name + "; name the dims apart");
        }
        if (normalize && op.attrs.eps != 0) kn.eps = op.attrs.eps;  // 0: the knob's default
        if (axis != rank - 1) {
            if ((softmax || normalize || scan) && !pre)
                return add_rowwise_transposed(*this, op, axis);
            if (softmax || normalize || scan) {
                return not_expressible(op, "over " + dx[axis] + ", not the last dim: softmax, "
                                               "log_softmax, logsumexp, l1_normalize, "
                                               "l2_normalize, cumsum and cumprod run over the "
                                               "last dim");
            }
            kn.over = dx[axis];
            s.column = true;
        }
        s.len = x.shape[axis];
    }
    if (!group) s.rows = numel / std::max<int64_t>(1, s.len);
    DType value = DType::kF32;
    if (auto st = absorb(kn, op.output, value, op); !st) return st;
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind))};
    if (scan) {
        for (dsl::RowwiseConfig c : scan_candidates(s.rows, s.len, s.elem_bytes, limits.sm_count)) {
            c.reverse = op.attrs.reverse;
            c.exclusive = op.attrs.exclusive;
            kn.rowwise = c;
            pk.candidates.push_back(kn);
        }
        kernels.push_back(std::move(pk));
        return Ok{};
    }
    for (const auto& c : rowwise_candidates(s, limits, opt)) {
        kn.rowwise = c;
        pk.candidates.push_back(kn);
    }
    kernels.push_back(std::move(pk));
    return Ok{};
}

// Whether element-wise `op` starts a run of element-wise ops (each value read once, by the
// next, and no output) that ends in a sum / mean / max / min over the last dim of a value with
// the run's dims: the run is then that reduction's prologue, read from the run's first input
// (the one with the full dims), and its values are never stored. `reduction`: the reduction's
// op index. Operands must be available and broadcast into the row (their dims among its dims).
std::optional<Planner::Prologue> Planner::fold_into_reduction(const Op& op, size_t& reduction) {
    if (!opt.fuse) return std::nullopt;
    const auto full = named(dims_of(tensor(op.output)));
    if (full.empty()) return std::nullopt;
    const auto within = [&](const std::string& t) {
        for (const auto& d : named(dims_of(tensor(t))))
            if (std::find(full.begin(), full.end(), d) == full.end()) return false;
        return true;
    };
    Prologue pre;
    size_t pos = 0;
    if (op.inputs.size() > 1) {
        const bool first_full = named(dims_of(tensor(op.inputs[0]))) == full;
        const bool second_full = named(dims_of(tensor(op.inputs[1]))) == full;
        if (!first_full && second_full) pos = 1;
        if (op.inputs[0] == op.inputs[1]) return std::nullopt;
    }
    pre.x = op.inputs[pos];
    if (named(dims_of(tensor(pre.x))) != full || dims_of(tensor(pre.x)) != dims_of(tensor(op.output)))
        return std::nullopt;
    const Op* cur = &op;
    size_t cur_pos = pos;
    std::vector<size_t> run;
    while (true) {
        Operand other;
        if (cur->inputs.size() > 1) {
            const std::string& o = cur->inputs[1 - cur_pos];
            if (!available.count(o) || !within(o)) return std::nullopt;
            other.tensor = ref(o);
        }
        auto stmts = translate(*cur, cur_pos, other);
        if (!stmts) return std::nullopt;
        pre.stmts.insert(pre.stmts.end(), stmts->begin(), stmts->end());
        const std::string& out = cur->output;
        const auto& rs = readers.at(out);
        if (is_output(out) || rs.size() != 1 || done[rs[0]]) return std::nullopt;
        if (named(dims_of(tensor(out))) != full) return std::nullopt;
        const Op& next = p.ops[rs[0]];
        if (is_row_reduction(next.kind)) {
            if (!reduces_last_dim(next, out)) return std::nullopt;
            for (size_t i : run) done[i] = true;
            reduction = rs[0];
            return pre;
        }
        if (op_class(next.kind) != OpClass::kElementwise) return std::nullopt;
        cur_pos = next.inputs[0] == out ? 0 : 1;
        if (next.inputs.size() > 1 && next.inputs[0] == next.inputs[1]) return std::nullopt;
        run.push_back(rs[0]);
        cur = &next;
    }
}

}  // namespace kforge::planner::detail
