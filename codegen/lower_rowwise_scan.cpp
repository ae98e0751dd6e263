// Emission of the prefix-scan row kernels (cumsum, cumprod over the last dim) onto
// kernels/scan.cuh: one row per row group, scanned tile by tile with a running carry, so any
// row length takes the same kernel (nothing is held on chip; the row is read once).
#include <sstream>

#include "codegen/kernel_entry.h"
#include "codegen/lower_rowwise_detail.h"
#include "dsl/check.h"

namespace kforge::codegen::detail {

Expected<KernelCode> emit_scan_rows(const RowwisePlan& plan, const LowerContext& ctx) {
    const dsl::Kernel& k = *plan.kernel;
    const dsl::RowwiseConfig& cfg = k.rowwise;
    const std::string where = "kernel " + k.name;
    const int rpb = cfg.rows_per_block;
    if (rpb < 1 || rpb > 64 || cfg.threads % rpb != 0) {
        return make_error(where, "rows_per_block " + std::to_string(rpb) + " must divide threads " +
                                     std::to_string(cfg.threads) + " (1..64)");
    }
    const int tpr = cfg.threads / rpb;
    if (rpb > 1 && !(tpr <= 32 && 32 % tpr == 0)) {
        return make_error(where, "a scan with rows_per_block > 1 needs threads / rows_per_block "
                                 "of 1, 2, 4, 8, 16 or 32 (one row per warp or less)");
    }
    if (rpb == 1 && tpr % 32 != 0) return make_error(where, "threads must be whole warps");
    if (cfg.split != 1) return make_error(where, "split is not lowered for scans: use split 1");
    if (cfg.passes != 1 || cfg.smem_stage) {
        return make_error(where, "a scan reads its row once: passes 2 and smem_stage do not apply");
    }
    if (k.args.size() > 1) return make_error(where, "this row op takes one tensor");
    // As emit_row_kernel: derived for config_n while its vector width also divides these rows.
    int vec = dsl::widest_vec(cfg.vec, plan.config_n);
    int64_t cfg_n = plan.config_n;
    if (cfg_n < plan.n || plan.n % vec != 0) vec = dsl::widest_vec(cfg.vec, plan.n), cfg_n = plan.n;
    const int64_t blocks = (plan.rows + rpb - 1) / rpb;
    if (blocks > 0x7fffffff) return make_error(where, "too many rows for one grid");

    auto xtype = cuda_float_type(plan.x->dtype, where + ": " + plan.x->name);
    if (!xtype) return xtype.error();
    EntryParams params;
    params.add_tensor(plan.x->name, *xtype, false);
    params.add_chain(*plan.chain);
    params.add_int64("rows", plan.rows);
    params.add_int64("n", plan.n);

    const std::string flags = std::string(cfg.reverse ? "true" : "false") + ", " +
                              (cfg.exclusive ? "true" : "false");
    const auto call = [&](int v) {
        return "kforge::scan_rows<kforge::ScanCfg<" + std::to_string(cfg.threads) + ", " +
               std::to_string(rpb) + ", " + std::to_string(v) + ">, " + plan.mode + ", " + flags +
               ">(t_" + plan.x->name + ", rows, n, chain);\n";
    };
    const std::string symbol = "kforge_" + k.name;
    std::ostringstream s;
    s << "// kernel " << k.name << ": rowwise scan_rows " << plan.mode
      << (cfg.reverse ? " reverse" : "") << (cfg.exclusive ? " exclusive" : "")
      << ", configured for rows of " << cfg_n << "\n";
    s << plan.chain->definition;
    s << "extern \"C\" __global__ void __launch_bounds__(" << cfg.threads << ") " << symbol << "("
      << params.signature() << ") {\n";
    s << chain_init(*plan.chain);
    if (vec == 1) {
        s << "    " << call(1);
    } else {
        s << "    if (kforge::is_aligned<" << vec << ">(t_" << plan.x->name << ") && chain.aligned<"
          << vec << ">()) {\n        " << call(vec) << "    } else {\n        " << call(1)
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
    launch.cluster = {1, 1, 1};
    launch.smem_bytes = 0;  // cub's scan storage is static shared memory
    launch.params = params.plan_params();
    code.launches.push_back(launch);
    return code;
}

}  // namespace kforge::codegen::detail
