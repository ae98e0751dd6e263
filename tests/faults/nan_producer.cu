// NaN producer: correct except that every 1000th element is 0/0.
extern "C" __global__ void fault_kernel(const float* __restrict__ x, const float* __restrict__ g,
                                        float* __restrict__ y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        float v = x[i] * g[i];
        if (i % 1000 == 0) v = __int_as_float(0x7fc00000);
        y[i] = v;
    }
}
