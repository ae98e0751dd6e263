// CUTLASS type construction shared by gemm_plain.cu and gemm_promo.cu. The types follow what
// kforge's codegen emits for an sm90 tf32 GEMM (codegen/lower_gemm.cpp types_of): float
// operands (tf32 wgmma), cooperative kernel + epilogue, persistent scheduler, stage count
// carved out around the epilogue's shared storage, void C (no source).
#pragma once
#include <cstdio>
#include <type_traits>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"

#include "gemm_api.h"

namespace tf32x3 {

// The CollectiveBuilder routes only FP8 element types to the promotion mainloop; for tf32 the
// builder's collective is rebuilt with the FP8 dispatch policy and every other parameter
// (TiledMma, shared-memory layouts, TMA copies) unchanged. The FP8 policy derives from the
// plain one, so GemmUniversal picks the same cooperative kernel.
template <class Mma>
struct WithPromotion;
template <int Stages, class ClusterShape, class Schedule, class... Rest>
struct WithPromotion<cutlass::gemm::collective::CollectiveMma<
    cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<Stages, ClusterShape, Schedule>, Rest...>> {
    using type = cutlass::gemm::collective::CollectiveMma<
        cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<Stages, ClusterShape, Schedule>,
        Rest...>;
};

template <int TM, int TN, int TK, int CM, int CN, bool PROMOTE>
struct Tf32Gemm {
    using TileShape = cute::Shape<cute::Int<TM>, cute::Int<TN>, cute::Int<TK>>;
    using ClusterShape = cute::Shape<cute::Int<CM>, cute::Int<CN>, cute::_1>;
    using LayoutA = cutlass::layout::RowMajor;     // A' M x K', K contiguous
    using LayoutB = cutlass::layout::ColumnMajor;  // B' as K' x N column-major = N x K' K-major
    using LayoutD = cutlass::layout::RowMajor;
    static constexpr int kAlign = 4;
    using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
        cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutD, kAlign,
        float, LayoutD, kAlign, cutlass::epilogue::TmaWarpSpecializedCooperative>::CollectiveOp;
    using BaseMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, float, LayoutA, kAlign, float,
        LayoutB, kAlign, float, TileShape, ClusterShape,
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
            sizeof(typename Epilogue::SharedStorage))>,
        cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
    using Mainloop =
        std::conditional_t<PROMOTE, typename WithPromotion<BaseMainloop>::type, BaseMainloop>;
    using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop,
                                                        Epilogue,
                                                        cutlass::gemm::PersistentScheduler>;
    using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
    static constexpr bool kPromote = PROMOTE;
    static constexpr int kStages = Mainloop::DispatchPolicy::Stages;
    static constexpr int kMmaK = typename Mainloop::TiledMma{}.template tile_size_mnk<2>();
};

template <class G>
struct GemmOpImpl final : GemmOp {
    typename G::Adapter op;
    typename G::Adapter::Arguments args;
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
    bool promote;
    explicit GemmOpImpl(bool p) : promote(p) {}
    ~GemmOpImpl() override {
        if (workspace) cudaFree(workspace);
    }
    int mmas_per_kblock() const override { return cute::size<2>(typename G::TileShape{}) / G::kMmaK; }
    std::string desc() const override {
        char b[160];
        std::snprintf(b, sizeof b, "tile %dx%dx%d cluster %dx%d stages %d %s",
                      int(cute::size<0>(typename G::TileShape{})),
                      int(cute::size<1>(typename G::TileShape{})),
                      int(cute::size<2>(typename G::TileShape{})),
                      int(cute::size<0>(typename G::ClusterShape{})),
                      int(cute::size<1>(typename G::ClusterShape{})), G::kStages,
                      promote ? "FP8-promotion mainloop" : "plain mainloop");
        return b;
    }
    std::string init(const float* a, const float* b, float* d, int m, int n, int k, int interval,
                     bool dry) override {
        using Kernel = typename G::Kernel;
        auto sa = cutlass::make_cute_packed_stride(typename Kernel::StrideA{},
                                                   cute::make_shape(m, k, 1));
        auto sb = cutlass::make_cute_packed_stride(typename Kernel::StrideB{},
                                                   cute::make_shape(n, k, 1));
        auto sc = cutlass::make_cute_packed_stride(typename Kernel::StrideC{},
                                                   cute::make_shape(m, n, 1));
        auto sd = cutlass::make_cute_packed_stride(typename Kernel::StrideD{},
                                                   cute::make_shape(m, n, 1));
        args = typename G::Adapter::Arguments{cutlass::gemm::GemmUniversalMode::kGemm,
                                              {m, n, k, 1},
                                              {a, sa, b, sb},
                                              {{1.0f, 0.0f}, nullptr, sc, d, sd}};
        if constexpr (G::kPromote)
            args.mainloop.mma_promotion_interval = uint32_t(interval);
        if (!dry) {
            int dev = 0;
            cudaGetDevice(&dev);
            args.hw_info = cutlass::KernelHardwareInfo::make_kernel_hardware_info<Kernel>(dev);
        }
        cutlass::Status st = G::Adapter::can_implement(args);
        if (st != cutlass::Status::kSuccess)
            return std::string("can_implement: ") + cutlass::cutlassGetStatusString(st);
        if (dry) return "";
        size_t bytes = G::Adapter::get_workspace_size(args);
        if (bytes > workspace_bytes) {
            if (workspace) cudaFree(workspace);
            workspace = nullptr;
            if (cudaMalloc(&workspace, bytes) != cudaSuccess) return "workspace cudaMalloc failed";
            workspace_bytes = bytes;
        }
        st = op.initialize(args, workspace);
        if (st != cutlass::Status::kSuccess)
            return std::string("initialize: ") + cutlass::cutlassGetStatusString(st);
        return "";
    }
    cudaError_t run(cudaStream_t stream) override {
        cutlass::Status st = op.run(stream);
        if (st != cutlass::Status::kSuccess) return cudaErrorLaunchFailure;
        return cudaGetLastError();
    }
};

}  // namespace tf32x3
