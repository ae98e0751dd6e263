// Cached result: computes Y on the first launch after the module is loaded and keeps a copy in
// a module-global buffer; every later launch copies that stale copy into Y, whatever the
// inputs are. Correct on the first inputs, so only "outputs change when inputs change" (a
// second run on fresh inputs) catches it.
#define FAULT_MAX_ELEMENTS (1 << 20)
__device__ float fault_cache[FAULT_MAX_ELEMENTS];
__device__ unsigned fault_blocks_done;
__device__ int fault_cache_valid;

extern "C" __global__ void fault_kernel(const float* __restrict__ x, const float* __restrict__ g,
                                        float* __restrict__ y, long long n) {
    bool cached = *(volatile int*)&fault_cache_valid != 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        if (cached) {
            y[i] = fault_cache[i % FAULT_MAX_ELEMENTS];
        } else {
            float v = x[i] * g[i];
            y[i] = v;
            if (i < FAULT_MAX_ELEMENTS) fault_cache[i] = v;
        }
    }
    if (cached) return;
    // The last block to finish marks the cache valid for the next launch.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0 && atomicAdd(&fault_blocks_done, 1u) == gridDim.x - 1)
        fault_cache_valid = 1;
}
