// Emission of column reductions (sum/mean/max/min over a leading dim; kernels/reduce_col.cuh).
//
// x is viewed as [outer, R, inner]. A block is TX x TY threads (TX along inner, a power of two
// dividing `threads`, TY = threads / TX along R). The R dim is cut into S slices so that the
// grid has about 4 blocks per SM (S = `split` when the program sets split > 1). With S > 1 the
// slices write f32 partials to a workspace `<kernel>_partials` [S, outer * inner] and a second
// launch `kforge_<kernel>_finish` combines them in order (deterministic, no atomics).
#include <algorithm>
#include <sstream>

#include "codegen/kernel_entry.h"
#include "codegen/lower_rowwise_detail.h"
#include "dsl/check.h"

namespace kforge::codegen::detail {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int kFinishThreads = 256;

}  // namespace

Expected<KernelCode> emit_column_reduce(const RowwisePlan& plan, const LowerContext& ctx) {
    const dsl::Kernel& k = *plan.kernel;
    const dsl::RowwiseConfig& cfg = k.rowwise;
    const std::string where = "kernel " + k.name;
    if (k.args.size() > 1) return make_error(where, "a reduction takes one tensor");
    if (cfg.split < 1) return make_error(where, "split must be >= 1");
    auto xtype = cuda_float_type(plan.x->dtype, where + ": " + plan.x->name);
    if (!xtype) return xtype.error();

    const int vec = dsl::widest_vec(cfg.vec, plan.inner);
    const int64_t col_vecs = ceil_div(plan.inner, vec);
    int tx = 1;
    while (tx * 2 <= cfg.threads && tx < col_vecs && cfg.threads % (tx * 2) == 0) tx *= 2;
    const int ty = cfg.threads / tx;
    const int64_t blocks_x = ceil_div(plan.inner, int64_t(tx) * vec) * plan.outer;
    if (blocks_x > 0x7fffffff) return make_error(where, "too many columns for one grid");
    int64_t slices = cfg.split;
    if (slices == 1) slices = std::max<int64_t>(1, ceil_div(4 * int64_t(ctx.sm_count), blocks_x));
    slices = std::clamp<int64_t>(slices, 1, std::min<int64_t>(ceil_div(plan.n, ty), 65535));
    const int64_t r_chunk = ceil_div(plan.n, slices);
    slices = ceil_div(plan.n, r_chunk);
    const std::string ws = k.name + "_partials";
    const int64_t total = plan.outer * plan.inner;

    EntryParams params;
    params.add_tensor(plan.x->name, *xtype, false);
    if (slices > 1) params.add_workspace(ws);
    else params.add_chain(*plan.chain);
    params.add_int64("outer", plan.outer);
    params.add_int64("r_len", plan.n);
    params.add_int64("inner", plan.inner);
    params.add_int64("r_chunk", r_chunk);

    const std::string symbol = "kforge_" + k.name;
    const std::string wsarg = slices > 1 ? "w_" + ws : "(float*)nullptr";
    std::ostringstream s;
    s << "// kernel " << k.name << ": column reduction " << plan.mode << " over [" << plan.outer
      << ", " << plan.n << ", " << plan.inner << "] dim 1, " << slices << " slice(s)\n";
    s << plan.chain->definition;
    const auto call = [&](int v, const std::string& chain) {
        return "kforge::reduce_cols<" + std::to_string(tx) + ", " + std::to_string(ty) + ", " +
               std::to_string(v) + ", " + plan.mode + ">(t_" + plan.x->name + ", " + wsarg +
               ", outer, r_len, inner, r_chunk, " + chain + ");\n";
    };
    s << "extern \"C\" __global__ void __launch_bounds__(" << cfg.threads << ") " << symbol << "("
      << params.signature() << ") {\n";
    std::string chain_arg = "chain";
    if (slices > 1) {
        // The first launch only writes partials: the chain is never called.
        chain_arg = plan.chain->type_name + "{}";
    } else {
        s << chain_init(*plan.chain);
    }
    if (vec == 1) {
        s << "    " << call(1, chain_arg);
    } else {
        std::string cond = "kforge::is_aligned<" + std::to_string(vec) + ">(t_" + plan.x->name + ")";
        if (slices == 1) cond += " && chain.aligned<" + std::to_string(vec) + ">()";
        s << "    if (" << cond << ") {\n        " << call(vec, chain_arg)
          << "    } else {\n        " << call(1, chain_arg) << "    }\n";
    }
    s << "}\n";

    KernelCode code;
    KernelLaunch first;
    first.name = k.name;
    first.symbol = symbol;
    first.grid = {unsigned(blocks_x), unsigned(slices), 1};
    first.block = {unsigned(cfg.threads), 1, 1};
    first.params = params.plan_params();
    code.launches.push_back(first);

    if (slices > 1) {
        EntryParams fin;
        fin.add_workspace(ws);
        fin.add_chain(*plan.chain);
        fin.add_int64("slices", slices);
        fin.add_int64("total", total);
        fin.add_int64("r_len", plan.n);
        const std::string fsym = symbol + "_finish";
        s << "extern \"C\" __global__ void __launch_bounds__(" << kFinishThreads << ") " << fsym
          << "(" << fin.signature() << ") {\n"
          << chain_init(*plan.chain);
        const auto fcall = [&](int v) {
            return "kforge::reduce_col_finish<" + std::to_string(v) + ", " + plan.mode + ">(w_" +
                   ws + ", slices, total, r_len, chain);\n";
        };
        if (vec == 1) {
            s << "    " << fcall(1);
        } else {
            s << "    if (chain.aligned<" << vec << ">()) {\n        " << fcall(vec)
              << "    } else {\n        " << fcall(1) << "    }\n";
        }
        s << "}\n";
        KernelLaunch second;
        second.name = k.name;
        second.symbol = fsym;
        // 32 column vectors per block; sized for the scalar fallback (vec 1), the vector path
        // leaves the extra blocks idle.
        second.grid = {unsigned(ceil_div(total, 32)), 1, 1};
        second.block = {unsigned(kFinishThreads), 1, 1};
        second.params = fin.plan_params();
        code.launches.push_back(second);
        BufferDecl buf;
        buf.name = ws;
        buf.dtype = DType::kF32;
        buf.shape = {slices, total};
        buf.workspace = true;
        code.buffers.push_back(buf);
    }
    code.device_source = "#include \"" + plan.header + "\"\n#include \"kernels/chain_ops.cuh\"\n" +
                         s.str();
    return code;
}

}  // namespace kforge::codegen::detail
