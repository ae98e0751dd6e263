// lower_attention_fmha: an `attention(Q, K, V) impl cutlass_fmha` kernel to CUTLASS's Hopper
// FMHA forward kernel (examples/88_hopper_fmha of the installed CUTLASS package, included from
// there: compile/ adds CUTLASS's examples folder to the include path) - an extern "C"
// __global__ wrapper around the kernel type FmhaBuilder makes, and an extern "C" param builder
// (codegen/host_abi.h) that fills its Params from the run-time dims, as the CUTLASS GEMMs do
// (lower_gemm.cpp), so one compile serves every shape of the problem.
//
// Where it applies is dsl/attention_fmha.h's rule (checked again here on the tensor table, which
// knows program buffers' dtypes). Q, K, V and O are packed [batch.., S|L, D]: the batch dims
// before the last fold into CUTLASS's B, the last is its H. The softmax scale is the program's
// (the kernel's own 1/sqrt(D) is overwritten in Params). ResidualFusion masks the key rows
// past L in the last key tile, so L need not be a multiple of the tile. The kernel also writes
// each row's log-sum-exp: a workspace buffer of B*H*S floats that nothing reads.
#include <string>

#include "codegen/chain.h"
#include "codegen/gemm_emit_common.h"
#include "codegen/gemm_spec.h"
#include "codegen/kernel_lowering.h"
#include "dsl/attention.h"
#include "dsl/attention_fmha.h"

