// lower_rowwise: a checked `rowwise` kernel to an extern "C" entry point that instantiates one
// of kforge's templates (kernels/softmax.cuh, norm.cuh, scan.cuh, reduce_row.cuh,
// reduce_col.cuh) with the kernel's knobs and its generated chain (codegen/chain.h), plus its launches and workspace.
//
// Row ops run over the last dim (norms: over the trailing dims from `over`, or the weight's
// dims). sum/mean/max/min/prod over a leading dim become a column reduction. The vector width is the
// largest of 8, 4, 2, 1 not above `vec` that divides the row (so rows stay aligned); the entry
// point falls back to scalar accesses at run time when a pointer is not vector-aligned.
#include <algorithm>
#include <optional>
#include <sstream>

#include "codegen/chain.h"
#include "codegen/kernel_lowering.h"
#include "codegen/lower_rowwise_detail.h"

namespace kforge::codegen {
namespace {

int64_t product(const std::vector<int64_t>& v, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to; ++i) p *= v[i];
    return p;
}

// The problem op this kernel implements, for default eps / groups.
const Op* problem_op(const LowerContext& ctx, OpKind kind) {
    if (ctx.problem == nullptr) return nullptr;
    for (const Op& op : ctx.problem->ops) {
        if (op.kind == kind) return &op;
    }
    return nullptr;
}

struct RowOpInfo {
    const char* tmpl;  // template function
    std::string mode;  // enum value passed as a template argument
    bool per_row_result;
};

RowOpInfo row_op_info(dsl::RowOp op) {
    using R = dsl::RowOp;
    switch (op) {
        case R::kSoftmax: return {"softmax_rows", "kforge::SoftmaxMode::kSoftmax", false};
        case R::kLogSoftmax: return {"softmax_rows", "kforge::SoftmaxMode::kLogSoftmax", false};
        case R::kLogsumexp: return {"softmax_rows", "kforge::SoftmaxMode::kLogsumexp", true};
        case R::kLayerNorm: return {"norm_rows", "kforge::NormMode::kLayerNorm", false};
        case R::kRmsNorm: return {"norm_rows", "kforge::NormMode::kRmsNorm", false};
        case R::kGroupNorm: return {"norm_rows", "kforge::NormMode::kGroupNorm", false};
        case R::kL1Normalize: return {"norm_rows", "kforge::NormMode::kL1Normalize", false};
        case R::kL2Normalize: return {"norm_rows", "kforge::NormMode::kL2Normalize", false};
        case R::kCumsum: return {"scan_rows", "kforge::ScanMode::kSum", false};
        case R::kCumprod: return {"scan_rows", "kforge::ScanMode::kProd", false};
        case R::kSum: return {"reduce_rows", "kforge::ReduceMode::kSum", true};
        case R::kMean: return {"reduce_rows", "kforge::ReduceMode::kMean", true};
        case R::kMax: return {"reduce_rows", "kforge::ReduceMode::kMax", true};
        case R::kProd: return {"reduce_rows", "kforge::ReduceMode::kProd", true};
        default: return {"reduce_rows", "kforge::ReduceMode::kMin", true};
    }
}

bool is_norm(dsl::RowOp op) {
    return op == dsl::RowOp::kLayerNorm || op == dsl::RowOp::kRmsNorm ||
           op == dsl::RowOp::kGroupNorm;
}

// l1_normalize / l2_normalize: one statistic per row of the last dim, then every element scaled
// (norm.cuh, like rms_norm).
bool is_normalize(dsl::RowOp op) {
    return op == dsl::RowOp::kL1Normalize || op == dsl::RowOp::kL2Normalize;
}

const char* header_of(dsl::RowOp op) {
    if (is_norm(op) || is_normalize(op)) return "kernels/norm.cuh";
    if (op == dsl::RowOp::kCumsum || op == dsl::RowOp::kCumprod) return "kernels/scan.cuh";
    if (op == dsl::RowOp::kSoftmax || op == dsl::RowOp::kLogSoftmax ||
        op == dsl::RowOp::kLogsumexp) {
        return "kernels/softmax.cuh";
    }
    return "kernels/reduce_col.cuh";  // includes reduce_row.cuh
}

// The row kernel's plan at `ctx`'s shape, everything but the chain.
Expected<detail::RowwisePlan> plan_rows(const dsl::Kernel& kernel, const LowerContext& ctx) {
    const std::string where = "kernel " + kernel.name;
    if (kernel.args.empty()) return make_error(where, "rowwise needs an input tensor");
    const dsl::TensorRef& xref = kernel.args[0];
    auto xit = ctx.tensors.find(xref.name);
    if (xit == ctx.tensors.end()) return make_error(where, "unknown tensor " + xref.name);
    const TensorInfo& x = xit->second;
    const std::vector<int64_t>& shape = x.shape;
    const size_t rank = shape.size();
    if (rank == 0) return make_error(where, "rowwise input " + xref.name + " is a scalar");
    if (xref.dims.size() != rank) {
        return make_error(where, xref.name + " has " + std::to_string(rank) + " dims");
    }
    const dsl::RowwiseConfig& cfg = kernel.rowwise;
    if (cfg.threads < 32 || cfg.threads > 1024 || cfg.threads % 32 != 0) {
        return make_error(where, "threads must be a multiple of 32 in 32..1024");
    }

    if (dsl::over_is_set(kernel)) {
        const auto axes = dsl::over_axes(kernel);
        if (!axes) {
            return make_error(where, "over " + kernel.over + ": each dim of the set must be a dim "
                                     "of " + xref.name + ", named once");
        }
        if (!dsl::reduces_a_set(kernel.row_op)) {
            return make_error(where, "over " + kernel.over + ": a set of dims is reduced by "
                                     "sum, mean, max and min only");
        }
        // emit_set_reduce derives its dim groups, run and outputs from the shape and the axes
        detail::RowwisePlan plan;
        plan.kernel = &kernel;
        plan.x = &x;
        plan.set = true;
        plan.set_axes = *axes;
        const RowOpInfo info = row_op_info(kernel.row_op);
        plan.tmpl = info.tmpl;
        plan.mode = info.mode;
        return plan;
    }

    // The dim reduced / normalized from (`over`), default the last (norms: the weight's dims).
    const std::optional<size_t> row_axis = dsl::row_axis(kernel);
    if (!row_axis) {
        return make_error(where, "over " + kernel.over + ": " + xref.name + " has no such dim");
    }
    const size_t axis = *row_axis;

    detail::RowwisePlan plan;
    plan.kernel = &kernel;
    plan.x = &x;
    plan.axis = axis;
    const RowOpInfo info = row_op_info(kernel.row_op);
    plan.tmpl = info.tmpl;
    plan.mode = info.mode;
    plan.header = header_of(kernel.row_op);

    if (kernel.row_op == dsl::RowOp::kGroupNorm) {
        if (rank < 2) return make_error(where, "group_norm needs X[N, C, *]");
        const Op* op = problem_op(ctx, OpKind::kGroupNorm);
        const int64_t groups = kernel.groups.value_or(op ? op->attrs.num_groups : 1);
        if (groups < 1 || shape[1] % groups != 0) {
            return make_error(where, "groups " + std::to_string(groups) + " must divide C = " +
                                         std::to_string(shape[1]));
        }
        plan.groups = groups;
        plan.group_channels = shape[1] / groups;
        plan.spatial = product(shape, 2, rank);
        plan.rows = shape[0] * groups;
        plan.n = plan.group_channels * plan.spatial;
    } else if (is_norm(kernel.row_op) || axis == rank - 1) {
        plan.rows = product(shape, 0, axis);
        plan.n = product(shape, axis, rank);
    } else if (info.per_row_result && kernel.row_op != dsl::RowOp::kLogsumexp) {
        plan.column = true;
        plan.outer = product(shape, 0, axis);
        plan.n = shape[axis];
        plan.inner = product(shape, axis + 1, rank);
    } else {
        return make_error(where, "rowwise over " + kernel.over +
                                     ": softmax, log_softmax, logsumexp, l1_normalize, "
                                     "l2_normalize, cumsum and cumprod run over the last dim");
    }
    if (is_norm(kernel.row_op)) {
        const OpKind kind = kernel.row_op == dsl::RowOp::kLayerNorm ? OpKind::kLayerNorm
                            : kernel.row_op == dsl::RowOp::kRmsNorm ? OpKind::kRmsNorm
                                                                    : OpKind::kGroupNorm;
        const Op* op = problem_op(ctx, kind);
        plan.eps = kernel.eps.value_or(op ? op->attrs.eps : 1e-5);
    } else if (is_normalize(kernel.row_op)) {
        const Op* op = problem_op(ctx, kernel.row_op == dsl::RowOp::kL1Normalize
                                           ? OpKind::kL1Normalize
                                           : OpKind::kL2Normalize);
        plan.eps = kernel.eps.value_or(op ? op->attrs.eps : 0.0);  // 0: plain division
    }
    plan.config_n = plan.n;
    return plan;
}

}  // namespace

