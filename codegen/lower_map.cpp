// lower_map: a checked `map` kernel to an extern "C" entry point that runs kforge's element-wise
// template (kernels/map.cuh) over its chain (codegen/chain.h).
//
// The index space is the shape of the chain's first store; the map's input and every operand
// broadcast into it by dim names. The vector width is the largest of 8, 4, 2, 1 not above `vec`
// that divides the innermost dim; a pointer that is not vector-aligned at run time falls back to
// scalar accesses. Without grid_stride the grid covers the space in tiles of
// block * vec * items; with it the grid is capped at 4 blocks per SM and loops.
#include <algorithm>
#include <sstream>

#include "codegen/chain.h"
#include "codegen/kernel_entry.h"
#include "codegen/kernel_lowering.h"
#include "dsl/check.h"

namespace kforge::codegen {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Expected<KernelCode> lower_map(const dsl::Kernel& kernel, const LowerContext& ctx) {
    const std::string where = "kernel " + kernel.name;
    const dsl::MapConfig& cfg = kernel.map;
    if (kernel.args.size() != 1) return make_error(where, "map takes one input tensor");
    if (cfg.block < 32 || cfg.block > 1024 || cfg.block % 32 != 0) {
        return make_error(where, "block must be a multiple of 32 in 32..1024");
    }
    if (cfg.items_per_thread < 1 || cfg.items_per_thread > 16) {
        return make_error(where, "items must be in 1..16");
    }
    // The space: the first store's tensor, with the dims the program writes for it.
    const dsl::ChainOp* store = first_store(kernel.chain);
    if (store == nullptr) {
        return make_error(where, "the chain stores nothing; end it with store Y[..]");
    }
    auto it = ctx.tensors.find(store->tensor->name);
    if (it == ctx.tensors.end()) {
        return make_error(where, "unknown tensor " + store->tensor->name);
    }
    ChainSpace space;
    space.dims = store->tensor->dims;
    space.shape = it->second.shape;
    if (space.dims.size() != space.shape.size()) {
        return make_error(where, "store " + it->first + ": " + std::to_string(space.shape.size()) +
                                     " dims in the problem");
    }
    const int64_t numel = space.numel();
    const int64_t innermost = space.shape.empty() ? 1 : space.shape.back();

    auto chain = emit_chain("kforge_" + kernel.name + "_chain", kernel.chain, space,
                            kernel.args[0], ctx);
    if (!chain) return chain.error();

    const int vec = dsl::widest_vec(cfg.vec, innermost);
    const int64_t tile = int64_t(cfg.block) * vec * cfg.items_per_thread;
    const int64_t tile_scalar = int64_t(cfg.block) * cfg.items_per_thread;
    int64_t blocks = ceil_div(numel, tile_scalar);  // enough for the scalar fallback too
    if (cfg.grid_stride) blocks = std::min<int64_t>(ceil_div(numel, tile), 4 * ctx.sm_count);
    if (blocks > 0x7fffffff) return make_error(where, "too many elements for one grid");

    EntryParams params;
    params.add_chain(*chain);
    params.add_int64("numel", numel);
    const std::string symbol = "kforge_" + kernel.name;
    const auto call = [&](int v) {
        return "kforge::map_elements<" + std::to_string(cfg.block) + ", " + std::to_string(v) +
               ", " + std::to_string(cfg.items_per_thread) + ", " +
               (cfg.grid_stride ? "true" : "false") + ">(numel, chain);\n";
    };
    std::ostringstream s;
    s << "// kernel " << kernel.name << ": map over " << numel << " elements\n";
    s << chain->definition;
    s << "extern \"C\" __global__ void __launch_bounds__(" << cfg.block << ") " << symbol << "("
      << params.signature() << ") {\n"
      << chain_init(*chain) << vec_dispatch(vec, call) << "}\n";
    return one_launch("kernels/map.cuh", s.str(), kernel.name, symbol,
                      std::max<int64_t>(blocks, 1), cfg.block, params);
}

}  // namespace kforge::codegen
