// Out-of-bounds write: every thread also stores far past the end of Y (an illegal address,
// which is a sticky error: the context is lost and the worker must be replaced).
extern "C" __global__ void fault_kernel(const float* __restrict__ x, const float* __restrict__ g,
                                        float* __restrict__ y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        y[i] = x[i] * g[i];
        y[i + (1ll << 40)] = 0.0f;
    }
}
