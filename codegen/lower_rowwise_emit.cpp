// Emission of row-wise entry points (see lower_rowwise.cpp for the analysis).
#include <sstream>

#include "codegen/kernel_entry.h"
#include "codegen/lower_rowwise_detail.h"

namespace kforge::codegen::detail {
namespace {

constexpr int kMaxCachedPerThread = 64;  // f32 values a thread may cache in registers
constexpr int kMaxSplit = 8;             // portable cluster size

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string cfg_text(int tpr, int rpb, int vec, int64_t items, int split) {
    return "kforge::RowCfg<" + std::to_string(tpr) + ", " + std::to_string(rpb) + ", " +
           std::to_string(vec) + ", " + std::to_string(items) + ", " + std::to_string(split) + ">";
}

// Tensor operands of the op besides X: weight and bias of the norms.
struct Operand {
    const TensorInfo* info = nullptr;
    std::string ctype = "float";
};

}  // namespace

int pick_vec(int vec, int64_t len) {
    for (int v : {8, 4, 2}) {
        if (v <= vec && len % v == 0) return v;
    }
    return 1;
}

Expected<KernelCode> emit_row_kernel(const RowwisePlan& plan, const LowerContext& ctx) {
    const dsl::Kernel& k = *plan.kernel;
    const dsl::RowwiseConfig& cfg = k.rowwise;
    const std::string where = "kernel " + k.name;
    const int rpb = cfg.rows_per_block, split = cfg.split;
    if (rpb < 1 || rpb > 64 || cfg.threads % rpb != 0) {
        return make_error(where, "rows_per_block " + std::to_string(rpb) + " must divide threads " +
                                     std::to_string(cfg.threads) + " (1..64)");
    }
    const int tpr = cfg.threads / rpb;
    if (!(tpr % 32 == 0 || (tpr < 32 && 32 % tpr == 0))) {
        return make_error(where, "threads / rows_per_block = " + std::to_string(tpr) +
                                     " threads per row: must be 1, 2, 4, 8, 16 or a multiple of 32");
    }
    if (split < 1 || split > kMaxSplit) {
        return make_error(where, "split " + std::to_string(split) + ": 1.." +
                                     std::to_string(kMaxSplit) + " CTAs of a cluster per row");
    }
    if (split > 1 && rpb != 1) return make_error(where, "split > 1 needs rows_per_block 1");
    if (cfg.passes != 1 && cfg.passes != 2) return make_error(where, "passes must be 1 or 2");

    const int vec = pick_vec(cfg.vec, plan.n);
    int64_t items = 0, items_scalar = 0;
    if (cfg.passes == 1) {
        const int64_t chunk = ceil_div(ceil_div(plan.n, split), vec) * vec;
        items = ceil_div(chunk, int64_t(tpr) * vec);
        items_scalar = ceil_div(ceil_div(plan.n, split), tpr);
        if (items * vec > kMaxCachedPerThread || items_scalar > kMaxCachedPerThread) {
            return make_error(where, "passes 1 caches the row in registers: " +
                                         std::to_string(plan.n) + " elements over " +
                                         std::to_string(tpr * split) + " threads is " +
                                         std::to_string(items_scalar) + " per thread (at most " +
                                         std::to_string(kMaxCachedPerThread) +
                                         "); use passes 2, more threads or split");
        }
    }
    const int64_t blocks = ceil_div(plan.rows, rpb) * split;
    if (blocks > 0x7fffffff) return make_error(where, "too many rows for one grid");

    auto xtype = cuda_float_type(plan.x->dtype, where + ": " + plan.x->name);
    if (!xtype) return xtype.error();
    EntryParams params;
    params.add_tensor(plan.x->name, *xtype, false);
    const bool norm = plan.tmpl == "norm_rows";
    Operand w, b;
    const bool rms = plan.mode == "kforge::NormMode::kRmsNorm";
    if (norm) {
        const size_t max_args = rms ? 2 : 3;
        if (k.args.size() > max_args) return make_error(where, "too many operands");
        for (size_t a = 1; a < k.args.size(); ++a) {
            auto it = ctx.tensors.find(k.args[a].name);
            if (it == ctx.tensors.end()) return make_error(where, "unknown tensor " + k.args[a].name);
            const int64_t want = plan.mode == "kforge::NormMode::kGroupNorm"
                                     ? plan.groups * plan.group_channels
                                     : plan.n;
            int64_t numel = 1;
            for (int64_t d : it->second.shape) numel *= d;
            if (numel != want) {
                return make_error(where, k.args[a].name + " must have " + std::to_string(want) +
                                             " elements");
            }
            auto t = cuda_float_type(it->second.dtype, where + ": " + k.args[a].name);
            if (!t) return t.error();
            Operand& o = a == 1 ? w : b;
            o = {&it->second, *t};
            params.add_tensor(it->second.name, *t, false);
        }
    } else if (k.args.size() > 1) {
        return make_error(where, "this row op takes one tensor");
    }
    params.add_chain(*plan.chain);
    params.add_int64("rows", plan.rows);
    params.add_int64("n", plan.n);

    const std::string symbol = "kforge_" + k.name;
    std::ostringstream s;
    s << "// kernel " << k.name << ": rowwise " << plan.tmpl << " " << plan.mode << ", "
      << plan.rows << " rows x " << plan.n << "\n";
    s << plan.chain->definition;
    s << "extern \"C\" __global__ void __launch_bounds__(" << cfg.threads << ") " << symbol << "("
      << params.signature() << ") {\n";
    s << chain_init(*plan.chain);
    std::string args = "t_" + plan.x->name;
    std::string tmpl_extra;
    if (norm) {
        const bool has_w = w.info != nullptr, has_b = b.info != nullptr;
        tmpl_extra = std::string(has_w ? "true" : "false") + ", " + (has_b ? "true" : "false");
        const std::string wn = has_w ? "t_" + w.info->name : "(const float*)nullptr";
        const std::string bn = has_b ? "t_" + b.info->name : "(const float*)nullptr";
        args += ", " + wn + ", " + bn + ", rows, n, kforge::NormShape{" +
                cuda_float_literal(plan.eps) + ", " + std::to_string(plan.groups) + ", " +
                std::to_string(plan.group_channels) + ", " + std::to_string(plan.spatial) + "}";
    } else {
        tmpl_extra = plan.tmpl == "softmax_rows" ? (k.rowwise.online ? "true" : "false") : "";
        args += ", rows, n";
    }
    args += ", chain";
    const auto call = [&](const std::string& c) {
        return "kforge::" + plan.tmpl + "<" + c + ", " + plan.mode +
               (tmpl_extra.empty() ? "" : ", " + tmpl_extra) + ">(" + args + ");\n";
    };
    const std::string cv = cfg_text(tpr, rpb, vec, items, split);
    if (vec == 1) {
        s << "    " << call(cv);
    } else {
        std::string cond = "kforge::is_aligned<" + std::to_string(vec) + ">(t_" + plan.x->name + ")";
        if (w.info) cond += " && kforge::is_aligned<" + std::to_string(vec) + ">(t_" + w.info->name + ")";
        if (b.info) cond += " && kforge::is_aligned<" + std::to_string(vec) + ">(t_" + b.info->name + ")";
        if (plan.tmpl != "reduce_rows" && plan.mode != "kforge::SoftmaxMode::kLogsumexp") {
            cond += " && chain.aligned<" + std::to_string(vec) + ">()";
        }
        s << "    if (" << cond << ") {\n        " << call(cv) << "    } else {\n        "
          << call(cfg_text(tpr, rpb, 1, items_scalar, split)) << "    }\n";
    }
    s << "}\n";

    KernelCode code;
    code.device_source = "#include \"" + plan.header + "\"\n#include \"kernels/chain_ops.cuh\"\n" +
                         s.str();
    KernelLaunch launch;
    launch.name = k.name;
    launch.symbol = symbol;
    launch.grid = {unsigned(blocks), 1, 1};
    launch.block = {unsigned(cfg.threads), 1, 1};
    launch.cluster = {unsigned(split), 1, 1};
    launch.params = params.plan_params();
    code.launches.push_back(launch);
    return code;
}

}  // namespace kforge::codegen::detail
