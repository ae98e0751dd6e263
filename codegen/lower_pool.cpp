// lower_pool: a checked `pool` kernel to an extern "C" entry point that runs kforge's pooling
// template (kernels/pool.cuh) with the op's geometry baked in as a struct of compile-time literals
// and the chain (codegen/chain.h) applied to each pooled value.
//
// The op is the problem's pool op the kernel computes (the checker's rule: its op word, its
// input, the one the chain stores where several match). The index space is the op's output
// [N, C, *]; the chain's stores and operands broadcast into it by dim names. Lower spatial ranks
// are padded with leading size-1 axes, so one template serves 1-3 spatial axes.
// max_pool / avg_pool with lanes 1, where a plane and the tile count fit in int, run pool_tiles:
// a thread per tile of `rows` x `items` outputs, inputs loaded `vec` wide (the row length and
// items x stride must be multiples of vec). Otherwise pool_outputs: groups of `items` outputs
// along the last axis, `lanes` threads a group. The grid is capped at 64 (pool_tiles) or 8
// blocks per SM (the templates' grid-stride loops cover the rest).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>

#include "codegen/chain.h"
#include "codegen/kernel_entry.h"
#include "codegen/kernel_lowering.h"
#include "problem/pool.h"

namespace kforge::codegen {
namespace {

const Op* find_pool_op(const dsl::Kernel& kernel, const Problem& problem) {
    const std::string& x = kernel.args[0].name;
    const dsl::ChainOp* store = first_store(kernel.chain);
    const Op* first = nullptr;
    for (const Op& op : problem.ops) {
        if (op.kind != kernel.pool_op || op.inputs.empty() || op.inputs[0] != x) continue;
        if (store && op.output == store->tensor->name) return &op;
        if (!first) first = &op;
    }
    return first;
}

int pool_kind_code(OpKind k) {
    switch (k) {
        case OpKind::kAvgPool: return 1;
        case OpKind::kAdaptiveAvgPool: return 2;
        case OpKind::kAdaptiveMaxPool: return 3;
        default: return 0;
    }
}

std::string axis_literal(const PoolAxis& a) {
    return "kforge::PoolAxis{" + std::to_string(a.in) + "LL, " + std::to_string(a.out) + "LL, " +
           std::to_string(a.kernel) + "LL, " + std::to_string(a.stride) + "LL, " +
           std::to_string(a.padding) + "LL, " + std::to_string(a.dilation) + "LL}";
}

}  // namespace

Expected<KernelCode> lower_pool(const dsl::Kernel& kernel, const LowerContext& ctx) {
    const std::string where = "kernel " + kernel.name;
    const dsl::PoolConfig& cfg = kernel.pool;
    if (kernel.args.size() != 1) return make_error(where, "pool takes one input tensor");
    if (cfg.threads < 32 || cfg.threads > 1024 || cfg.threads % 32 != 0)
        return make_error(where, "threads must be a multiple of 32 in 32..1024");
    if (cfg.items < 1 || cfg.items > 8) return make_error(where, "items must be in 1..8");
    if (cfg.lanes < 1 || cfg.lanes > 32 || (cfg.lanes & (cfg.lanes - 1)) != 0)
        return make_error(where, "lanes must be a power of two in 1..32");
    const Op* op = find_pool_op(kernel, *ctx.problem);
    if (op == nullptr)
        return make_error(where, "no " + std::string(to_string(kernel.pool_op)) +
                                     " op of the problem reads " + kernel.args[0].name);
    const Tensor* x = ctx.problem->find_tensor(op->inputs[0]);
    const Tensor* y = ctx.problem->find_tensor(op->output);
    auto xi = ctx.tensors.find(kernel.args[0].name);
    if (!x || !y || xi == ctx.tensors.end()) return make_error(where, "unknown pool tensors");
    std::vector<PoolAxis> axes = pool_axes(*op, x->shape, y->shape);
    if (axes.empty() || axes.size() > 3) return make_error(where, "pool needs 1-3 spatial axes");
    while (axes.size() < 3) axes.insert(axes.begin(), PoolAxis{});
    auto xtype = cuda_float_type(xi->second.dtype, where);
    if (!xtype) return xtype.error();

    // The space: y [N, C, *] with the dims the problem names (dim names, or extents).
    ChainSpace space;
    space.shape = y->shape;
    for (size_t i = 0; i < y->shape.size(); ++i)
        space.dims.push_back(y->dim_names[i].empty() ? std::to_string(y->shape[i]) : y->dim_names[i]);
    auto chain = emit_chain("kforge_" + kernel.name + "_chain", kernel.chain, space, std::nullopt,
                            ctx);
    if (!chain) return chain.error();

    const int64_t planes = y->shape[0] * y->shape[1];
    const bool max_or_avg = op->kind == OpKind::kMaxPool || op->kind == OpKind::kAvgPool;
    const int64_t int_max = std::numeric_limits<int32_t>::max();
    const int64_t tiles = planes * axes[0].out * ((axes[1].out + cfg.rows - 1) / cfg.rows) *
                          ((axes[2].out + cfg.items - 1) / cfg.items);
    // tiles < 2^30: a warp's last index and the grid-stride step stay inside int
    const bool tiled = max_or_avg && cfg.lanes == 1 &&
                       axes[0].in * axes[1].in * axes[2].in <= int_max &&
                       tiles <= (int64_t{1} << 30);
    if (cfg.rows < 1 || cfg.rows > 8) return make_error(where, "rows must be in 1..8");
    if (cfg.vec != 1 && cfg.vec != 2 && cfg.vec != 4)
        return make_error(where, "vec must be 1, 2 or 4");
    if (!tiled && (cfg.rows != 1 || cfg.vec != 1))
        return make_error(where, "rows and vec need a max or avg pool with lanes 1 whose plane "
                                 "fits in 32 bits and whose tiles number under 2^30");
    auto vec_fits = [&](int v) {
        return v == 1 || (axes[2].in % v == 0 && (cfg.items * axes[2].stride) % v == 0);
    };
    // At a correctness shape (the program configured for another: ctx.config) a row may be too
    // short for the full shape's vectors: the widest that fits (the same outputs; the full
    // shape's gates run the configured kernel). At the configured shape a misfit is an error.
    int vec = cfg.vec;
    while (ctx.config != nullptr && !vec_fits(vec)) vec /= 2;
    if (!vec_fits(vec))
        return make_error(where, "vec " + std::to_string(cfg.vec) + " needs the row length (" +
                                     std::to_string(axes[2].in) + ") and items x stride (" +
                                     std::to_string(cfg.items * axes[2].stride) +
                                     ") to be multiples of it");
    const int64_t groups = tiled ? tiles
                                 : planes * axes[0].out * axes[1].out *
                                       ((axes[2].out + cfg.items - 1) / cfg.items);
    const int64_t groups_per_block = tiled ? cfg.threads : cfg.threads / cfg.lanes;
    // pool_tiles takes 40-48 registers a thread (5-6 blocks of 256 resident an SM): a grid of 8
    // blocks an SM would run as 1.3-1.6 waves, the last at a third of the SM; at 64 an SM the
    // last of ~13 waves is the tail
    const int64_t blocks_per_sm = tiled ? 64 : 8;
    const int64_t blocks = std::clamp<int64_t>((groups + groups_per_block - 1) / groups_per_block,
                                               1, blocks_per_sm * ctx.sm_count);

    EntryParams params;
    params.add_tensor(kernel.args[0].name, *xtype, false);
    params.add_chain(*chain);
    params.add_int64("planes", planes);
    const std::string symbol = "kforge_" + kernel.name;
    const std::string geom = symbol + "_pool";
    const OpAttrs& a = op->attrs;
    std::ostringstream s;
    s << "// kernel " << kernel.name << ": " << to_string(op->kind) << " " << op->json_path
      << " over " << planes << " planes\n"
      << chain->definition
      << "struct " << geom << " {\n"
      << "    static constexpr int kKind = " << pool_kind_code(op->kind) << ";\n"
      << "    static constexpr bool kIncludePad = " << (a.count_include_pad ? "true" : "false")
      << ";\n"
      << "    static constexpr int64_t kDivisor = " << a.divisor_override << "LL;\n"
      << "    static constexpr __device__ kforge::PoolAxis axis(int i) {\n"
      << "        return i == 0 ? " << axis_literal(axes[0]) << "\n"
      << "             : i == 1 ? " << axis_literal(axes[1]) << "\n"
      << "                      : " << axis_literal(axes[2]) << ";\n"
      << "    }\n};\n"
      << "extern \"C\" __global__ void __launch_bounds__(" << cfg.threads << ") " << symbol
      << "(" << params.signature() << ") {\n"
      << chain_init(*chain)
      << "    ";
    const std::string& xname = kernel.args[0].name;
    auto tiles_call = [&](int v) {
        return "pool_tiles<" + geom + ", " + std::to_string(cfg.threads) + ", " +
               std::to_string(cfg.items) + ", " + std::to_string(cfg.rows) + ", " +
               std::to_string(v) + ">(t_" + xname + ", int(planes), chain);\n";
    };
    // vector loads need x's base aligned (an arena buffer is; a view into one may not be)
    if (tiled && vec > 1)
        s << "if (kforge::is_aligned<" << vec << ">(t_" << xname << ")) {\n        kforge::"
          << tiles_call(vec) << "    } else {\n        kforge::" << tiles_call(1)
          << "    }\n";
    else if (tiled)
        s << "kforge::" << tiles_call(1);
    else
        s << "kforge::pool_outputs<" << geom << ", " << cfg.threads << ", " << cfg.items << ", "
          << cfg.lanes << ">(t_" << kernel.args[0].name << ", planes, chain);\n";
    s << "}\n";
    return one_launch("kernels/pool.cuh", s.str(), kernel.name, symbol, blocks, cfg.threads,
                      params);
}

}  // namespace kforge::codegen
