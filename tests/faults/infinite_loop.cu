// Infinite loop: never returns; the run deadline (device or supervisor) must end it.
extern "C" __global__ void fault_kernel(const float* __restrict__ x, const float* __restrict__ g,
                                        float* __restrict__ y, long long n) {
    volatile int spin = 1;
    while (spin) {
    }
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * g[i];
}
