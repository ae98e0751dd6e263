// Emission of row-wise entry points (see lower_rowwise.cpp for the analysis).
#include <algorithm>
#include <sstream>

#include "codegen/kernel_entry.h"
#include "codegen/lower_rowwise_detail.h"
#include "dsl/check.h"

namespace kforge::codegen::detail {
namespace {

constexpr int kMaxSplit = 16;  // cluster CTAs per row (above 8: a non-portable cluster size)

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string cfg_text(int tpr, int rpb, int vec, int64_t items, int split, int64_t staged,
                     int unroll = 0) {
    std::string tail = unroll > 0   ? ", " + std::to_string(staged) + ", " + std::to_string(unroll)
                       : staged > 0 ? ", " + std::to_string(staged)
                                    : std::string();
    return "kforge::RowCfg<" + std::to_string(tpr) + ", " + std::to_string(rpb) + ", " +
           std::to_string(vec) + ", " + std::to_string(items) + ", " + std::to_string(split) +
           tail + ">";
}

// The scalar fallback (a pointer not vector-aligned): the row streamed from memory with this
// many scalars in flight per thread. A slow path that must not cost the vector path registers:
// one kernel holds both, and ptxas sizes the register file for the pair. Caching the row in
// scalars (16 items of 1) took layer_norm_bf16's kernel from 40 to 51-53 registers at 512
// threads (2 blocks per SM instead of 3) and from 64 to 77-79 at 256; streaming 4 scalars at a
// time keeps the kernel at the vector path's count (nvcc 13, sm_90a). Beside a staged row the
// fallback keeps the default 16 scalars: 4 made ptxas spill 4 bytes in a staged rms_norm.
constexpr int kScalarFallbackUnroll = 4;

// Dynamic shared memory one block may opt in to on the target arch (cudaDevAttr
// MaxSharedMemoryPerBlockOptin: 227 KiB on sm_90/sm_100, 163 KiB on sm_80/87, else 99 KiB).
int64_t smem_optin_bytes(const std::string& arch) {
    if (arch.rfind("sm_90", 0) == 0 || arch.rfind("sm_100", 0) == 0) return 227 * 1024;
    if (arch == "sm_80" || arch == "sm_87") return 163 * 1024;
    return 99 * 1024;
}

// Tensor operands of the op besides X: weight and bias of the norms.
struct Operand {
    const TensorInfo* info = nullptr;
    std::string ctype = "float";
};

}  // namespace

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

    // How the row is held (registers, shared memory, streamed): dsl::row_holding, the rule the
    // checker refuses by.
    // The configuration is derived for config_n (the full shape's rows) while its vector width
    // also divides this shape's rows, which keeps them aligned; else for these rows alone.
    int vec = dsl::widest_vec(cfg.vec, plan.config_n);
    int64_t cfg_n = plan.config_n;
    if (cfg_n < plan.n || plan.n % vec != 0) vec = dsl::widest_vec(cfg.vec, plan.n), cfg_n = plan.n;
    const int64_t elem_bytes = dtype_bytes(plan.x->dtype);
    const int64_t smem_budget = smem_optin_bytes(ctx.arch) - dsl::kRowStaticSmemReserve;
    const dsl::RowHolding held = dsl::row_holding(cfg_n, split, vec, tpr, rpb,
                                                  static_cast<int>(elem_bytes), cfg.passes,
                                                  cfg.smem_stage, smem_budget);
    if (!held.fits && cfg.passes == 1) {
        return make_error(where, "passes 1 keeps the row on chip: " + std::to_string(cfg_n) +
                                     " elements over " + std::to_string(tpr * split) +
                                     " threads is " + std::to_string(held.vectors * vec) +
                                     " per thread, " + std::to_string(held.items * vec) +
                                     " of them in registers, and " +
                                     std::to_string(held.smem_bytes()) +
                                     " bytes of shared memory exceed the " +
                                     std::to_string(smem_budget) + " available on " + ctx.arch +
                                     "; use passes 2 (smem_stage), split or fewer rows_per_block");
    }
    if (!held.fits) {
        return make_error(where, "smem_stage: one vector per thread of " + std::to_string(rpb) +
                                     " row(s) is " + std::to_string(held.vector_bytes) +
                                     " bytes, more than the " + std::to_string(smem_budget) +
                                     " available");
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
    const bool normalize = plan.mode == "kforge::NormMode::kL1Normalize" ||
                           plan.mode == "kforge::NormMode::kL2Normalize";
    if (norm) {
        const size_t max_args = normalize ? 1 : rms ? 2 : 3;
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
    if (plan.pre) params.add_chain(*plan.pre);
    params.add_int64("rows", plan.rows);
    params.add_int64("n", plan.n);

    const std::string symbol = "kforge_" + k.name;
    std::ostringstream s;
    s << "// kernel " << k.name << ": rowwise " << plan.tmpl << " " << plan.mode << ", "
      << "configured for rows of " << cfg_n << "\n";
    s << plan.chain->definition;
    if (plan.pre) s << plan.pre->definition;
    s << "extern \"C\" __global__ void __launch_bounds__(" << cfg.threads << ") " << symbol << "("
      << params.signature() << ") {\n";
    s << chain_init(*plan.chain);
    if (plan.pre) s << chain_init(*plan.pre, {}, "pre");
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
    args += plan.pre ? ", chain, pre" : ", chain";
    const auto call = [&](const std::string& c) {
        return "kforge::" + plan.tmpl + "<" + c + ", " + plan.mode +
               (tmpl_extra.empty() ? "" : ", " + tmpl_extra) + ">(" + args + ");\n";
    };
    const std::string cv = cfg_text(tpr, rpb, vec, held.items, split, held.staged);
    if (vec == 1) {
        s << "    " << call(cv);
    } else {
        std::string cond = "kforge::is_aligned<" + std::to_string(vec) + ">(t_" + plan.x->name + ")";
        if (w.info) cond += " && kforge::is_aligned<" + std::to_string(vec) + ">(t_" + w.info->name + ")";
        if (b.info) cond += " && kforge::is_aligned<" + std::to_string(vec) + ">(t_" + b.info->name + ")";
        if (plan.tmpl != "reduce_rows" && plan.mode != "kforge::SoftmaxMode::kLogsumexp") {
            cond += " && chain.aligned<" + std::to_string(vec) + ">()";
        }
        if (plan.pre) cond += " && pre.aligned<" + std::to_string(vec) + ">()";
        s << "    if (" << cond << ") {\n        " << call(cv) << "    } else {\n        "
          << call(cfg_text(tpr, rpb, 1, 0, split, 0,
                           held.staged > 0 ? 0 : kScalarFallbackUnroll))
          << "    }\n";
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
    launch.smem_bytes = unsigned(held.smem_bytes());  // the streamed fallback stages nothing
    launch.params = params.plan_params();
    code.launches.push_back(launch);
    return code;
}

}  // namespace kforge::codegen::detail
