// Partial output: the last eighth of Y is never written (it keeps the harness's NaN poison).
extern "C" __global__ void fault_kernel(const float* __restrict__ x, const float* __restrict__ g,
                                        float* __restrict__ y, long long n) {
    long long written = n - n / 8;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < written;
         i += (long long)gridDim.x * blockDim.x)
        y[i] = x[i] * g[i];
}
