// lower_gemm: one gemm kernel -> a CUTLASS 3.x kernel (sm90 TMA warp-specialized collectives,
// epilogue as an EVT) plus an extern "C" __global__ wrapper and an extern "C" param builder
// (codegen/host_abi.h). `schedule multistage` goes to lower_gemm_sm80 (CUTLASS 2.x). tf32x3,
// and tf32 with an MN-major operand, first stage their operands K-major (gemm_stage.h): those
// pre-kernels are launches of the same KernelCode, before the GEMM. tf32x3 promotes the
// accumulator (promotion_types below).
#include <string>

#include "codegen/evt_emit.h"
#include "codegen/gemm_emit_common.h"
#include "codegen/gemm_spec.h"
#include "codegen/gemm_stage.h"
#include "codegen/kernel_lowering.h"
#include "codegen/launch_knobs.h"
#include "codegen/lower_gemm_sm80.h"

namespace kforge::codegen {
namespace {

Error unsupported(const dsl::Kernel& k, const std::string& what) {
    return make_error(k.name, "not supported by the CUTLASS lowering: " + what);
}

struct Sm90Schedule {
    const char* kernel;
    const char* epilogue;
    const char* scheduler;
};

Expected<Sm90Schedule> sm90_schedule(const GemmSpec& g, const dsl::Kernel& k) {
    const auto& c = g.config;
    bool split = c.split_k > 1;
    switch (c.schedule) {
        case dsl::Schedule::kTmaWarpSpecialized:
            if (split) return unsupported(k, "splitk > 1 with schedule tma_ws (use cooperative)");
            return Sm90Schedule{"cutlass::gemm::KernelTmaWarpSpecialized",
                                "cutlass::epilogue::TmaWarpSpecialized", "void"};
        case dsl::Schedule::kPingpong:
            if (split)
                return unsupported(k, "splitk > 1 with schedule pingpong (CUTLASS's ping-pong "
                                      "kernel has no stream-K/split-K scheduler)");
            return Sm90Schedule{"cutlass::gemm::KernelTmaWarpSpecializedPingpong",
                                "cutlass::epilogue::TmaWarpSpecialized",
                                "cutlass::gemm::PersistentScheduler"};
        case dsl::Schedule::kCooperative:
        case dsl::Schedule::kStreamK:
            if (c.tile_m % 128 != 0)
                return unsupported(k, "tile M " + std::to_string(c.tile_m) + " with a cooperative "
                                      "schedule (needs a multiple of 128; use pingpong)");
            return Sm90Schedule{"cutlass::gemm::KernelTmaWarpSpecializedCooperative",
                                "cutlass::epilogue::TmaWarpSpecializedCooperative",
                                uses_stream_k_scheduler(c) ? "cutlass::gemm::StreamKScheduler"
                                                           : "cutlass::gemm::PersistentScheduler"};
        case dsl::Schedule::kDirect:
            return unsupported(k, "schedule direct (the direct convolution is a conv2d kernel's "
                                  "schedule; a gemm runs tma_ws, cooperative, pingpong, stream_k "
                                  "or multistage)");
        case dsl::Schedule::kMultistage: break;
    }
    return unsupported(k, "internal: multistage reached the sm90 emitter");
}

std::string shape3(int a, int b, int c) {
    return "Shape<_" + std::to_string(a) + ", _" + std::to_string(b) + ", _" + std::to_string(c) +
           ">";
}

// Staged 3xTF32 runs ~3x as many wgmma steps into one accumulator as a plain tf32 GEMM, and
// wgmma's fp32 accumulation drops low bits of each addend: at K = 4096 that alone gave a median
// relative error of 4.1e-5 on the H200, flagged by the fp32_strict precision profile. CUTLASS's
// FP8 mainloop adds wgmma's accumulator into a separate fp32 register accumulator every
// mma_promotion_interval MMAs; the CollectiveBuilder routes only FP8 types to it, so the
// builder's tf32 collective is re-instantiated with the FP8 dispatch policy (TiledMma, smem
// layouts and TMA copies unchanged; the policy derives from the plain one, so GemmUniversal picks
// the same kernel). Measured (bench/kernels/tf32x3_accum, 4096^3, cooperative 128x128x32 cluster
// 2x1): promotion every 4 k-blocks 3.6e-7 median error, 1.25 ms with staging (2.15x cuBLAS
// SGEMM); every k-block 1.37 ms. Promotion doubles the accumulator registers: the checker
// (dsl/check_legality.cpp) refuses tiles whose doubled accumulator spills.
bool promotes_accumulator(const GemmSpec& g) { return g.math == dsl::MathMode::kTf32x3; }

// K-blocks (tile K / wgmma K) between two promotions.
constexpr int kPromotionKBlocks = 4;

std::string promotion_types() {
    return "// 3xTF32: the builder's tf32 collective with CUTLASS's FP8 dispatch policy, which "
           "promotes\n// wgmma's accumulator into a separate fp32 accumulator every "
           "MmaPromotionInterval MMAs\n"
           "template <class Mma>\nstruct WithPromotion;\n"
           "template <int Stages, class Cluster, class Schedule, class... Rest>\n"
           "struct WithPromotion<cutlass::gemm::collective::CollectiveMma<\n"
           "    cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<Stages, Cluster, Schedule>, "
           "Rest...>> {\n"
           "    using type = cutlass::gemm::collective::CollectiveMma<\n"
           "        cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<Stages, Cluster, "
           "Schedule>, Rest...>;\n};\n"
           "using CollectiveMainloop = typename WithPromotion<CollectiveMainloopPlain>::type;\n"
           "constexpr uint32_t MmaPromotionInterval = " + std::to_string(kPromotionKBlocks) +
           " *\n    (int(size<2>(TileShape{})) / "
           "int(CollectiveMainloop::TiledMma{}.tile_size_mnk<2>()));  // k-blocks x MMAs each\n";
}

std::string types_of(const GemmSpec& g, const Sm90Schedule& sch, const EvtCode& evt) {
    const auto& c = g.config;
    std::string acc = c.acc == DType::kF16 ? "cutlass::half_t" : "float";
    std::string elem_c = g.source ? cutlass_type(g.dtype_c) : "void";
    std::string s;
    s += "using ElementA = " + cutlass_type(g.dtype_a) + ";\n";
    s += std::string("using LayoutA = cutlass::layout::") +
         (g.a_row_major ? "RowMajor" : "ColumnMajor") + ";\n";
    s += "using ElementB = " + cutlass_type(g.dtype_b) + ";\n";
    s += std::string("using LayoutB = cutlass::layout::") +
         (g.b_col_major ? "ColumnMajor" : "RowMajor") + ";\n";
    s += "using ElementC = " + elem_c + ";\n";
    s += "using ElementD = " + cutlass_type(g.dtype_d) + ";\n";
    s += "using LayoutC = cutlass::layout::RowMajor;\nusing LayoutD = cutlass::layout::RowMajor;\n";
    s += "constexpr int AlignmentA = 128 / cutlass::sizeof_bits<ElementA>::value;\n"
         "constexpr int AlignmentB = 128 / cutlass::sizeof_bits<ElementB>::value;\n"
         "constexpr int AlignmentD = 128 / cutlass::sizeof_bits<ElementD>::value;\n";
    s += g.source ? "constexpr int AlignmentC = 128 / cutlass::sizeof_bits<ElementC>::value;\n"
                  : "constexpr int AlignmentC = AlignmentD;\n";
    s += "using ElementAccumulator = " + acc + ";\nusing ElementCompute = float;\n";
    s += "constexpr auto RoundStyle = cutlass::FloatRoundStyle::round_to_nearest;\n";
    s += "using TileShape = " + shape3(c.tile_m, c.tile_n, c.tile_k) + ";\n";
    s += "using ClusterShape = " + shape3(c.cluster_m, c.cluster_n, 1) + ";\n";
    s += std::string("using KernelSchedule = ") + sch.kernel + ";\n";
    s += std::string("using EpilogueSchedule = ") + sch.epilogue + ";\n";
    s += std::string("using TileScheduler = ") + sch.scheduler + ";\n";
    s += evt.types;
    s += "using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<\n"
         "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,\n"
         "    cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, "
         "ElementCompute,\n"
         "    ElementC, LayoutC, AlignmentC, ElementD, LayoutD, AlignmentD,\n"
         "    EpilogueSchedule, Evt>::CollectiveOp;\n";
    std::string stages =
        c.stages > 0 ? "cutlass::gemm::collective::StageCount<" + std::to_string(c.stages) + ">"
                     : "cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(\n"
                       "        sizeof(typename CollectiveEpilogue::SharedStorage))>";
    const bool promote = promotes_accumulator(g);
    s += std::string("using ") + (promote ? "CollectiveMainloopPlain" : "CollectiveMainloop") +
         " = typename cutlass::gemm::collective::CollectiveBuilder<\n"
         "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,\n"
         "    ElementA, LayoutA, AlignmentA, ElementB, LayoutB, AlignmentB, "
         "ElementAccumulator,\n"
         "    TileShape, ClusterShape,\n    " + stages + ",\n    KernelSchedule>::CollectiveOp;\n";
    if (promote) s += promotion_types();
    s += "using GemmKernel = cutlass::gemm::kernel::GemmUniversal<\n"
         "    Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue, "
         "TileScheduler>;\n";
    s += "using StrideA = typename GemmKernel::StrideA;\nusing StrideB = typename "
         "GemmKernel::StrideB;\n"
         "using StrideC = typename GemmKernel::StrideC;\nusing StrideD = typename "
         "GemmKernel::StrideD;\n";
    return s;
}

// The tile scheduler's arguments with every launch knob written in (launch_knobs_baked(): each
// value is its own source, as before launch knobs).
std::string baked_scheduler_arguments(const GemmSpec& g) {
    const auto& c = g.config;
    std::string s = "    using Raster = decltype(args.scheduler.raster_order);\n";
    const char* raster = c.raster == dsl::Raster::kAlongM   ? "AlongM"
                         : c.raster == dsl::Raster::kAlongN ? "AlongN"
                                                            : "Heuristic";
    s += std::string("    args.scheduler.raster_order = Raster::") + raster + ";\n";
    if (promotes_accumulator(g))
        s += "    args.mainloop.mma_promotion_interval = MmaPromotionInterval;\n";
    s += "    args.scheduler.max_swizzle_size = " + std::to_string(c.swizzle) + ";\n";
    if (uses_stream_k_scheduler(c)) {
        s += "    using Decomposition = decltype(args.scheduler.decomposition_mode);\n";
        if (c.split_k > 1)
            s += "    args.scheduler.splits = " + std::to_string(c.split_k) +
                 ";\n    args.scheduler.decomposition_mode = Decomposition::SplitK;\n";
        else
            s += "    args.scheduler.decomposition_mode = Decomposition::StreamK;\n";
    }
    return s;
}

// The tile scheduler's arguments from the launch knobs of KforgeBuildArgs (codegen/host_abi.h,
// launch_knobs.h): the source holds no raster, swizzle, split or decomposition value, so every
// setting of them runs on one compile. The persistent grid is sized by the SM count CUTLASS is
// given: max_ctas below the device's SMs launches fewer persistent CTAs (each loops over more
// tiles). A split-K or stream-K request of a kernel compiled without the stream-K scheduler is
// refused (KFORGE_BUILD_BAD_ARGS): its plan never asks for one.
std::string scheduler_arguments(const GemmSpec& g) {
    std::string s =
        "    if (in->max_ctas > 0 && in->max_ctas < in->sm_count)\n"
        "        args.hw_info.sm_count = in->max_ctas;  // persistent CTAs (launch knob)\n"
        "    using Raster = decltype(args.scheduler.raster_order);\n"
        "    args.scheduler.raster_order = in->raster == KFORGE_RASTER_ALONG_M ? Raster::AlongM\n"
        "                                : in->raster == KFORGE_RASTER_ALONG_N ? Raster::AlongN\n"
        "                                                                      : Raster::Heuristic;\n";
    if (promotes_accumulator(g))
        s += "    args.mainloop.mma_promotion_interval = MmaPromotionInterval;\n";
    s += "    args.scheduler.max_swizzle_size = in->swizzle > 0 ? in->swizzle : 1;\n";
    if (uses_stream_k_scheduler(g.config)) {
        s += "    using Decomposition = decltype(args.scheduler.decomposition_mode);\n"
             "    args.scheduler.splits = in->splits > 0 ? in->splits : 1;\n"
             "    switch (in->decomposition) {\n"
             "        case KFORGE_DECOMPOSITION_DATA_PARALLEL:\n"
             "            args.scheduler.decomposition_mode = Decomposition::DataParallel; break;\n"
             "        case KFORGE_DECOMPOSITION_SPLIT_K:\n"
             "            args.scheduler.decomposition_mode = Decomposition::SplitK; break;\n"
             "        case KFORGE_DECOMPOSITION_STREAM_K:\n"
             "            args.scheduler.decomposition_mode = Decomposition::StreamK; break;\n"
             "        default: args.scheduler.decomposition_mode = Decomposition::Heuristic;\n"
             "    }\n";
    } else {
        s += "    if (in->splits > 1 || in->decomposition != KFORGE_DECOMPOSITION_HEURISTIC)\n"
             "        return KFORGE_BUILD_BAD_ARGS;  // no stream-K scheduler compiled in\n";
    }
    return s;
}

std::string builder_of(const GemmSpec& g, const LowerContext& ctx, const EvtCode& evt) {
    std::string ns = "kforge_gemm_" + g.kernel;
    std::string s = builder_head(g, ctx, builder_symbol_of(g.kernel));
    if (g.k_parts > 1)
        s += "    K *= " + std::to_string(g.k_parts) + ";  // staged 3xTF32 operands: K' = " +
             std::to_string(g.k_parts) + "K\n";
    s += "    using namespace " + ns + ";\n    using Gemm = GemmKernel;\n";
    s += "    StrideA stride_a = cutlass::make_cute_packed_stride(StrideA{}, "
         "cute::make_shape(int(M), int(K), int(L)));\n"
         "    StrideB stride_b = cutlass::make_cute_packed_stride(StrideB{}, "
         "cute::make_shape(int(N), int(K), int(L)));\n"
         "    StrideC stride_c = cutlass::make_cute_packed_stride(StrideC{}, "
         "cute::make_shape(int(M), int(N), int(L)));\n"
         "    StrideD stride_d = cutlass::make_cute_packed_stride(StrideD{}, "
         "cute::make_shape(int(M), int(N), int(L)));\n";
    if (!g.a_batched) s += "    cute::get<2>(stride_a) = 0;  // one A for all batches\n";
    if (!g.b_batched) s += "    cute::get<2>(stride_b) = 0;  // one B for all batches\n";
    bool source_batched = false;
    for (const auto& st : g.steps)
        if (st.kind == EpiStepKind::kBinaryTensor && st.broadcast == Broadcast::kMatrix)
            source_batched = st.batched;
    if (g.source && !source_batched) s += "    cute::get<2>(stride_c) = 0;  // one C for all batches\n";
    std::string ptr_c = "nullptr";
    if (g.source) {
        int idx = 0;
        for (size_t i = 0; i < g.tensor_order.size(); ++i)
            if (g.tensor_order[i] == *g.source) idx = static_cast<int>(i);
        ptr_c = "static_cast<const ElementC*>(tensors[" + std::to_string(idx) + "])";
    }
    s += "    typename Gemm::Arguments args{\n"
         "        L > 1 ? cutlass::gemm::GemmUniversalMode::kBatched : "
         "cutlass::gemm::GemmUniversalMode::kGemm,\n"
         "        {int(M), int(N), int(K), int(L)},\n"
         "        {static_cast<const ElementA*>(tensors[0]), stride_a,\n"
         "         static_cast<const ElementB*>(tensors[1]), stride_b},\n"
         "        {{}, " + ptr_c + ", stride_c, static_cast<ElementD*>(tensors[2]), stride_d}};\n";
    s += "    args.epilogue.thread = typename Evt::Arguments" + evt.arguments + ";\n";
    s += "    args.hw_info.device_id = in->device_id;\n"
         "    args.hw_info.sm_count = in->sm_count;\n";
    if (launch_knobs_baked())
        s += baked_scheduler_arguments(g);
    else
        s += scheduler_arguments(g);
    s += builder_tail(g, true);
    return s;
}

}  // namespace

Expected<KernelCode> lower_gemm(const dsl::Kernel& kernel, const LowerContext& ctx) {
    auto spec = analyze_gemm(kernel, ctx);
    if (!spec) return spec.error();
    if (kernel.gemm.schedule == dsl::Schedule::kMultistage) return lower_gemm_sm80(*spec, kernel, ctx);
    if (spec->math == dsl::MathMode::kF32Simt)
        return unsupported(kernel, "math f32_simt with a Hopper schedule (CUTLASS has SIMT only "
                                   "in the sm80 multistage path: use schedule multistage)");
    if (ctx.arch.rfind("sm_90", 0) != 0)
        return unsupported(kernel, "schedule with TMA warp-specialization on " + ctx.arch +
                                   " (needs sm_90a; use schedule multistage)");
    // tf32 (and 3xTF32) operands that wgmma cannot read from shared memory are staged K-major:
    // after stage_operands every tf32 operand is K-major.
    const OperandStaging staging = plan_operand_staging(kernel.gemm.schedule, spec->math,
                                                        spec->a_row_major, spec->b_col_major);
    Expected<StagedCode> staged = StagedCode{};
    if (staging.any()) {
        staged = stage_operands(*spec, staging, ctx);
        if (!staged) return staged.error();
    }
    const GemmSpec& g = *spec;
    if (auto st = check_alignment(g, kernel); !st) return st.error();
    auto sch = sm90_schedule(g, kernel);
    if (!sch) return sch.error();
    auto evt = emit_evt(g, EvtFamily::kSm90);
    if (!evt) return evt.error();

    std::string ns = "kforge_gemm_" + g.kernel;
    KernelCode code;
    std::string stage_note;
    if (g.k_parts > 1)
        stage_note = "// 3xTF32 as one tf32 GEMM over K' = " + std::to_string(g.k_parts) +
                     "K of the staged operands " + g.a + " = [hi|hi|lo] and " + g.b +
                     " = [hi;lo;hi], accumulator promoted every " +
                     std::to_string(kPromotionKBlocks) + " k-blocks\n";
    else if (staging.any())
        stage_note = "// reads the K-major staged copy of its MN-major operand\n";
    code.device_source = staged->device_source;
    code.device_source += "// kernel " + g.kernel + ": CUTLASS 3.x sm90 gemm, math " +
                         std::string(math_name(g.math)) + "\n" + stage_note +
                         "namespace " + ns +
                         " {\nusing namespace cute;\n" + types_of(g, *sch, *evt) + "}  // namespace " +
                         ns + "\n\n";
    code.entry = cutlass_entry(
        ns, symbol_of(g.kernel), code.device_source,
        "extern \"C\" __global__ void\n__launch_bounds__(" + ns +
            "::GemmKernel::MaxThreadsPerBlock, " + ns +
            "::GemmKernel::MinBlocksPerMultiprocessor)\n" + symbol_of(g.kernel) +
            "(CUTLASS_GRID_CONSTANT typename " + ns + "::GemmKernel::Params const params) {\n"
            "    extern __shared__ char " + ns + "_smem[];\n    " + ns +
            "::GemmKernel op;\n    op(params, " + ns + "_smem);\n}\n");
    code.host_source = builder_of(g, ctx, *evt);
    KernelLaunch launch;
    launch.name = g.kernel;
    launch.symbol = symbol_of(g.kernel);
    launch.cluster = {static_cast<unsigned>(g.config.cluster_m),
                      static_cast<unsigned>(g.config.cluster_n), 1};
    launch.params = {KernelParam{ParamKind::kParamBlob, "", 0, 0.0}};
    launch.param_builder = builder_symbol_of(g.kernel);
    launch.builder_tensors = g.tensor_order;
    launch.knobs = launch_knobs_of(g.config);
    code.launches = std::move(staged->launches);  // the pre-kernels first
    code.launches.push_back(launch);
    code.buffers = std::move(staged->buffers);
    return code;
}

}  // namespace kforge::codegen
