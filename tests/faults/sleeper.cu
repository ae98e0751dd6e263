// Sleeper: correct, but every thread sleeps about 0.5 ms first (about 100x the honest kernel's
// time). It must pass correctness and be recorded as slow, not fail.
extern "C" __global__ void fault_kernel(const float* __restrict__ x, const float* __restrict__ g,
                                        float* __restrict__ y, long long n) {
    for (int k = 0; k < 5; ++k) __nanosleep(100000);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        y[i] = x[i] * g[i];
}
