// Ordinary sm90 cooperative tf32 GEMMs over the staged K' = 3K operands (variants 1 and 3).
#include "gemm_impl.cuh"

namespace tf32x3 {
std::unique_ptr<GemmOp> make_plain_128x256_c2x1() {
    return std::make_unique<GemmOpImpl<Tf32Gemm<128, 256, 32, 2, 1, false>>>(false);
}
std::unique_ptr<GemmOp> make_plain_128x128_c2x1() {
    return std::make_unique<GemmOpImpl<Tf32Gemm<128, 128, 32, 2, 1, false>>>(false);
}
}  // namespace tf32x3
