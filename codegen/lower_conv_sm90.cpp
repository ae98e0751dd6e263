// The Hopper convolution form of lower_conv2d (codegen/lower_conv.h, `schedule tma_ws`): steps 1
// to 3 as CUTLASS 3.x's sm90 implicit-GEMM fprop (TMA im2col loads, wgmma, one warp-specialized
// consumer warp group) in place of the sm80 multistage kernel.
//
// CUTLASS has no sm90 3xTF32 convolution, so 3xTF32 runs as one tf32 convolution over three
// copies of every channel: the staging writes x' = [hi(x) | lo(x) | hi(x)] and
// w' = [hi(w) | hi(w) | lo(w)] along the channels (hi = x rounded to tf32, lo = the rest rounded:
// kernels/stage_operand.cuh), so that the sum over the channels of x' w' is
// hi hi + lo hi + hi lo, 3xTF32's three products. wgmma's accumulator drops low bits of each
// addend: the staged sm90 3xTF32 gemm unpromoted lost 4.1e-5 (median relative) at K' = 12288 on
// the H200 (lower_gemm.cpp). The convolution collective has no promotion, so the channels run in
// chunks of at most kConvSm90ChunkK products per output (kernels/conv_layout.cuh
// conv_split_of): chunk j is its own packed tensor [N, H, W, 3 cc] (and [Kp, R, S, 3 cc]), one
// launch each, the first storing its sum and each later one adding it in f32 through the
// epilogue's source (beta 1, C = D): the builder's parts (codegen/host_abi.h), chunk-major
// within each part of the batch. On positive data (KernelBench's torch.rand) the relative error
// grows with the chunk's length, so 2400 products predict ~8e-6, under the fp32_strict profile's
// 4e-5 (eval/gates.h).
#include <sstream>

#include "codegen/gemm_emit_common.h"
#include "codegen/gemm_spec.h"
#include "codegen/kernel_entry.h"
#include "codegen/lower_conv.h"

