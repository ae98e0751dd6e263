// lower_conv_direct: a conv2d kernel with `schedule direct` (dsl/conv_direct.h) to one launch of
// kforge's direct convolution (kernels/conv_direct.cuh): x and w read in place (NCHW / KCRS),
// the chain applied to each output in registers, stored NCHW. The filter taps, strides,
// paddings, dilations and the tiling are compile-time constants of the source (a struct of
// literals, as the pool lowering's geometry); every size is a kernel parameter, and the tiling
// is chosen at the configured shape (LowerContext::config), so the correctness shapes run the
// source that is timed.
#include <sstream>

#include "codegen/chain.h"
#include "codegen/gemm_emit_common.h"
#include "codegen/kernel_entry.h"
#include "codegen/lower_conv.h"
#include "dsl/conv_direct.h"

namespace kforge::codegen {

Expected<KernelCode> lower_conv_direct(const dsl::Kernel& kernel, const LowerContext& ctx) {
    const std::string where = "kernel " + kernel.name;
    if (kernel.args.size() != 2)
        return make_error(where, "conv2d takes two operands: X[N,C,...], W[K,C,...]");
    const Op* op = find_conv_op(kernel, *ctx.problem);
    if (op == nullptr)
        return make_error(where, "no convolution of the problem reads " + kernel.args[0].name +
                                     " and " + kernel.args[1].name);
    auto shape = dsl::conv_direct_shape(*op, *ctx.problem);
    if (!shape) return make_error(where, "schedule direct " + shape.error().message);
    // the tiling at the configured shape; the grid at this one
    dsl::ConvDirectShape config = *shape;
    if (ctx.config != nullptr) {
        const Op* cop = find_conv_op(kernel, *ctx.config->problem);
        if (cop == nullptr) return make_error(where, "the configured problem has no such conv");
        auto cs = dsl::conv_direct_shape(*cop, *ctx.config->problem);
        if (!cs) return make_error(where, "schedule direct " + cs.error().message);
        config = *cs;
    }
    const dsl::GemmConfig& c = kernel.gemm;
    if (c.math != dsl::MathMode::kF32Simt)
        return make_error(where, "schedule direct multiplies in f32: math f32_simt");
    const int64_t kSmemLimit = 227 * 1024;
    auto tiling = dsl::conv_direct_tiling(config, c.tile_m, c.tile_n, c.tile_k, c.stages,
                                          kSmemLimit);
    if (!tiling) return make_error(where, tiling.error().where + ": " + tiling.error().message);
    const dsl::ConvDirectTiling& t = *tiling;
    // this shape's grid under the configured tiling
    const dsl::ConvDirectShape& g = *shape;
    auto grid = dsl::conv_direct_grid(g, t.tile_p, t.tile_q, t.tile_n);
    if (!grid) return make_error(where, grid.error().where + " needs " + grid.error().message);

    // The chain over y [N,K,(Z),(P),Q]: the dims of its first store name the space.
    const int rank = spatial_rank(op->kind);
    const dsl::ChainOp* store = first_store(kernel.chain);
    if (store == nullptr)
        return make_error(where, "the chain stores nothing; end it with a store of the output");
    if (store->tensor->dims.size() != size_t(rank) + 2)
        return make_error(where, "store " + store->tensor->name + ": the output has " +
                                     std::to_string(rank + 2) + " dims [N,K,...]");
    ChainSpace space;
    space.dims = store->tensor->dims;
    space.shape = {g.n, g.k};
    const int64_t out_ext[3] = {g.z, g.p, g.q};
    for (int i = 3 - rank; i < 3; ++i) space.shape.push_back(out_ext[i]);
    space.runtime_shape = true;
    const std::string sym = symbol_of(kernel.name);
    auto chain = emit_chain("kforge_" + kernel.name + "_chain", kernel.chain, space, std::nullopt,
                            ctx);
    if (!chain) return chain.error();

    EntryParams params;
    params.add_tensor(kernel.args[0].name, "float", false);
    params.add_tensor(kernel.args[1].name, "float", false);
    params.add_chain(*chain);
    const std::pair<const char*, int64_t> sizes[] = {
        {"batch", g.n}, {"channels", g.c}, {"in_d", g.d}, {"in_h", g.h}, {"in_w", g.w},
        {"filters", g.k}, {"out_d", g.z}, {"out_h", g.p}, {"out_w", g.q}};
    for (const auto& [name, v] : sizes) params.add_int64(name, v);
    std::vector<std::string> space_sizes = {"batch", "filters"};
    const char* out_names[3] = {"out_d", "out_h", "out_w"};
    for (int i = 3 - rank; i < 3; ++i) space_sizes.push_back(out_names[i]);

    const std::string ns = "kforge_conv_" + kernel.name;
    std::ostringstream dev;
    dev << "#include \"kernels/conv_direct.cuh\"\n#include \"kernels/chain_ops.cuh\"\n"
        << "// kernel " << kernel.name << ": direct " << to_string(op->kind)
        << (g.transposed ? " as a stride-1 convolution over the zero-inserted input" : "")
        << " (f32 FMA), "
        << t.tile_p << "x" << t.tile_q << " positions x " << t.tile_n << " filters a block, "
        << t.tile_c << " channels a step, " << t.stages << " in flight\n"
        << "namespace " << ns << " {\nstruct Geo {\n"
        << "    static constexpr int kT = " << g.t << ", kR = " << g.r << ", kS = " << g.s << ";\n"
        << "    static constexpr int kStrideD = " << g.stride[0] << ", kStrideH = " << g.stride[1]
        << ", kStrideW = " << g.stride[2] << ";\n"
        << "    static constexpr int kPadD = " << g.pad[0] << ", kPadH = " << g.pad[1]
        << ", kPadW = " << g.pad[2] << ";\n"
        << "    static constexpr int kDilD = " << g.dil[0] << ", kDilH = " << g.dil[1]
        << ", kDilW = " << g.dil[2] << ";\n"
        << "    static constexpr int kUpD = " << g.up[0] << ", kUpH = " << g.up[1]
        << ", kUpW = " << g.up[2] << ", kTransposed = " << (g.transposed ? 1 : 0)
        << ", kGroups = " << g.groups << ";\n"
        << "    static constexpr int kTileP = " << t.tile_p << ", kTileQ = " << t.tile_q
        << ", kTileN = " << t.tile_n << ", kTileC = " << t.tile_c << ", kStages = " << t.stages
        << ";\n"
        << "    static constexpr int kFK = " << t.fk << ", kFP = " << t.fp
        << ", kThreads = " << t.threads << ";\n"
        << "    static constexpr int kPatchT = " << t.patch_t << ", kPatchH = " << t.patch_h
        << ", kPatchW = " << t.patch_w << ";\n};\n}  // namespace " << ns << "\n"
        << chain->definition << "extern \"C\" __global__ void __launch_bounds__(" << t.threads
        << ") " << sym << "(" << params.signature() << ") {\n"
        << chain_init(*chain, space_sizes)
        << "    kforge::conv_direct<" << ns << "::Geo>(t_" << kernel.args[0].name << ", t_"
        << kernel.args[1].name << ",\n        kforge::ConvDirectSizes{batch, channels, in_d, "
        << "in_h, in_w, filters, out_d, out_h, out_w}, chain);\n}\n";

    KernelCode code;
    code.device_source = dev.str();
    KernelLaunch l;
    l.name = kernel.name;
    l.symbol = sym;
    l.grid = {unsigned((*grid)[0]), unsigned((*grid)[1]), unsigned((*grid)[2])};
    l.block = {unsigned(t.threads), 1, 1};
    l.smem_bytes = unsigned(t.smem_bytes);
    l.params = params.plan_params();
    code.launches.push_back(l);
    return code;
}

}  // namespace kforge::codegen