namespace kforge::codegen {
namespace {

const char* schedule_type(dsl::FmhaSchedule s) {
    switch (s) {
        case dsl::FmhaSchedule::kCooperative:
            return "cutlass::gemm::KernelTmaWarpSpecializedCooperative";
        case dsl::FmhaSchedule::kPingpong: return "cutlass::gemm::KernelTmaWarpSpecializedPingpong";
        case dsl::FmhaSchedule::kTma: return "cutlass::gemm::KernelTma";
    }
    return "";
}

}  // namespace

Expected<std::string> runtime_extent(const TensorInfo& t, size_t i, const Problem& p,
                                     const std::string& where, const std::string& impl) {
    const std::string& name = i < t.dim_names.size() ? t.dim_names[i] : std::string();
    // a literal extent (`8` heads written as a number): no run-time dim
    if (name.empty() || name.find_first_not_of("0123456789") == std::string::npos)
        return std::to_string(t.shape[i]) + "LL";
    int idx = 0;
    for (const auto& [dim, value] : p.dims) {
        (void)value;
        if (dim == name) return "in->dims[" + std::to_string(idx) + "]";
        ++idx;
    }
    return make_error(where, impl + ": dim " + name + " of " + t.name +
                                 " is not a problem dim (a dim expression; use impl wmma)");
}

Status add_runtime_extent(std::string& code, const std::string& var, const TensorInfo& t,
                          size_t i, const Problem& p, const std::string& where,
                          const std::string& impl) {
    auto c = runtime_extent(t, i, p, where, impl);
    if (!c) return c.error();
    code += "    " + var + " *= " + *c + ";\n";
    return Ok{};
}

Expected<CutlassAttentionOperands> cutlass_attention_operands(const dsl::Kernel& kernel,
                                                              const LowerContext& ctx,
                                                              const std::string& impl) {
    const std::string where = "kernel " + kernel.name;
    if (kernel.args.size() != 3 && kernel.args.size() != 4)
        return make_error(where, "attention takes Q, K, V and an optional mask");
    CutlassAttentionOperands r;
    for (const dsl::TensorRef& a : kernel.args) {
        auto it = ctx.tensors.find(a.name);
        if (it == ctx.tensors.end()) return make_error(where, "unknown tensor " + a.name);
        r.args.push_back(&it->second);
    }
    for (const dsl::ChainOp& op : kernel.chain)
        if (op.kind == dsl::ChainOpKind::kStore && op.tensor) r.store = &*op.tensor;
    if (!r.store) return make_error(where, impl + ": the chain stores no output");
    auto ot = ctx.tensors.find(r.store->name);
    if (ot == ctx.tensors.end()) return make_error(where, "unknown tensor " + r.store->name);
    r.o = &ot->second;
    const TensorInfo &q = *r.args[0], &k = *r.args[1], &v = *r.args[2], &o = *r.o;
    r.rank = q.shape.size();
    const size_t rank = r.rank;
    if (rank < 2 || k.shape.size() != rank || v.shape.size() != rank || o.shape.size() != rank)
        return make_error(where, impl + ": Q, K, V and O must have one rank, 2 or more");
    for (size_t i = 0; i + 2 < rank; ++i)
        if (k.shape[i] != q.shape[i] || v.shape[i] != q.shape[i] || o.shape[i] != q.shape[i])
            return make_error(where, impl + ": Q, K, V and O must share their batch extents");
    if (k.shape[rank - 1] != q.shape[rank - 1] || v.shape[rank - 2] != k.shape[rank - 2] ||
        o.shape[rank - 2] != q.shape[rank - 2] || o.shape[rank - 1] != v.shape[rank - 1])
        return make_error(where, impl + " needs Q[..,S,E], K[..,L,E], V[..,L,F], O[..,S,F]");
    return r;
}

std::string attention_builder_head(const std::string& builder, int num_tensors,
                                   const LowerContext& ctx) {
    return "extern \"C\" int " + builder +
           "(const KforgeBuildArgs* in, KforgeBuiltLaunch* out) {\n"
           "    if (in == nullptr || out == nullptr || in->abi_version != KFORGE_HOST_ABI_VERSION ||\n"
           "        in->num_tensors != " + std::to_string(num_tensors) +
           " || in->tensors == nullptr || in->dims == nullptr ||\n"
           "        in->num_dims != " + std::to_string(ctx.problem->dims.size()) + ")\n"
           "        return KFORGE_BUILD_BAD_ARGS;\n";
}

std::string attention_builder_tail(const std::string& cluster_x, const std::string& cluster_y,
                                   const std::string& smem) {
    return "    if (out->params == nullptr || out->params_capacity < sizeof(params))\n"
           "        return KFORGE_BUILD_PARAMS_TOO_LARGE;\n"
           "    std::memcpy(out->params, &params, sizeof(params));\n"
           "    out->params_bytes = sizeof(params);\n"
           "    out->grid[0] = grid.x; out->grid[1] = grid.y; out->grid[2] = grid.z;\n"
           "    out->block[0] = block.x; out->block[1] = block.y; out->block[2] = block.z;\n"
           "    out->cluster[0] = " + cluster_x + ";\n    out->cluster[1] = " + cluster_y +
           ";\n    out->cluster[2] = 1;\n"
           "    out->smem_bytes = " + smem + ";\n"
           "    return KFORGE_BUILD_OK;\n}\n";
}

Expected<KernelCode> lower_attention_fmha(const dsl::Kernel& kernel, const LowerContext& ctx) {
    const std::string where = "kernel " + kernel.name;
    const dsl::AttentionConfig& cfg = kernel.attention;
    auto ops = cutlass_attention_operands(kernel, ctx, "cutlass_fmha");
    if (!ops) return ops.error();
    const std::vector<const TensorInfo*>& t = ops->args;
    const dsl::TensorRef* store = ops->store;
    const TensorInfo &q = *t[0], &k = *t[1], &v = *t[2], &o = *ops->o;
    const size_t rank = ops->rank;
    dsl::FmhaFacts f;
    f.q = q.dtype, f.k = k.dtype, f.v = v.dtype, f.out = o.dtype;
    f.policy = ctx.problem->policy;
    f.s = q.shape[rank - 2], f.e = q.shape[rank - 1], f.f = v.shape[rank - 1];
    f.mask = t.size() > 3;
    f.tri = cfg.tri_mask, f.tri_diagonal = cfg.tri_diagonal, f.l = k.shape[rank - 2];
    f.tri_fill = dsl::attention_tri_fill(*ctx.problem, cfg.tri_mask, cfg.tri_diagonal);
    f.scale = cfg.scale.value_or(1.0);
    f.sm90a = ctx.arch.rfind("sm_90", 0) == 0;
    if (const std::string why = dsl::fmha_misfit(cfg, f); !why.empty())
        return make_error(where, "impl cutlass_fmha: " + why);

    // the builder's dims: B (batch dims but the last), H (the last batch dim), S, L, D
    std::string dims_code;
    auto add = [&](const std::string& var, const TensorInfo& ti, size_t i) {
        return add_runtime_extent(dims_code, var, ti, i, *ctx.problem, where, "cutlass_fmha");
    };
    for (size_t i = 0; i + 2 < rank; ++i)
        if (auto st = add(i + 3 == rank ? "H" : "B", q, i); !st) return st.error();
    for (auto [var, ti, i] : {std::tuple{"S", &q, rank - 2}, {"L", &k, rank - 2}, {"D", &q, rank - 1}})
        if (auto st = add(var, *ti, i); !st) return st.error();

    const std::string ns = "kforge_fmha_" + kernel.name;
    const std::string element = cutlass_type(q.dtype);
    std::string dev;
    dev += "// kernel " + kernel.name + ": CUTLASS's Hopper FMHA (88_hopper_fmha), " + element +
           ", tile " + dsl::fmha_tile_text(cfg.fmha_m, cfg.fmha_n, cfg.fmha_d) + " " +
           std::string(dsl::to_string(cfg.fmha_schedule)) + "\n";
    dev += "#include \"88_hopper_fmha/collective/fmha_fusion.hpp\"\n"
           "#include \"88_hopper_fmha/kernel/fmha_kernel_builder.hpp\"\n";
    dev += "namespace " + ns + " {\nusing namespace cute;\n"
           "using Element = " + element + ";\n"
           "using RowStride = cute::tuple<int, _1, cute::tuple<int, int>>;  // rows, D, (B, H)\n"
           "using TileShape = Shape<_" + std::to_string(cfg.fmha_m) + ", _" +
           std::to_string(cfg.fmha_n) + ", _" + std::to_string(cfg.fmha_d) + ">;\n"
           "using Kernel = typename cutlass::fmha::kernel::FmhaBuilder<\n"
           "    Element, float, float, TileShape, RowStride, RowStride, RowStride,\n"
           "    cutlass::fmha::collective::" +
           (cfg.tri_mask != TriMask::kNone ? "CausalFusion" : "ResidualFusion") + ", " +
           schedule_type(cfg.fmha_schedule) +
           ">::Kernel;\n}  // namespace " + ns + "\n\n";
    const std::string symbol = symbol_of(kernel.name);
    CutlassEntry entry = cutlass_entry(
        ns, symbol, dev,
        "extern \"C\" __global__ void\n__launch_bounds__(" + ns + "::Kernel::MaxThreadsPerBlock, " +
            ns + "::Kernel::MinBlocksPerMultiprocessor)\n" + symbol +
            "(CUTLASS_GRID_CONSTANT typename " + ns + "::Kernel::Params const params) {\n"
            "    extern __shared__ char " + ns + "_smem[];\n    " + ns +
            "::Kernel op;\n    op(params, " + ns + "_smem);\n}\n");

    const double scale = f.scale;
    const std::string builder = builder_symbol_of(kernel.name);
    std::string host;
    host += attention_builder_head(builder, 5, ctx) +
            "    using namespace cute;\n    using namespace " + ns + ";\n"
            "    int64_t B = 1, H = 1, S = 1, L = 1, D = 1;\n" + dims_code +
            "    const int64_t kMax = 0x7fffffff;\n"
            "    if (B < 1 || H < 1 || S < 1 || L < 1 || D < 1 || B > 65535 || H > 65535 ||\n"
            "        B * H * S * D > kMax || B * H * L * D > kMax)\n"
            "        return KFORGE_BUILD_BAD_ARGS;  // int strides, grid y and z\n"
            "    void* const* tensors = in->tensors;  // q, k, v, o, lse\n"
            "    RowStride sq = make_stride(int(D), _1{}, make_stride(int(H * S * D), int(S * D)));\n"
            "    RowStride skv = make_stride(int(D), _1{}, make_stride(int(H * L * D), int(L * D)));\n"
            "    typename Kernel::Arguments args{\n"
            "        {int(B), int(H), int(S), int(L), int(D)},\n"
            "        {static_cast<const Element*>(tensors[0]), sq,\n"
            "         static_cast<const Element*>(tensors[1]), skv,\n"
            "         static_cast<const Element*>(tensors[2]), skv},\n"
            "        {static_cast<Element*>(tensors[3]), sq, static_cast<float*>(tensors[4]),\n"
            "         make_stride(_1{}, make_stride(int(H * S), int(S)))},\n"
            "        {}};\n"
            "    args.hw_info.device_id = in->device_id;\n"
            "    args.hw_info.sm_count = in->sm_count;\n"
            "    if (!Kernel::can_implement(args)) return KFORGE_BUILD_CANNOT_IMPLEMENT;\n"
            "    out->workspace_bytes = 0;\n"
            "    typename Kernel::Params params = Kernel::to_underlying_arguments(args, nullptr);\n"
            "    // the program's scale, not the kernel's 1/sqrt(D)\n"
            "    params.mainloop.scale_softmax = " + cuda_float_literal(scale) + ";\n"
            "    params.mainloop.scale_softmax_log2 = " + cuda_float_literal(scale) +
            " * 1.4426950408889634f;\n"
            "    dim3 grid = Kernel::get_grid_shape(params);\n"
            "    dim3 block = Kernel::get_block_shape();\n" +
            attention_builder_tail("size<0>(Kernel::ClusterShape{})", "size<1>(Kernel::ClusterShape{})",
                                   "Kernel::SharedStorageSize");

    KernelCode code;
    code.device_source = std::move(dev);
    code.entry = std::move(entry);
    code.host_source = std::move(host);
    BufferDecl lse;
    lse.name = kernel.name + "_lse";
    lse.dtype = DType::kF32;
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < rank; ++i) rows *= q.shape[i];
    lse.shape = {rows};
    lse.workspace = true;
    KernelLaunch launch;
    launch.name = kernel.name;
    launch.symbol = symbol;
    launch.params = {KernelParam{ParamKind::kParamBlob, "", 0, 0.0}};
    launch.param_builder = builder;
    launch.builder_tensors = {kernel.args[0].name, kernel.args[1].name, kernel.args[2].name,
                              store->name, lse.name};
    code.launches.push_back(launch);
    code.buffers.push_back(lse);
    return code;
}

}  // namespace kforge::codegen