namespace kforge::codegen {
namespace {

Error unsupported(const dsl::Kernel& k, const std::string& what) {
    return make_error(k.name, "not supported by the conv2d lowering: " + what);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int conv_sm90_parts(dsl::MathMode math) { return math == dsl::MathMode::kTf32x3 ? 3 : 1; }

ConvSplit conv_sm90_split(int64_t channels, int64_t taps, dsl::MathMode math, DType operand) {
    return conv_split_of(channels, taps, conv_sm90_parts(math), conv_channel_multiple(operand),
                         kConvSm90ChunkK);
}

Status check_conv_sm90(const dsl::Kernel& kernel, const ConvGeometry& g) {
    const dsl::GemmConfig& c = kernel.gemm;
    if (g.form != ConvForm::kFprop || g.w_group_filters > 0)
        return unsupported(kernel, "schedule tma_ws for a grouped or transposed convolution "
                                   "(CUTLASS's sm90 convolution here is the dense fprop; use "
                                   "schedule multistage)");
    if (g.three_d)
        return unsupported(kernel, "schedule tma_ws for a conv3d (use schedule multistage)");
    if (g.math == dsl::MathMode::kF32Simt)
        return unsupported(kernel, "math f32_simt with schedule tma_ws (wgmma: tf32x3, tf32, f16 "
                                   "or bf16)");
    if (c.iterator != dsl::ConvIterator::kAuto)
        return unsupported(kernel, "an iterator with schedule tma_ws (TMA im2col walks the "
                                   "filter; the iterator knob is the sm80 kernel's)");
    if (c.tile_m != 64 && c.tile_m != 128)
        return unsupported(kernel, "tile M " + std::to_string(c.tile_m) +
                                       " with schedule tma_ws (one consumer warp group: 64 or 128)");
    const int max_n = c.tile_m == 128 ? 128 : 256;  // the accumulators of one warp group
    if (c.tile_n < 16 || c.tile_n > max_n || c.tile_n % 16 != 0)
        return unsupported(kernel, "tile N " + std::to_string(c.tile_n) + " with tile M " +
                                       std::to_string(c.tile_m) + " and schedule tma_ws (16.." +
                                       std::to_string(max_n) + ", a multiple of 16)");
    if (c.tile_k * dtype_bytes(g.staged) != 128)
        return unsupported(kernel, "tile K " + std::to_string(c.tile_k) + " with schedule tma_ws (" +
                                       std::to_string(128 / dtype_bytes(g.staged)) + " " +
                                       std::string(to_string(g.staged)) +
                                       " elements: one 128-byte swizzle row)");
    if (conv_sm90_split(g.c, g.r * g.s, g.math, g.staged).cc == 0)
        return unsupported(kernel, "schedule tma_ws with math tf32x3 for a filter of " +
                                       std::to_string(g.r * g.s) + " positions (a chunk of " +
                                       std::to_string(conv_channel_multiple(g.staged)) +
                                       " channels passes " + std::to_string(kConvSm90ChunkK) +
                                       " products per output)");
    return Ok{};
}

Status emit_conv_sm90(const dsl::Kernel& kernel, const LowerContext& ctx, const ConvGeometry& g,
                      const ConvSm90Buffers& names, std::ostringstream& dev, KernelCode& code) {
    if (auto st = check_conv_sm90(kernel, g); !st) return st;
    const TensorInfo& x = ctx.tensors.at(kernel.args[0].name);
    const TensorInfo& w = ctx.tensors.at(kernel.args[1].name);
    const dsl::GemmConfig& c = kernel.gemm;
    const int parts = conv_sm90_parts(g.math);
    const int multiple = conv_channel_multiple(g.staged);
    const ConvSplit sp = conv_sm90_split(g.c, g.r * g.s, g.math, g.staged);
    const int64_t row = parts * sp.cc, rs = g.r * g.s, hw = g.h * g.w;
    const std::string staged_ctype = *cuda_float_type(g.staged, "");
    const bool round = g.staged == DType::kF32;  // tf32 operands: hi (and lo) parts
    const std::string ns = "kforge_conv_" + kernel.name;
    const std::string sym = symbol_of(kernel.name);
    dev << "#include \"cutlass/kernel_hardware_info.hpp\"\n"
           "#include \"cute/tensor.hpp\"\n"
           "#include \"cutlass/conv/convnd_problem_shape.hpp\"\n"
           "#include \"cutlass/conv/dispatch_policy.hpp\"\n"
           "#include \"cutlass/conv/collective/collective_builder.hpp\"\n"
           "#include \"cutlass/epilogue/collective/collective_builder.hpp\"\n"
           "#include \"cutlass/conv/kernel/conv_universal.hpp\"\n"
           "#include \"kernels/conv_layout.cuh\"\n"
           "#include \"kernels/chain_ops.cuh\"\n";

    // 1. and 2.: x [N,C,H,W] -> [chunks, N, H, W, parts*cc]; w [K,C,R,S] -> [chunks, Kp, R, S,
    // parts*cc]. x' carries lo in part 1, w' in part 2 (3xTF32: hi hi + lo hi + hi lo).
    auto staging = [&](const char* role, const TensorInfo& src, const std::string& buffer,
                       int64_t positions, int64_t images, int64_t images_valid, unsigned lo_mask,
                       std::vector<int64_t> shape) {
        EntryParams params;
        params.add_tensor(src.name, *cuda_float_type(src.dtype, ""), false);
        params.add_workspace(buffer, staged_ctype);
        params.add_int64("channels", g.c);
        params.add_int64("positions", positions);
        params.add_int64("chunk_channels", sp.cc);
        params.add_int64("chunks", sp.chunks);
        params.add_int64("images_valid", images_valid);
        const std::string symbol = sym + "_conv_" + role;
        dev << "// kernel " << kernel.name << ": " << src.name << " staged channels last into "
            << buffer << " in chunks of channels"
            << (parts == 3 ? ", each channel as tf32 hi/lo parts" : "") << "\n"
            << "extern \"C\" __global__ void __launch_bounds__(" << kConvThreads << ") "
            << symbol << "(" << params.signature() << ") {\n"
            << "    kforge::conv_channels_last_split<" << (round ? "true" : "false") << ", "
            << lo_mask << "u>(t_" << src.name << ", w_" << buffer
            << ", channels, positions,\n        kforge::ConvSplit{chunk_channels, chunks, "
            << parts << ", int64_t(gridDim.z)}, images_valid);\n}\n";
        add_conv_layout_launch(code, kernel, symbol,
                               {unsigned(ceil_div(positions, kConvTile)),
                                unsigned(ceil_div(sp.chunks * sp.cc, kConvTile)), unsigned(images)},
                               params.plan_params(), buffer, g.staged, std::move(shape));
    };
    if (ceil_div(sp.chunks * sp.cc, kConvTile) > 65535 || g.n > 65535 || g.kp > 65535)
        return unsupported(kernel, "a staging grid past 65535 blocks in y or z");
    staging("x", x, names.x, hw, g.n, g.n, parts == 3 ? 2u : 0u,
            {sp.chunks, g.n, g.h, g.w, row});
    staging("w", w, names.w, rs, g.kp, g.k, parts == 3 ? 4u : 0u,
            {sp.chunks, g.kp, g.r, g.s, row});

    // 3.: CUTLASS 3.x's sm90 implicit-GEMM fprop into y [N,P,Q,Kp] f32, chunk by chunk.
    const std::string element = g.staged == DType::kF32 ? "cutlass::tfloat32_t"
                                                         : cutlass_type(g.staged);
    dev << "// kernel " << kernel.name << ": CUTLASS 3.x sm90 implicit-GEMM conv2d fprop (TMA "
        << "im2col, warp-specialized), math " << math_name(g.math) << ", stride " << g.stride[0]
        << "x" << g.stride[1] << ", padding " << g.padding[0] << "x" << g.padding[1]
        << ", dilation " << g.dilation[0] << "x" << g.dilation[1]
        << (parts == 3 ? "\n// 3xTF32 as one tf32 convolution over [hi|lo|hi] x [hi|hi|lo] "
                         "channel copies, in chunks added in f32"
                       : "")
        << "\nnamespace " << ns << " {\nusing namespace cute;\n"
        << "using Element = " << element << ";\n"
        << "using Layout = cutlass::layout::TensorNHWC;\n"
        << "constexpr int kParts = " << parts << ";\n"
        << "constexpr int kChannelMultiple = " << multiple << ";\n"
        << "constexpr int kFilterMultiple = " << kConvFilterMultiple << ";\n"
        << "constexpr int64_t kChunkK = " << kConvSm90ChunkK << ";\n"
        << "constexpr int kStrideH = " << g.stride[0] << ", kStrideW = " << g.stride[1] << ";\n"
        << "constexpr int kPadH = " << g.padding[0] << ", kPadW = " << g.padding[1] << ";\n"
        << "constexpr int kDilationH = " << g.dilation[0] << ", kDilationW = " << g.dilation[1]
        << ";\n"
        << "using TileShape = Shape<_" << c.tile_m << ", _" << c.tile_n << ", Shape<_" << c.tile_k
        << ">>;\n"
        << "using ClusterShape = Shape<_1, _1, _1>;\n"
        << "using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<\n"
        << "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,\n"
        << "    cutlass::epilogue::collective::EpilogueTileAuto, float, float,\n"
        << "    float, Layout, kFilterMultiple, float, Layout, kFilterMultiple,\n"
        << "    cutlass::epilogue::collective::EpilogueScheduleAuto>::CollectiveOp;\n"
        << "using CollectiveMainloop = typename cutlass::conv::collective::CollectiveBuilder<\n"
        << "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::conv::Operator::kFprop,\n"
        << "    Element, Layout, kChannelMultiple, Element, Layout, kChannelMultiple, float,\n"
        << "    TileShape, ClusterShape,\n"
        << "    cutlass::conv::collective::StageCountAutoCarveout<\n"
        << "        static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,\n"
        << "    cutlass::conv::collective::KernelScheduleAuto>::CollectiveOp;\n"
        << "using ProblemShape = cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kFprop,\n"
        << "    CollectiveMainloop::DispatchPolicy::NumSpatialDimensions>;\n"
        // The scheduler tag spelled out (void maps to it): ConvUniversal derives from
        // GemmUniversal, whose CUTLASS 2.x specialization (an sm80 GEMM's include in the same
        // program) matches any non-tuple first argument with a void scheduler, so a conv
        // problem shape with void is ambiguous there (ResNet-18 failed to compile, H100, s28).
        << "using ConvKernel = cutlass::conv::kernel::ConvUniversal<ProblemShape, "
           "CollectiveMainloop,\n    CollectiveEpilogue, cutlass::gemm::PersistentScheduler>;\n"
        << "}  // namespace " << ns << "\n\n";
    code.entry = cutlass_entry(
        ns, sym, dev.str(),
        "extern \"C\" __global__ void\n__launch_bounds__(" + ns +
            "::ConvKernel::MaxThreadsPerBlock, " + ns +
            "::ConvKernel::MinBlocksPerMultiprocessor)\n" + sym +
            "(CUTLASS_GRID_CONSTANT typename " + ns + "::ConvKernel::Params const params) {\n"
            "    extern __shared__ char " + ns + "_smem[];\n    " + ns +
            "::ConvKernel op;\n    op(params, " + ns + "_smem);\n}\n");
    KernelLaunch l;
    l.name = kernel.name;
    l.symbol = sym;
    l.params = {KernelParam{ParamKind::kParamBlob, "", 0, 0.0}};
    l.param_builder = builder_symbol_of(kernel.name);
    l.builder_tensors = {names.x, names.w, names.y};
    code.launches.push_back(l);
    BufferDecl by;
    by.name = names.y;
    by.dtype = DType::kF32;
    by.shape = {g.n, g.p, g.q, g.kp};
    by.workspace = true;
    code.buffers.push_back(by);

    // The host param builder: sizes from the harness's dims, the chunking and padding as the
    // plan's buffers (conv_split_of), part = batch part * chunks + chunk.
    const Problem& pr = *ctx.problem;
    std::ostringstream h;
    h << conv_builder_head(kernel, ctx, g, ns)
      << "    const int64_t K = " << conv_dim_expr(pr, w.dim_names[0], g.k) << ", R = "
      << (g.one_d ? "1" : conv_dim_expr(pr, w.dim_names[w.dim_names.size() - 2], g.r))
      << ", S = " << conv_dim_expr(pr, w.dim_names.back(), g.s) << ";\n"
      << "    if (N < 1 || C < 1 || H < 1 || W < 1 || K < 1 || R < 1 || S < 1)\n"
      << "        return KFORGE_BUILD_BAD_ARGS;\n"
      << "    if (H + 2 * kPadH < kDilationH * (R - 1) + 1 || W + 2 * kPadW < kDilationW * (S - 1) + 1)\n"
      << "        return KFORGE_BUILD_BAD_ARGS;\n"
      << "    const int64_t P = (H + 2 * kPadH - kDilationH * (R - 1) - 1) / kStrideH + 1;\n"
      << "    const int64_t Q = (W + 2 * kPadW - kDilationW * (S - 1) - 1) / kStrideW + 1;\n"
      << "    const int64_t Kp = (K + kFilterMultiple - 1) / kFilterMultiple * kFilterMultiple;\n"
      << "    const kforge::ConvSplit sp = kforge::conv_split_of(C, R * S, kParts, "
         "kChannelMultiple, kChunkK);\n"
      << "    if (sp.cc < 1) return KFORGE_BUILD_CANNOT_IMPLEMENT;\n"
      << "    const int64_t row = kParts * sp.cc;  // a staged position's channels\n"
      << "    // tensors of 2 GiB and more: the batch in parts too (codegen/host_abi.h)\n"
      << "    const int64_t kLimit = (int64_t(1) << 31) - 1, x_image = H * W * row,\n"
      << "        y_image = P * Q * Kp, w_chunk = Kp * R * S * row;\n"
      << "    if (w_chunk * int64_t(sizeof(Element)) > kLimit) return KFORGE_BUILD_CANNOT_IMPLEMENT;\n"
      << "    const int64_t x_fit = kLimit / (x_image * int64_t(sizeof(Element))),\n"
      << "        y_fit = kLimit / (y_image * int64_t(sizeof(float)));\n"
      << "    const int64_t per_part = x_fit < y_fit ? x_fit : y_fit;\n"
      << "    if (per_part < 1) return KFORGE_BUILD_CANNOT_IMPLEMENT;  // one image is too large\n"
      << "    const int64_t batch_parts = (N + per_part - 1) / per_part;\n"
      << "    if (in->part < 0 || in->part >= batch_parts * sp.chunks) return KFORGE_BUILD_BAD_ARGS;\n"
      << "    const int64_t chunk = in->part % sp.chunks, first = in->part / sp.chunks * per_part;\n"
      << "    const int64_t Nall = N;\n"
      << "    N = N - first < per_part ? N - first : per_part;\n"
      << "    out->parts = uint32_t(batch_parts * sp.chunks);\n"
      << "    Element* x_part = static_cast<Element*>(in->tensors[0]) + (chunk * Nall + first) * x_image;\n"
      << "    Element* w_part = static_cast<Element*>(in->tensors[1]) + chunk * w_chunk;\n"
      << "    float* y_part = static_cast<float*>(in->tensors[2]) + first * y_image;\n"
      << "    ProblemShape problem(cutlass::conv::Mode::kCrossCorrelation,\n"
      << "        {int(N), int(H), int(W), int(row)}, {int(Kp), int(R), int(S), int(row)},\n"
      << "        {kPadH, kPadW}, {kPadH, kPadW}, {kStrideH, kStrideW}, {kDilationH, kDilationW}, 1);\n"
      << "    typename ConvKernel::StrideC stride_y;\n"
      << "    cute::for_each(cute::make_seq<cute::rank<0>(typename ConvKernel::StrideC{})>{}, [&](auto i) {\n"
      << "        cute::get<0, i>(stride_y) = problem.stride_C[ProblemShape::RankT - 2 - i];\n"
      << "    });\n"
      << "    // the first chunk stores its sum, each later one adds its own to it (beta 1, C = D)\n"
      << "    const float beta = chunk == 0 ? 0.0f : 1.0f;\n"
      << "    typename ConvKernel::Arguments args{problem, {x_part, w_part},\n"
      << "        {{1.0f, beta}, y_part, stride_y, y_part, stride_y}};\n"
      << "    if (!ConvKernel::can_implement(args)) return KFORGE_BUILD_CANNOT_IMPLEMENT;\n"
      << "    const size_t workspace_bytes = ConvKernel::get_workspace_size(args);\n"
      << "    out->workspace_bytes = workspace_bytes;\n"
      << "    if (workspace_bytes > 0 && in->workspace == nullptr) return KFORGE_BUILD_NEED_WORKSPACE;\n"
      << "    typename ConvKernel::Params params = ConvKernel::to_underlying_arguments(args, "
         "in->workspace);\n"
      << "    const dim3 grid = ConvKernel::get_grid_shape(params);\n"
      << "    const dim3 block = ConvKernel::get_block_shape();\n"
      << "    if (out->params == nullptr || out->params_capacity < sizeof(params))\n"
      << "        return KFORGE_BUILD_PARAMS_TOO_LARGE;\n"
      << "    std::memcpy(out->params, &params, sizeof(params));\n"
      << "    out->params_bytes = sizeof(params);\n"
      << "    out->grid[0] = grid.x; out->grid[1] = grid.y; out->grid[2] = grid.z;\n"
      << "    out->block[0] = block.x; out->block[1] = block.y; out->block[2] = block.z;\n"
      << "    out->cluster[0] = 1; out->cluster[1] = 1; out->cluster[2] = 1;\n"
      << "    out->smem_bytes = unsigned(ConvKernel::SharedStorageSize);\n"
      << "    return KFORGE_BUILD_OK;\n}\n";
    code.host_source = h.str();
    return Ok{};
}

}  // namespace kforge::codegen
