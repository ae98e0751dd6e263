// Infinite loop: never returns; the run deadline (device or supervisor) must end it.
// The loop must have a side effect: a side-effect-free infinite loop is undefined behaviour, and
// nvcc 13 removed it together with everything after it (seen on the H200: the kernel returned
// at once and wrote nothing). An asm volatile sleep cannot be removed.
extern "C" __global__ void fault_kernel(const float* __restrict__ x, const float* __restrict__ g,
                                        float* __restrict__ y, long long n) {
    for (;;) {
        asm volatile("nanosleep.u32 1000;");
    }
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * g[i];
}
