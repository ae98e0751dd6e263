// lower_gemm_sm80: see lower_gemm_sm80.h.
#include "codegen/lower_gemm_sm80.h"

#include <algorithm>

#include "codegen/evt_emit.h"
#include "codegen/gemm_emit_common.h"

namespace kforge::codegen {
namespace {

Error unsupported(const dsl::Kernel& k, const std::string& what) {
    return make_error(k.name, "not supported by the CUTLASS lowering: " + what);
}

// The batch stride of A (`a`) or B in elements: packed per batch, or 0 for an operand without
// the batch dims (read again for every batch; GemmSpec::a_batched).
std::string batch_stride(const GemmSpec& g, bool a) {
    if (!(a ? g.a_batched : g.b_batched)) return "0";
    return a ? "M * K" : "N * K";
}

// The 2.x Arguments of a batched gemm ([L..,M,K]/[L..,K,M] x [L..,N,K]/[L..,K,N] -> [L..,M,N],
// the batch dims flattened into one L). kBatched takes blockIdx.z as the batch index: the
// mainloop offsets A and B by it times their batch strides (packed per batch, or 0 for an
// operand without the batch dims: batch_stride); D and the epilogue's tensors carry their own L strides in the EVT arguments (a
// residual or broadcast without the batch dim has L stride 0, see evt_emit.cpp). The C-operand
// pointer and batch strides are unused (the visitor tree reads and writes every tensor).
std::string batched_arguments(const GemmSpec& g, const std::string& lda, const std::string& ldb) {
    return "    // batched: grid z is the batch index, at most 65535 batches per launch\n"
           "    if (L > 65535) return KFORGE_BUILD_CANNOT_IMPLEMENT;\n"
           "    int64_t batch_stride_a = " + batch_stride(g, true) + ", batch_stride_b = " +
           batch_stride(g, false) + ";\n"
           "    typename Gemm::Arguments args(cutlass::gemm::GemmUniversalMode::kBatched,\n"
           "        {int(M), int(N), int(K)}, /*batch_count=*/int(L), evt_args,\n"
           "        tensors[0], tensors[1], nullptr, nullptr,\n"
           "        batch_stride_a, batch_stride_b, /*batch_stride_C=*/0, /*batch_stride_D=*/0,\n"
           "        " + lda + ", " + ldb + ", 0, 0);\n";
}

// The element and layout types of A, B and D (the head of both sm80 lowerings' type block).
std::string operand_types(const GemmSpec& g) {
    return "using ElementA = " + cutlass_type(g.dtype_a) + ";\n" +
           "using LayoutA = cutlass::layout::" + (g.a_row_major ? "RowMajor" : "ColumnMajor") +
           ";\n" + "using ElementB = " + cutlass_type(g.dtype_b) + ";\n" +
           "using LayoutB = cutlass::layout::" + (g.b_col_major ? "ColumnMajor" : "RowMajor") +
           ";\n" + "using ElementD = " + cutlass_type(g.dtype_d) + ";\n";
}

// The device source: the types `t` in the kernel's namespace (`prelude` opens it) into
// code.device_source, and the extern "C" kernel that runs GemmKernel with its shared storage in
// dynamic shared memory as code.entry.
void device_source(KernelCode& code, const GemmSpec& g, const std::string& ns,
                   const std::string& what, const std::string& prelude, const std::string& t) {
    code.device_source = "// kernel " + g.kernel + ": CUTLASS 2.x sm80 multistage gemm, math " +
                         std::string(math_name(g.math)) + what + "\nnamespace " + ns + " {\n" +
                         prelude + t + "}  // namespace " + ns + "\n\n";
    code.entry = cutlass_entry(
        ns, symbol_of(g.kernel), code.device_source,
        "extern \"C\" __global__ void __launch_bounds__(" + ns +
            "::GemmKernel::kThreadCount, 1)\n" + symbol_of(g.kernel) + "(typename " + ns +
            "::GemmKernel::Params params) {\n"
            "    extern __shared__ int4 " + ns + "_smem[];\n    " + ns +
            "::GemmKernel::invoke(params,\n        *reinterpret_cast<typename " + ns +
            "::GemmKernel::SharedStorage*>(" + ns + "_smem));\n}\n");
}

// The kernel's one launch: its Params blob made by the host builder over g's tensors.
KernelLaunch builder_launch(const GemmSpec& g) {
    KernelLaunch launch;
    launch.name = g.kernel;
    launch.symbol = symbol_of(g.kernel);
    launch.params = {KernelParam{ParamKind::kParamBlob, "", 0, 0.0}};
    launch.param_builder = builder_symbol_of(g.kernel);
    launch.builder_tensors = g.tensor_order;
    return launch;
}

// math f32_simt: CUTLASS's SIMT GemmUniversal with its default epilogue (LinearCombination,
// alpha 1, beta 0: D = accumulator, converted to D's type). Not the epilogue visitor tree: the
// Sm80 EVT's OutputTileThreadLayout is DefaultThreadMapTensorOp (visitor_2x.hpp), the tensor-op
// accumulator layout, while the SIMT epilogue's shared-memory loads follow DefaultThreadMapSimt
// (128x128x16, 64x64 warps: 16 steps of 1x2x4 rows, the EVT assumes 8 steps of 4x1x8): every
// thread stored its values at another thread's coordinates and f32_simt returned (almost) all
// zeros (H200 2026-12-02, bench/kernels/fp32acc/ms_simt.kf). So f32_simt takes a plain store
// only; a fused epilogue is refused (check_legality refuses it first).
Expected<KernelCode> lower_gemm_sm80_simt(const GemmSpec& g, const dsl::Kernel& kernel,
                                          const LowerContext& ctx) {
    const auto& c = g.config;
    for (const EpiStep& s : g.steps) {
        bool plain = s.kind == EpiStepKind::kStore ||
                     (s.kind == EpiStepKind::kCast && s.dtype == g.dtype_d);
        if (!plain || g.source)
            return unsupported(kernel, "math f32_simt with a fused epilogue (CUTLASS's sm80 "
                                       "epilogue visitor tree has no SIMT thread map): store the "
                                       "matmul only, or use math tf32x3");
    }
    // CUTLASS's sm80 SIMT mainloop (default_mma_core_sm80.h) transposes a K-major operand into
    // shared memory with a padding of tile_k / 32 elements that its lane tile (4 f32, fewer for a
    // narrow warp: a 4x8 grid of lanes covers the 2x2-warp tile) must divide, and splits each
    // warp tile over 4 x 8 lanes.
    const int warp_m = c.tile_m / 2, warp_n = c.tile_n / 2;
    if (warp_m % 4 != 0 || warp_n % 8 != 0)
        return unsupported(kernel, "math f32_simt with tile " + std::to_string(c.tile_m) + "x" +
                                   std::to_string(c.tile_n) + " (each of the 2x2 warps spans 4x8 "
                                   "lanes: tile M a multiple of 8, tile N of 16)");
    const int lane_m = std::min(4, warp_m / 4), lane_n = std::min(4, warp_n / 8);
    const int pad = c.tile_k / 32;
    if ((g.a_row_major && pad % lane_m != 0) || (g.b_col_major && pad % lane_n != 0))
        return unsupported(kernel, "math f32_simt with tile K " + std::to_string(c.tile_k) +
                                   " and a K-major operand (CUTLASS's SIMT mainloop pads its "
                                   "shared-memory transpose by tile K / 32 elements, which must be "
                                   "a multiple of the lane tile " +
                                   std::to_string(g.a_row_major ? lane_m : lane_n) +
                                   "): use tile K 8 or 16");
    int stages = c.stages > 0 ? c.stages : 3;
    std::string ns = "kforge_gemm_" + g.kernel;
    std::string t = operand_types(g);
    t += "using ElementAccumulator = float;\n"
         "using ElementCompute = float;\n"
         // one element per access: SIMT loads scalars, and CUTLASS's SIMT epilogue stores them
         // ("simt epilogue must operate on scalars")
         "constexpr int AlignmentSimt = 1;\n";
    t += "using ThreadblockShape = " + cutlass_gemm_shape(c.tile_m, c.tile_n, c.tile_k) + ";\n";
    t += "using WarpShape = " + cutlass_gemm_shape(warp_m, warp_n, c.tile_k) + ";\n";
    t += "using InstructionShape = cutlass::gemm::GemmShape<1, 1, 1>;\n";
    t += "constexpr int kStages = " + std::to_string(stages) + ";\n";
    t += "using EpilogueOp = cutlass::epilogue::thread::LinearCombination<\n"
         "    ElementD, AlignmentSimt, ElementAccumulator, ElementCompute>;\n";
    t += "using GemmKernel = typename cutlass::gemm::kernel::DefaultGemmUniversal<\n"
         "    ElementA, LayoutA, cutlass::ComplexTransform::kNone, AlignmentSimt,\n"
         "    ElementB, LayoutB, cutlass::ComplexTransform::kNone, AlignmentSimt,\n"
         "    ElementD, cutlass::layout::RowMajor, ElementAccumulator,\n"
         "    cutlass::arch::OpClassSimt, cutlass::arch::Sm80,\n"
         "    ThreadblockShape, WarpShape, InstructionShape, EpilogueOp,\n"
         "    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<" +
         std::to_string(c.swizzle) + ">,\n"
         "    kStages, cutlass::arch::OpMultiplyAdd>::GemmKernel;\n";
    KernelCode code;
    device_source(code, g, ns, " (default epilogue)", "", t);
    std::string b = builder_head(g, ctx, builder_symbol_of(g.kernel));
    b += "    using namespace " + ns + ";\n    using Gemm = GemmKernel;\n";
    // D = 1 * accumulator + 0 * C: beta 0 never reads C (is_source_needed), C aliases D
    b += "    typename EpilogueOp::Params epilogue(/*alpha=*/1.0f, /*beta=*/0.0f);\n";
    std::string lda = g.a_row_major ? "K" : "M", ldb = g.b_col_major ? "K" : "N";
    if (g.dims_batch.empty()) {
        b += "    typename Gemm::Arguments args(cutlass::gemm::GemmUniversalMode::kGemm,\n"
             "        {int(M), int(N), int(K)}, /*batch_count=*/1, epilogue,\n"
             "        tensors[0], tensors[1], tensors[2], tensors[2],\n"
             "        M * K, N * K, M * N, M * N, " + lda + ", " + ldb + ", N, N);\n";
    } else {
        b += "    // batched: grid z is the batch index, at most 65535 batches per launch\n"
             "    if (L > 65535) return KFORGE_BUILD_CANNOT_IMPLEMENT;\n"
             "    typename Gemm::Arguments args(cutlass::gemm::GemmUniversalMode::kBatched,\n"
             "        {int(M), int(N), int(K)}, /*batch_count=*/int(L), epilogue,\n"
             "        tensors[0], tensors[1], tensors[2], tensors[2],\n"
             "        " + batch_stride(g, true) + ", " + batch_stride(g, false) +
             ", M * N, M * N, " + lda + ", " + ldb + ", N, N);\n";
    }
    b += builder_tail(g, false);
    code.host_source = b;
    code.launches.push_back(builder_launch(g));
    return code;
}

}  // namespace

Expected<KernelCode> lower_gemm_sm80(const GemmSpec& g, const dsl::Kernel& kernel,
                                     const LowerContext& ctx) {
    const auto& c = g.config;
    if (c.split_k > 1)
        return unsupported(kernel, "splitk > 1 with schedule multistage (CUTLASS's Sm80 epilogue "
                                   "visitor kernel has no serial split-K)");
    if (c.cluster_m * c.cluster_n > 1)
        return unsupported(kernel, "a cluster with schedule multistage");
    if (c.tile_m % 2 != 0 || c.tile_n % 2 != 0 || c.tile_m / 2 < 16 || c.tile_n / 2 < 8)
        return unsupported(kernel, "tile " + std::to_string(c.tile_m) + "x" +
                                   std::to_string(c.tile_n) + " with schedule multistage "
                                   "(2x2 warps of at least 16x8)");
    if (g.math == dsl::MathMode::kF32Simt) return lower_gemm_sm80_simt(g, kernel, ctx);
    auto align = sm80_alignment(g, kernel);
    if (!align) return align.error();
    auto evt = emit_evt(g, EvtFamily::kSm80);
    if (!evt) return evt.error();
    const Sm80MathTypes mc = sm80_math_types(g.math);
    int stages = c.stages > 0 ? c.stages : 3;
    std::string ns = "kforge_gemm_" + g.kernel;
    std::string t = operand_types(g);
    t += std::string("using ElementAccumulator = ") +
         (c.acc == DType::kF16 ? "cutlass::half_t" : "float") + ";\n";
    t += "using ElementCompute = float;\n"
         "constexpr auto RoundStyle = cutlass::FloatRoundStyle::round_to_nearest;\n"
         "constexpr int AlignmentA = " + std::to_string(align->a) + ";\n"
         "constexpr int AlignmentB = " + std::to_string(align->b) + ";\n"
         "constexpr int AlignmentD = " + std::to_string(align->d) + ";\n";
    t += "using ThreadblockShape = " + cutlass_gemm_shape(c.tile_m, c.tile_n, c.tile_k) + ";\n";
    // 2x2 warps; 3xTF32 keeps three operand fragments live, so its warp tile stays at most
    // 64x32 (as CUTLASS's 3xTF32 examples) to avoid spills: up to 8 warps.
    int warp_m = c.tile_m / 2, warp_n = c.tile_n / 2;
    if (g.math == dsl::MathMode::kTf32x3) {
        warp_m = std::min(warp_m, 64);
        warp_n = std::min(warp_n, 32);
        if ((c.tile_m / warp_m) * (c.tile_n / warp_n) > 8) warp_n = c.tile_n / (8 / (c.tile_m / warp_m));
    }
    t += "using WarpShape = " + cutlass_gemm_shape(warp_m, warp_n, c.tile_k) + ";\n";
    t += std::string("using InstructionShape = ") + mc.instruction + ";\n";
    t += "constexpr int kStages = " + std::to_string(stages) + ";\n";
    t += "constexpr int kEpilogueStages = 1;\n";
    t += "using OutputTileThreadMap = cutlass::epilogue::threadblock::OutputTileThreadLayout<\n"
         "    ThreadblockShape, WarpShape, ElementD, AlignmentD, kEpilogueStages>;\n";
    t += evt->types;
    t += std::string("using GemmKernel = typename cutlass::gemm::kernel::DefaultGemmWithVisitor<\n"
         "    ElementA, LayoutA, cutlass::ComplexTransform::kNone, AlignmentA,\n"
         "    ElementB, LayoutB, cutlass::ComplexTransform::kNone, AlignmentB,\n"
         "    ElementD, cutlass::layout::RowMajor, AlignmentD,\n"
         "    ElementAccumulator, ElementCompute, ") + mc.op_class + ", cutlass::arch::Sm80,\n"
         "    ThreadblockShape, WarpShape, InstructionShape, Evt,\n"
         "    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<" +
         std::to_string(c.swizzle) + ">,\n"
         "    kStages, " + mc.op + ", kEpilogueStages>::GemmKernel;\n";
    // The visitor tree stores each thread's accumulators at OutputTileThreadMap's coordinates;
    // the default epilogue loads them from shared memory by its own thread map. A mismatch
    // compiles and writes wrong elements (SIMT's map differs: lower_gemm_sm80_simt).
    t += "static_assert(cutlass::platform::is_same<\n"
         "    typename GemmKernel::Epilogue::OutputTileIterator::ThreadMap,\n"
         "    typename OutputTileThreadMap::Base>::value,\n"
         "    \"the EVT thread map differs from the epilogue's accumulator thread map\");\n";

    KernelCode code;
    device_source(code, g, ns, "", "using namespace cute;\n", t);
    std::string b = builder_head(g, ctx, builder_symbol_of(g.kernel));
    b += "    using namespace " + ns + ";\n    using Gemm = GemmKernel;\n";
    b += "    typename Evt::Arguments evt_args" + evt->arguments + ";\n";
    std::string lda = g.a_row_major ? "K" : "M", ldb = g.b_col_major ? "K" : "N";
    if (g.dims_batch.empty()) {
        b += "    typename Gemm::Arguments args(cutlass::gemm::GemmUniversalMode::kGemm,\n"
             "        {int(M), int(N), int(K)}, /*batch_count=*/1, evt_args,\n"
             "        tensors[0], tensors[1], nullptr, nullptr,\n"
             "        M * K, N * K, 0, 0, " + lda + ", " + ldb + ", 0, 0);\n";
    } else {
        b += batched_arguments(g, lda, ldb);
    }
    b += builder_tail(g, false);
    code.host_source = b;
    code.launches.push_back(builder_launch(g));
    return code;
}

}  // namespace kforge::codegen
