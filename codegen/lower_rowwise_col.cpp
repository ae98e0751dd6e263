// Emission of column reductions (sum/mean/max/min over a leading dim; kernels/reduce_col.cuh).
//
// x is viewed as [outer, R, inner]. A block is TX x TY threads (TX along inner, a power of two
// dividing `threads`, TY = threads / TX along R). The R dim is cut into S slices so that the
// grid has about 4 blocks per SM (S = `split` when the program sets split > 1). With S > 1 the
// slices write f32 partials to a workspace `<kernel>_partials` [S, outer * inner] and a second
// launch `kforge_<kernel>_finish` combines them in order (deterministic, no atomics).
#include <algorithm>
#include <numeric>
#include <sstream>

#include "codegen/kernel_entry.h"
#include "codegen/lower_rowwise_detail.h"
#include "dsl/check.h"

namespace kforge::codegen::detail {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

constexpr int kFinishThreads = 256;

// The first launch of a reduction over [outer, R, inner] (column) or a set of dims, grid
// (blocks, slices); with slices > 1 it writes f32 partials to `<kernel>_partials`
// [slices, outputs] and a second launch `<symbol>_finish` (reduce_col_finish: the slices
// combined in order, mean divided by r_len, the chain at vectors of `vec` where it is aligned)
// applies the chain.
void add_launches(KernelCode& code, std::ostringstream& s, const RowwisePlan& plan,
                  const std::string& symbol, const EntryParams& params, int64_t blocks,
                  int64_t slices, int64_t outputs, int64_t r_len, int vec) {
    const dsl::Kernel& k = *plan.kernel;
    KernelLaunch first;
    first.name = k.name;
    first.symbol = symbol;
    first.grid = {unsigned(blocks), unsigned(slices), 1};
    first.block = {unsigned(k.rowwise.threads), 1, 1};
    first.params = params.plan_params();
    code.launches.push_back(first);
    if (slices == 1) return;
    const std::string ws = k.name + "_partials";
    EntryParams fin;
    fin.add_workspace(ws);
    fin.add_chain(*plan.chain);
    fin.add_int64("slices", slices);
    fin.add_int64("total", outputs);
    fin.add_int64("r_len", r_len);
    const std::string fsym = symbol + "_finish";
    s << "extern \"C\" __global__ void __launch_bounds__(" << kFinishThreads << ") " << fsym
      << "(" << fin.signature() << ") {\n"
      << chain_init(*plan.chain);
    s << vec_dispatch(vec, [&](int v) {
        return "kforge::reduce_col_finish<" + std::to_string(v) + ", " + plan.mode + ">(w_" + ws +
               ", slices, total, r_len, chain);\n";
    }) << "}\n";
    KernelLaunch second;
    second.name = k.name;
    second.symbol = fsym;
    // 32 column vectors per block; sized for the scalar fallback (vec 1), the vector path
    // leaves the extra blocks idle.
    second.grid = {unsigned(ceil_div(outputs, 32)), 1, 1};
    second.block = {unsigned(kFinishThreads), 1, 1};
    second.params = fin.plan_params();
    code.launches.push_back(second);
    BufferDecl buf;
    buf.name = ws;
    buf.dtype = DType::kF32;
    buf.shape = {slices, outputs};
    buf.workspace = true;
    code.buffers.push_back(buf);
}

// The checks a column or set reduction's kernel passes first, and its input's CUDA type.
Expected<std::string> reduction_input_type(const RowwisePlan& plan) {
    const dsl::Kernel& k = *plan.kernel;
    const std::string where = "kernel " + k.name;
    if (k.args.size() > 1) return make_error(where, "a reduction takes one tensor");
    if (k.rowwise.split < 1) return make_error(where, "split must be >= 1");
    return cuda_float_type(plan.x->dtype, where + ": " + plan.x->name);
}

}  // namespace

