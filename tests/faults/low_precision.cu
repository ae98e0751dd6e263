// bf16 computation under an fp32_strict policy: inputs rounded to bf16, product rounded to bf16.
// Within a loose tolerance, but the error profile shows bf16 rounding.
#include <cuda_bf16.h>
extern "C" __global__ void fault_kernel(const float* __restrict__ x, const float* __restrict__ g,
                                        float* __restrict__ y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        __nv_bfloat16 p = __hmul(__float2bfloat16(x[i]), __float2bfloat16(g[i]));
        y[i] = __bfloat162float(p);
    }
}
