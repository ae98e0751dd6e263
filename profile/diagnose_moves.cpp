// Knob moves per bottleneck class and kernel kind (profile/diagnose.h). The words are the
// kernel language's knobs (dsl/knobs.cpp) so a proposer can apply them as written.
#include "profile/diagnose.h"

#include <algorithm>

namespace kforge::profile {
namespace {

using dsl::KernelKind;
using Moves = std::vector<std::string>;

Moves gemm_moves(Bottleneck b) {
    switch (b) {
        case Bottleneck::kDramBound:
            return {"fuse the consumer ops into the epilogue { ... } (one pass over DRAM)",
                    "tile 128x256x64 (more reuse per byte)", "swizzle 8"};
        case Bottleneck::kL2Bound:
            return {"raster along_n / along_m (the other one)", "swizzle 8", "cluster 2x1"};
        case Bottleneck::kTensorComputeBound:
            return {"schedule pingpong", "tile 128x256x64", "stages auto"};
        case Bottleneck::kSimtComputeBound:
            return {"math tf32x3 (fp32-accurate on tensor cores)",
                    "math tf32 / bf16 where the precision policy allows"};
        case Bottleneck::kLatencyBoundLowOccupancy:
            return {"stages 3 (fewer stages, less smem per CTA)", "tile 128x128x64 (smaller)"};
        case Bottleneck::kLaunchTailBound:
            return {"schedule stream_k", "splitk 2", "tile 128x128x64 (more tiles per wave)"};
        case Bottleneck::kSharedMemoryBound:
            return {"tile MxNx32 or MxNx128 (a different tile K changes the smem layout)",
                    "schedule tma_ws (TMA writes swizzled smem)"};
        case Bottleneck::kSpillBound:
            return {"tile 128x128x64 (smaller accumulator)", "schedule cooperative",
                    "stages 3"};
        case Bottleneck::kUncoalescedMemory:
            return {"operand layouts with K contiguous (row A, col B)", "schedule tma_ws"};
        case Bottleneck::kUnknown: break;
    }
    return {};
}

Moves rowwise_moves(Bottleneck b) {
    switch (b) {
        case Bottleneck::kDramBound:
            return {"vec 8", "rows_per_block 4",
                    "fuse into the producer's epilogue (gemm epilogue chain)"};
        case Bottleneck::kL2Bound: return {"vec 8", "rows_per_block 2", "passes 1"};
        case Bottleneck::kSimtComputeBound: return {"online", "passes 1", "vec 8"};
        case Bottleneck::kLatencyBoundLowOccupancy:
            return {"threads 512 (more threads)", "rows_per_block 1", "split 2"};
        case Bottleneck::kLaunchTailBound: return {"split 4", "rows_per_block 1", "threads 128"};
        case Bottleneck::kSharedMemoryBound: return {"threads 256", "vec 4", "rows_per_block 1"};
        case Bottleneck::kSpillBound:
            return {"passes 2 (do not cache the row in registers)", "rows_per_block 1",
                    "threads 1024 (fewer elements per thread)"};
        case Bottleneck::kUncoalescedMemory:
            return {"vec 4 / vec 8", "over the contiguous (last) dim"};
        case Bottleneck::kTensorComputeBound:
        case Bottleneck::kUnknown: break;
    }
    return {};
}

Moves map_moves(Bottleneck b) {
    switch (b) {
        case Bottleneck::kDramBound:
            return {"vec 8", "items 2", "fuse into the producer's epilogue (gemm epilogue chain)"};
        case Bottleneck::kL2Bound: return {"vec 8", "grid_stride"};
        case Bottleneck::kSimtComputeBound: return {"vec 8", "items 4"};
        case Bottleneck::kLatencyBoundLowOccupancy: return {"block 512", "items 4", "vec 8"};
        case Bottleneck::kLaunchTailBound: return {"block 128", "vec 4", "items 1"};
        case Bottleneck::kSpillBound: return {"items 1", "vec 4"};
        case Bottleneck::kUncoalescedMemory: return {"vec 4 / vec 8", "block 256"};
        case Bottleneck::kSharedMemoryBound:
        case Bottleneck::kTensorComputeBound:
        case Bottleneck::kUnknown: break;
    }
    return {};
}

}  // namespace

std::vector<std::string> moves_for(Bottleneck b, const DiagnoseContext& ctx) {
    const bool near_sol = ctx.fraction_of_sol && *ctx.fraction_of_sol >= kNearSolFraction;
    if (near_sol && (b == Bottleneck::kDramBound || b == Bottleneck::kTensorComputeBound))
        return {"stop: within " + std::to_string(static_cast<int>(kNearSolFraction * 100)) +
                "% of SOL on the limiting unit"};
    if (!ctx.kind) {  // kind unknown (e.g. a standalone benchmark kernel): all kinds' moves
        Moves all;
        for (const Moves& m : {gemm_moves(b), rowwise_moves(b), map_moves(b)})
            if (!m.empty() && std::find(all.begin(), all.end(), m.front()) == all.end())
                all.push_back(m.front());
        return all;
    }
    switch (*ctx.kind) {
        case KernelKind::kGemm: return gemm_moves(b);
        case KernelKind::kRowwise: return rowwise_moves(b);
        case KernelKind::kMap: return map_moves(b);
    }
    return {};
}

}  // namespace kforge::profile