Expected<KernelCode> emit_column_reduce(const RowwisePlan& plan, const LowerContext& ctx) {
    const dsl::Kernel& k = *plan.kernel;
    const dsl::RowwiseConfig& cfg = k.rowwise;
    auto xtype = reduction_input_type(plan);
    if (!xtype) return xtype.error();

    const int vec = dsl::widest_vec(cfg.vec, plan.inner);
    const int64_t col_vecs = ceil_div(plan.inner, vec);
    int tx = 1;
    while (tx * 2 <= cfg.threads && tx < col_vecs && cfg.threads % (tx * 2) == 0) tx *= 2;
    const int ty = cfg.threads / tx;
    const int64_t blocks_x = ceil_div(plan.inner, int64_t(tx) * vec) * plan.outer;
    if (blocks_x > 0x7fffffff) return make_error("kernel " + k.name, "too many columns for one grid");
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
    add_launches(code, s, plan, symbol, params, blocks_x, slices, total, plan.n, vec);
    code.device_source = "#include \"" + plan.header + "\"\n#include \"kernels/chain_ops.cuh\"\n" +
                         s.str();
    return code;
}

Expected<KernelCode> emit_set_reduce(const RowwisePlan& plan, const LowerContext& ctx) {
    const dsl::Kernel& k = *plan.kernel;
    const dsl::RowwiseConfig& cfg = k.rowwise;
    auto xtype = reduction_input_type(plan);
    if (!xtype) return xtype.error();
    const std::vector<int64_t>& shape = plan.x->shape;
    const auto reduced = [&](size_t d) {
        return std::binary_search(plan.set_axes.begin(), plan.set_axes.end(), d);
    };

    // The dims collapsed into groups of one kind, innermost first (extent-1 dims add nothing).
    struct Group {
        bool reduced;
        int64_t extent, stride;
    };
    std::vector<Group> groups;
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
        if (shape[d] == 1) continue;
        if (!groups.empty() && groups.back().reduced == reduced(d)) {
            groups.back().extent *= shape[d];
        } else {
            groups.push_back({reduced(d), shape[d], stride});
        }
        stride *= shape[d];
    }
    int64_t run = 1;
    if (!groups.empty() && groups.front().reduced) {
        run = groups.front().extent;
        groups.erase(groups.begin());
    }
    std::vector<Group> kept, outer_reduced;  // outermost first
    for (auto it = groups.rbegin(); it != groups.rend(); ++it)
        (it->reduced ? outer_reduced : kept).push_back(*it);
    constexpr size_t kMaxGroups = 4;
    if (kept.size() > kMaxGroups || outer_reduced.size() > kMaxGroups) {
        return make_error("kernel " + k.name, "over " + k.over + ": the kept and reduced dims of " +
                                     plan.x->name + " alternate more than " +
                                     std::to_string(kMaxGroups) + " times");
    }
    if (kept.empty()) kept.push_back({false, 1, 0});
    if (outer_reduced.empty()) outer_reduced.push_back({true, 1, 0});
    int64_t outputs = 1, segments = 1;
    for (const Group& g : kept) outputs *= g.extent;
    for (const Group& g : outer_reduced) segments *= g.extent;
    const int64_t total = segments * run;
    if (outputs > 0x7fffffff) return make_error("kernel " + k.name, "too many outputs for one grid");

    // Vectors along the run, within the innermost dim (a prologue's operands broadcast there).
    const int vec = run > 1 ? dsl::widest_vec(cfg.vec, std::gcd(run, shape.back())) : 1;
    // Slices fill the SMs (16 blocks an SM: two waves of 8 resident 256-thread blocks, each
    // thread 4 loads in flight) where each output has many elements; up to kSetOneBlockElements a
    // block per output reads them in a few microseconds, and a second (finish) launch would cost
    // more than the idle SMs (ResNet-18's statistics: 64 channels of 2 x 56 x 56). A slice holds
    // at least 4 vectors a thread.
    int64_t slices = cfg.split;
    if (slices == 1 && total > kSetOneBlockElements)
        slices = std::max<int64_t>(1, ceil_div(16 * int64_t(ctx.sm_count), outputs));
    slices = std::clamp<int64_t>(
        slices, 1, std::min<int64_t>(65535, ceil_div(total, int64_t(cfg.threads) * vec * 4)));
    const int64_t chunk = ceil_div(ceil_div(total, slices), vec) * vec;
    slices = ceil_div(total, chunk);
    const std::string ws = k.name + "_partials";

    EntryParams params;
    params.add_tensor(plan.x->name, *xtype, false);
    if (slices > 1) params.add_workspace(ws);
    else params.add_chain(*plan.chain);
    if (plan.pre) params.add_chain(*plan.pre);
    params.add_int64("run", run);
    params.add_int64("total", total);
    params.add_int64("chunk", chunk);
    params.add_int64("outputs", outputs);
    const auto add_groups = [&](const std::vector<Group>& gs, const std::string& p) {
        for (size_t i = 0; i < gs.size(); ++i) params.add_int64(p + "ext" + std::to_string(i), gs[i].extent);
        for (size_t i = 0; i < gs.size(); ++i) params.add_int64(p + "str" + std::to_string(i), gs[i].stride);
    };
    add_groups(kept, "k");
    add_groups(outer_reduced, "r");
    const auto array = [](const std::string& name, const std::string& p, size_t n) {
        std::string s = "    const int64_t " + name + "[" + std::to_string(n) + "] = {";
        for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + p + std::to_string(i);
        return s + "};\n";
    };

    const std::string symbol = "kforge_" + k.name;
    const std::string wsarg = slices > 1 ? "w_" + ws : "(float*)nullptr";
    std::ostringstream s;
    s << "// kernel " << k.name << ": " << plan.mode << " over " << k.over << " of "
      << plan.x->name << ": " << outputs << " output(s) x " << segments << " segment(s) of "
      << run << ", " << slices << " slice(s)\n";
    s << plan.chain->definition;
    if (plan.pre) s << plan.pre->definition;
    s << "extern \"C\" __global__ void __launch_bounds__(" << cfg.threads << ") " << symbol << "("
      << params.signature() << ") {\n";
    // The first launch of several slices only writes partials: the chain is never called.
    std::string chain_arg = plan.chain->type_name + "{}";
    if (slices == 1) {
        s << chain_init(*plan.chain);
        chain_arg = "chain";
    }
    if (plan.pre) s << chain_init(*plan.pre, {}, "pre");
    s << array("kext", "kext", kept.size()) << array("kstr", "kstr", kept.size())
      << array("rext", "rext", outer_reduced.size()) << array("rstr", "rstr", outer_reduced.size());
    const auto call = [&](int v) {
        return "kforge::reduce_set<" + std::to_string(cfg.threads) + ", " + std::to_string(v) +
               ", " + std::to_string(kept.size()) + ", " + std::to_string(outer_reduced.size()) +
               ", " + plan.mode + ">(t_" + plan.x->name + ", " + wsarg +
               ", kext, kstr, rext, rstr, run, total, chunk, outputs, " + chain_arg +
               (plan.pre ? ", pre" : "") + ");\n";
    };
    if (vec == 1) {
        s << "    " << call(1);
    } else {
        std::string cond = "kforge::is_aligned<" + std::to_string(vec) + ">(t_" + plan.x->name + ")";
        if (plan.pre) cond += " && pre.aligned<" + std::to_string(vec) + ">()";
        s << "    if (" << cond << ") {\n        " << call(vec) << "    } else {\n        "
          << call(1) << "    }\n";
    }
    s << "}\n";

    KernelCode code;
    // the chain runs at one output a time (outputs need not be a multiple of a vector)
    add_launches(code, s, plan, symbol, params, outputs, slices, outputs, total, 1);
    code.device_source = "#include \"kernels/reduce_col.cuh\"\n#include \"kernels/reduce_set.cuh\"\n"
                         "#include \"kernels/chain_ops.cuh\"\n" + s.str();
    return code;
}

}  // namespace kforge::codegen::detail