Expected<KernelCode> lower_rowwise(const dsl::Kernel& kernel, const LowerContext& ctx) {
    if (detail::is_index_row_op(kernel.row_op)) return detail::lower_rowwise_index(kernel, ctx);
    auto plan = plan_rows(kernel, ctx);
    if (!plan) return plan.error();
    // At a correctness shape, a row kernel is configured for the rows of the full shape (the
    // emission keeps that only where it also serves these rows), so one source serves both
    if (ctx.config != nullptr && !plan->column && !plan->set)
        if (auto full = plan_rows(kernel, *ctx.config); full && !full->column && full->n > plan->n)
            plan->config_n = full->n;
    // The chain's index space: the input, or the input without the reduced dim.
    const dsl::TensorRef& xref = kernel.args[0];
    const RowOpInfo info = row_op_info(kernel.row_op);
    ChainSpace space;
    for (size_t d = 0; d < plan->x->shape.size(); ++d) {
        if (plan->set ? std::binary_search(plan->set_axes.begin(), plan->set_axes.end(), d)
                      : info.per_row_result && d == plan->axis)
            continue;
        space.dims.push_back(xref.dims[d]);
        space.shape.push_back(plan->x->shape[d]);
    }
    auto chain = emit_chain("kforge_" + kernel.name + "_chain", kernel.chain, space, std::nullopt,
                            ctx);
    if (!chain) return chain.error();
    plan->chain = &*chain;
    std::optional<ChainCode> pre;
    if (!kernel.pre.empty()) {
        const std::string where = "kernel " + kernel.name;
        if (plan->tmpl != "reduce_rows" || plan->column) {
            return make_error(where, "pre { .. }: an element-wise prologue is lowered for rowwise "
                                     "sum, mean, max and min over the last dim only");
        }
        ChainSpace full;
        full.dims = xref.dims;
        full.shape = plan->x->shape;
        auto code = emit_chain("kforge_" + kernel.name + "_pre", kernel.pre, full, std::nullopt,
                               ctx, /*needs_store=*/false);
        if (!code) return code.error();
        for (const ChainParam& p : code->params) {
            if (p.written) return make_error(where, "pre { .. } stores nothing");
        }
        pre = std::move(*code);
        plan->pre = &*pre;
    }
    if (plan->set) return detail::emit_set_reduce(*plan, ctx);
    if (plan->column) return detail::emit_column_reduce(*plan, ctx);
    return plan->tmpl == "scan_rows" ? detail::emit_scan_rows(*plan, ctx)
                                     : detail::emit_row_kernel(*plan, ctx);
}

}  // namespace kforge::codegen
