// Interface between the harness (main.cu) and the CUTLASS GEMM translation units: each TU
// instantiates one or more sm90 TMA warp-specialized cooperative tf32 GEMMs over staged
// operands A' (M x K', row-major) and B' (N x K', K-major), D = A' B'^T (M x N, row-major f32).
#pragma once
#include <cuda_runtime.h>
#include <memory>
#include <string>

namespace tf32x3 {

struct GemmOp {
    virtual ~GemmOp() = default;
    // Builds the CUTLASS arguments. interval: mma_promotion_interval in MMA instructions (only
    // for promoting ops; ignored otherwise). dry: can_implement only (no device calls).
    // Returns "" on success, else a message.
    virtual std::string init(const float* a, const float* b, float* d, int m, int n, int k,
                             int interval, bool dry) = 0;
    virtual cudaError_t run(cudaStream_t stream) = 0;
    virtual int mmas_per_kblock() const = 0;  // tile K / wgmma K
    virtual std::string desc() const = 0;
};

// gemm_plain.cu: the ordinary sm90 tf32 mainloop (MainloopSm90TmaGmmaWarpSpecialized).
std::unique_ptr<GemmOp> make_plain_128x256_c2x1();
std::unique_ptr<GemmOp> make_plain_128x128_c2x1();
// gemm_promo.cu: the same collective with the FP8 promotion mainloop
// (MainloopSm90TmaGmmaWarpSpecializedFP8): wgmma into a temporary accumulator that is added
// into the fp32 register accumulator every `interval` MMAs.
std::unique_ptr<GemmOp> make_promo_128x128_c2x1();
std::unique_ptr<GemmOp> make_promo_128x192_c2x1();

}  // namespace tf32x3
