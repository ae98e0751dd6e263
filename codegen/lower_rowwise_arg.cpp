// Lowering of the index row ops: argmax / argmin (kernels/reduce_arg.cuh: the row form over the
// last dim, a block per row; the column form over a leading dim, a thread per output column)
// and cross_entropy (kernels/cross_entropy.cuh: a block per row writes its loss to an f32
// workspace `<kernel>_losses` [rows], then one block writes their mean: two launches, no
// atomics, deterministic), and tril / triu (kernels/tri_mask.cuh: the triangle of the last two
// dims, the problem op's diagonal; after a matmul this is a separate pass over its output, so a
// triangular product still costs the full GEMM). Their chain is one store: an index, a loss or
// a masked matrix has no element-wise epilogue here.
#include <algorithm>
#include <sstream>

#include "codegen/chain.h"
#include "codegen/kernel_entry.h"
#include "codegen/lower_rowwise_detail.h"
#include "dsl/check.h"
#include "dsl/tri_mask.h"

namespace kforge::codegen::detail {
namespace {

constexpr int kMeanThreads = 256;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t product(const std::vector<int64_t>& v, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to; ++i) p *= v[i];
    return p;
}

// The chain's one store: its tensor, which must be `want` (i64 for an index).
Expected<const TensorInfo*> single_store(const dsl::Kernel& k, const LowerContext& ctx,
                                         DType want) {
    const std::string where = "kernel " + k.name;
    const std::string op(dsl::to_string(k.row_op));
    if (k.chain.size() != 1 || k.chain[0].kind != dsl::ChainOpKind::kStore || !k.chain[0].tensor) {
        return make_error(where, op + ": the chain must be one store of the result ({ store Y[..] }); "
                                      "an element-wise epilogue goes in a map kernel after it");
    }
    auto it = ctx.tensors.find(k.chain[0].tensor->name);
    if (it == ctx.tensors.end()) return make_error(where, "unknown tensor " + k.chain[0].tensor->name);
    if (it->second.dtype != want) {
        return make_error(where, op + " stores " + std::string(to_string(want)) + "; " +
                                     it->second.name + " is " +
                                     std::string(to_string(it->second.dtype)));
    }
    return &it->second;
}

int row_threads(const dsl::RowwiseConfig& cfg) {
    return std::clamp(cfg.threads / 32 * 32, 32, 1024);
}

Expected<KernelCode> lower_arg(const dsl::Kernel& k, const LowerContext& ctx) {
    const std::string where = "kernel " + k.name;
    const TensorInfo& x = ctx.tensors.at(k.args[0].name);
    auto xtype = cuda_float_type(x.dtype, where + ": " + x.name);
    if (!xtype) return xtype.error();
    auto y = single_store(k, ctx, DType::kI64);
    if (!y) return y.error();
    const std::optional<size_t> axis = dsl::row_axis(k);
    if (!axis) return make_error(where, "over " + k.over + ": " + x.name + " has no such dim");
    const int64_t outer = product(x.shape, 0, *axis), n = x.shape[*axis];
    const int64_t inner = product(x.shape, *axis + 1, x.shape.size());
    const bool is_max = k.row_op == dsl::RowOp::kArgmax;
    const int threads = row_threads(k.rowwise);
    EntryParams params;
    params.add_tensor(x.name, *xtype, false);
    params.add_tensor((*y)->name, "int64_t", true);
    params.add_int64("outer", outer);
    params.add_int64("n", n);
    params.add_int64("inner", inner);
    const std::string symbol = "kforge_" + k.name;
    const std::string tx = "t_" + x.name, ty = "t_" + (*y)->name;
    std::ostringstream s;
    s << "// kernel " << k.name << ": " << dsl::to_string(k.row_op) << " over [" << outer << ", "
      << n << ", " << inner << "] dim 1 -> int64\n"
      << "extern \"C\" __global__ void __launch_bounds__(" << threads << ") " << symbol << "("
      << params.signature() << ") {\n";
    KernelLaunch launch;
    launch.name = k.name;
    launch.symbol = symbol;
    launch.block = {unsigned(threads), 1, 1};
    const std::string mx = is_max ? "true" : "false";
    if (inner == 1) {
        const int vec = dsl::widest_vec(k.rowwise.vec, n);
        const auto call = [&](int v) {
            return "kforge::arg_reduce_rows<" + mx + ", " + std::to_string(threads) + ", " +
                   std::to_string(v) + ">(" + tx + ", " + ty + ", outer, n);\n";
        };
        if (vec > 1) {
            s << "    if (kforge::is_aligned<" << vec << ">(" << tx << ")) {\n        " << call(vec)
              << "    } else {\n        " << call(1) << "    }\n";
        } else {
            s << "    " << call(1);
        }
        launch.grid = {unsigned(std::clamp<int64_t>(outer, 1, 1 << 20)), 1, 1};
    } else {
        s << "    kforge::arg_reduce_cols<" << mx << ">(" << tx << ", " << ty
          << ", outer, n, inner);\n";
        launch.grid = {unsigned(std::clamp<int64_t>(ceil_div(outer * inner, threads), 1, 1 << 20)),
                       1, 1};
    }
    s << "}\n";
    launch.params = params.plan_params();
    KernelCode code;
    code.launches.push_back(launch);
    code.device_source = "#include \"kernels/reduce_arg.cuh\"\n" + s.str();
    return code;
}

Expected<KernelCode> lower_cross_entropy(const dsl::Kernel& k, const LowerContext& ctx) {
    const std::string where = "kernel " + k.name;
    if (k.args.size() != 2) return make_error(where, "cross_entropy takes (logits[N,C], targets[N])");
    const TensorInfo& x = ctx.tensors.at(k.args[0].name);
    const TensorInfo& t = ctx.tensors.at(k.args[1].name);
    auto xtype = cuda_float_type(x.dtype, where + ": " + x.name);
    if (!xtype) return xtype.error();
    if (t.dtype != DType::kI64 && t.dtype != DType::kI32) {
        return make_error(where, "cross_entropy's targets " + t.name + " must be i32 or i64, not " +
                                     std::string(to_string(t.dtype)));
    }
    if (x.shape.size() != 2 && x.shape.size() != 1)
        return make_error(where, "cross_entropy's logits must be [N, C]");
    auto y = single_store(k, ctx, x.dtype);
    if (!y) return y.error();
    const int64_t n = x.shape.back(), rows = x.shape.size() == 2 ? x.shape[0] : 1;
    const int threads = row_threads(k.rowwise);
    const int vec = dsl::widest_vec(k.rowwise.vec, n);
    const std::string ttype = t.dtype == DType::kI64 ? "int64_t" : "int32_t";
    const std::string ws = k.name + "_losses", symbol = "kforge_" + k.name;
    EntryParams rows_params;
    rows_params.add_tensor(x.name, *xtype, false);
    rows_params.add_tensor(t.name, ttype, false);
    rows_params.add_workspace(ws);
    rows_params.add_int64("rows", rows);
    rows_params.add_int64("n", n);
    std::ostringstream s;
    const auto call = [&](int v) {
        return "kforge::cross_entropy_rows<" + std::to_string(threads) + ", " + std::to_string(v) +
               ">(t_" + x.name + ", t_" + t.name + ", w_" + ws + ", rows, n);\n";
    };
    s << "// kernel " << k.name << ": cross_entropy over [" << rows << ", " << n
      << "], then the mean of the row losses\n"
      << "extern \"C\" __global__ void __launch_bounds__(" << threads << ") " << symbol << "("
      << rows_params.signature() << ") {\n";
    if (vec > 1) {
        s << "    if (kforge::is_aligned<" << vec << ">(t_" << x.name << ")) {\n        " << call(vec)
          << "    } else {\n        " << call(1) << "    }\n";
    } else {
        s << "    " << call(1);
    }
    s << "}\n";
    EntryParams mean_params;
    mean_params.add_workspace(ws);
    mean_params.add_tensor((*y)->name, *xtype, true);
    mean_params.add_int64("rows", rows);
    const std::string msym = symbol + "_mean";
    s << "extern \"C\" __global__ void __launch_bounds__(" << kMeanThreads << ") " << msym << "("
      << mean_params.signature() << ") {\n"
      << "    kforge::mean_of_losses<" << kMeanThreads << ">(w_" << ws << ", t_" << (*y)->name
      << ", rows);\n}\n";
    KernelCode code;
    KernelLaunch first;
    first.name = k.name;
    first.symbol = symbol;
    first.grid = {unsigned(std::clamp<int64_t>(rows, 1, 1 << 20)), 1, 1};
    first.block = {unsigned(threads), 1, 1};
    first.params = rows_params.plan_params();
    code.launches.push_back(first);
    KernelLaunch second;
    second.name = k.name;
    second.symbol = msym;
    second.block = {unsigned(kMeanThreads), 1, 1};
    second.params = mean_params.plan_params();
    code.launches.push_back(second);
    BufferDecl buf;
    buf.name = ws;
    buf.dtype = DType::kF32;
    buf.shape = {rows};
    buf.workspace = true;
    code.buffers.push_back(buf);
    code.device_source = "#include \"kernels/cross_entropy.cuh\"\n" + s.str();
    return code;
}

// tril / triu: the diagonal of the problem's op that reads x (else the first of its kind).
Expected<KernelCode> lower_triangle(const dsl::Kernel& k, const LowerContext& ctx) {
    const std::string where = "kernel " + k.name;
    const TensorInfo& x = ctx.tensors.at(k.args[0].name);
    auto xtype = cuda_float_type(x.dtype, where + ": " + x.name);
    if (!xtype) return xtype.error();
    if (x.shape.size() < 2) return make_error(where, "tril / triu need rank >= 2");
    auto y = single_store(k, ctx, x.dtype);
    if (!y) return y.error();
    const bool lower = k.row_op == dsl::RowOp::kTril;
    // its problem op: a tril / triu, or a masked_fill with a structured mask (dsl/tri_mask.h)
    const dsl::TriKeep keep =
        ctx.problem != nullptr ? dsl::tri_keep_of(*ctx.problem, lower, x.name) : dsl::TriKeep{};
    const int64_t diagonal = keep.diagonal;
    const int64_t cols = x.shape.back(), rows = x.shape[x.shape.size() - 2];
    const int64_t total = product(x.shape, 0, x.shape.size());
    const int threads = row_threads(k.rowwise);
    const int vec = dsl::widest_vec(k.rowwise.vec, cols);
    EntryParams params;
    params.add_tensor(x.name, *xtype, false);
    params.add_tensor((*y)->name, *xtype, true);
    params.add_int64("total", total);
    params.add_int64("rows", rows);
    params.add_int64("cols", cols);
    params.add_int64("diagonal", diagonal);
    const std::string symbol = "kforge_" + k.name, tx = "t_" + x.name, ty = "t_" + (*y)->name;
    const auto call = [&](int v) {
        return std::string("kforge::tri_mask<") + (lower ? "true" : "false") + ", " +
               std::to_string(v) + ">(" + tx + ", " + ty + ", total, rows, cols, diagonal, " +
               cuda_float_literal(keep.fill) + ");\n";
    };
    std::ostringstream s;
    s << "// kernel " << k.name << ": " << (lower ? "tril" : "triu") << " of [" << total / (rows * cols)
      << ", " << rows << ", " << cols << "], diagonal " << diagonal
      << (keep.fill != 0.0 ? ", the rest filled" : "") << "\n"
      << "extern \"C\" __global__ void __launch_bounds__(" << threads << ") " << symbol << "("
      << params.signature() << ") {\n";
    if (vec > 1) {
        s << "    if (kforge::is_aligned<" << vec << ">(" << tx << ") && kforge::is_aligned<" << vec
          << ">(" << ty << ")) {\n        " << call(vec) << "    } else {\n        " << call(1)
          << "    }\n";
    } else {
        s << "    " << call(1);
    }
    s << "}\n";
    KernelLaunch launch;
    launch.name = k.name;
    launch.symbol = symbol;
    launch.block = {unsigned(threads), 1, 1};
    launch.grid = {unsigned(std::clamp<int64_t>(ceil_div(total, int64_t(threads) * vec), 1, 1 << 20)),
                   1, 1};
    launch.params = params.plan_params();
    KernelCode code;
    code.launches.push_back(launch);
    code.device_source = "#include \"kernels/tri_mask.cuh\"\n" + s.str();
    return code;
}

}  // namespace

bool is_index_row_op(dsl::RowOp op) {
    return op == dsl::RowOp::kArgmax || op == dsl::RowOp::kArgmin ||
           op == dsl::RowOp::kCrossEntropy || op == dsl::RowOp::kTril ||
           op == dsl::RowOp::kTriu;
}

Expected<KernelCode> lower_rowwise_index(const dsl::Kernel& kernel, const LowerContext& ctx) {
    const std::string where = "kernel " + kernel.name;
    if (kernel.args.empty()) return make_error(where, "rowwise needs an input tensor");
    for (const dsl::TensorRef& a : kernel.args)
        if (!ctx.tensors.count(a.name)) return make_error(where, "unknown tensor " + a.name);
    if (!kernel.pre.empty()) {
        return make_error(where, std::string(dsl::to_string(kernel.row_op)) +
                                     " takes no pre { .. } prologue");
    }
    if (kernel.row_op == dsl::RowOp::kTril || kernel.row_op == dsl::RowOp::kTriu)
        return lower_triangle(kernel, ctx);
    return kernel.row_op == dsl::RowOp::kCrossEntropy ? lower_cross_entropy(kernel, ctx)
                                                      : lower_arg(kernel, ctx);
}

}  // namespace kforge::codegen::detail
