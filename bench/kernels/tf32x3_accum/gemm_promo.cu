// sm90 cooperative tf32 GEMMs with the FP8 promotion mainloop (variant 2). 128x256 tiles would
// need 2 x 128 accumulator registers per thread (accumulator + promotion temporary) and spill
// (ptxas: 820 bytes spill stores), so the promoting kernels use 128x128 and 128x192 tiles
// (2 x 96 registers, no spills; N = 4096 leaves a partial last tile column).
#include "gemm_impl.cuh"

namespace tf32x3 {
std::unique_ptr<GemmOp> make_promo_128x128_c2x1() {
    return std::make_unique<GemmOpImpl<Tf32Gemm<128, 128, 32, 2, 1, true>>>(true);
}
std::unique_ptr<GemmOp> make_promo_128x192_c2x1() {
    return std::make_unique<GemmOpImpl<Tf32Gemm<128, 192, 32, 2, 1, true>>>(true);
}
}  // namespace tf32x3
