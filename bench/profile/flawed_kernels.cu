// Deliberately flawed kernels, run back to back, each with one bottleneck the diagnosis must
// name (bench/profile/expected.txt), plus one good streaming copy as the dram_bound control.
// Built and profiled by bench/profile/record_fixtures.sh; standalone (no kforge code).
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a bench/profile/flawed_kernels.cu -o flawed
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                                            \
    do {                                                                                    \
        cudaError_t e_ = (x);                                                               \
        if (e_ != cudaSuccess) {                                                            \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,                  \
                         cudaGetErrorString(e_));                                           \
            std::exit(1);                                                                   \
        }                                                                                   \
    } while (0)

// Control: coalesced 16-byte loads and stores, one float4 per thread -> dram_bound.
__global__ void copy_streaming(const float4* __restrict__ in, float4* __restrict__ out, long n4) {
    long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
    if (i < n4) out[i] = in[i];
}

// Uncoalesced: consecutive threads read addresses 32 floats apart (32 sectors per request).
__global__ void strided_load(const float* __restrict__ in, float* __restrict__ out, long n) {
    long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
    long j = (i * 32) % n + (i * 32) / n;  // a permutation of 0..n-1 for n divisible by 32
    if (i < n) out[i] = in[j] * 2.0f;
}

// Bank conflicts: a 32x32 float tile without padding, read by column (32-way conflicts),
// many times over so shared memory dominates.
__global__ void smem_transpose_conflicts(const float* __restrict__ in, float* __restrict__ out) {
    __shared__ float tile[32][32];
    const float* src = in + blockIdx.x * 1024;
    int tx = threadIdx.x, ty = threadIdx.y;  // block 32x32
    tile[ty][tx] = src[ty * 32 + tx];
    __syncthreads();
    float acc = 0.f;
#pragma unroll 4
    for (int r = 0; r < 64; ++r) acc += tile[(tx + r) & 31][ty];  // column walk: same bank
    out[blockIdx.x * 1024 + ty * 32 + tx] = acc;
}

// Local memory: a per-thread array indexed at run time lives in local memory (stack), every
// access an LSU local load or store, like a register spill.
__global__ void local_array_spill(const float* __restrict__ in, float* __restrict__ out, int steps) {
    float state[96];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 96; ++k) state[k] = in[i] + k;
    unsigned idx = static_cast<unsigned>(i);
    for (int s = 0; s < steps; ++s) {
        idx = idx * 1664525u + 1013904223u;
        state[idx % 96] += state[(idx >> 8) % 96] * 0.5f;
    }
    float acc = 0.f;
    for (int k = 0; k < 96; ++k) acc += state[k];
    out[i] = acc;
}

// Tiny grid: 2 blocks grid-stride over a large copy -> most SMs idle (launch_tail_bound).
__global__ void tiny_grid_copy(const float* __restrict__ in, float* __restrict__ out, long n) {
    for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<long>(gridDim.x) * blockDim.x)
        out[i] = in[i];
}

// Latency bound: one warp per block, two blocks per SM, each warp follows a dependent chain
// through a random cycle in a buffer far larger than L2 (warp-uniform: one sector a load).
__global__ void pointer_chase(const unsigned* __restrict__ next, unsigned* __restrict__ out,
                              int steps) {
    unsigned p = (blockIdx.x * 7919u) % (1u << 26);
    for (int s = 0; s < steps; ++s) p = next[p];
    if (threadIdx.x == 0) out[blockIdx.x] = p;
}

int main() {
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const long n = 1L << 26;  // 64 Mi floats = 256 MiB per buffer (>> 50 MB L2)
    float *a = nullptr, *b = nullptr;
    unsigned *next = nullptr, *sink = nullptr;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMalloc(&next, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&sink, 4096 * sizeof(unsigned)));
    CHECK(cudaMemset(a, 0, n * sizeof(float)));
    // A single random cycle (Sattolo's shuffle) over 2^26 slots for the pointer chase.
    unsigned* h = static_cast<unsigned*>(std::malloc(n * sizeof(unsigned)));
    for (long i = 0; i < n; ++i) h[i] = static_cast<unsigned>(i);
    unsigned long long x = 88172645463325252ull;
    for (long i = n - 1; i > 0; --i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        long j = static_cast<long>(x % static_cast<unsigned long long>(i));
        unsigned t = h[i];
        h[i] = h[j], h[j] = t;
    }
    unsigned* perm = static_cast<unsigned*>(std::malloc(n * sizeof(unsigned)));
    for (long i = 0; i < n; ++i) perm[h[i]] = h[(i + 1) % n];
    CHECK(cudaMemcpy(next, perm, n * sizeof(unsigned), cudaMemcpyHostToDevice));
    std::free(h);
    std::free(perm);

    copy_streaming<<<static_cast<unsigned>(n / 4 / 256), 256>>>(
        reinterpret_cast<const float4*>(a), reinterpret_cast<float4*>(b), n / 4);
    strided_load<<<static_cast<unsigned>(n / 256), 256>>>(a, b, n);
    smem_transpose_conflicts<<<static_cast<unsigned>(n / 1024), dim3(32, 32)>>>(a, b);
    local_array_spill<<<static_cast<unsigned>((1 << 20) / 256), 256>>>(a, b, 256);
    tiny_grid_copy<<<2, 256>>>(a, b, n / 4);
    pointer_chase<<<2 * sms, 32>>>(next, sink, 2000);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::printf("flawed_kernels: 6 kernels ran on %d SMs\n", sms);
    return 0;
}
