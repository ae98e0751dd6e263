// Helpers of the GPU self-test (gpu_selftest.cu): device buffers, cluster launches, an output
// chain that just stores, input distributions and the comparison with an fp64 reference.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/common.cuh"

#define CHECK(x)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            std::printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__,       \
                        __LINE__, #x);                                                         \
            std::exit(3);                                                                      \
        }                                                                                      \
    } while (0)

// The simplest chain: store the value into y (dtype TO).
template <typename TO> struct StoreChain {
    TO* y;
    template <int V> __device__ __forceinline__ void run(const float (&v)[V], int64_t i) const {
        kforge::store_vec<V>(y + i, v);
    }
};

template <typename T> float host_f32(T v);
template <> inline float host_f32<float>(float v) { return v; }
template <> inline float host_f32<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <> inline float host_f32<__half>(__half v) { return __half2float(v); }
template <typename T> T host_from(float v);
template <> inline float host_from<float>(float v) { return v; }
template <> inline __nv_bfloat16 host_from<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> inline __half host_from<__half>(float v) { return __float2half_rn(v); }

// A device buffer with a host mirror of values (as the device dtype rounds them).
template <typename T> struct Buf {
    std::vector<double> host;  // values as stored
    T* dev = nullptr;
    size_t n = 0;
    explicit Buf(size_t count) : host(count), n(count) {
        CHECK(cudaMalloc(&dev, count * sizeof(T) + 64));
    }
    ~Buf() { cudaFree(dev); }
    void fill(std::mt19937& rng, int dist) {
        std::vector<T> h(n);
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        std::normal_distribution<float> g(5.f, 10.f);
        for (size_t i = 0; i < n; ++i) {
            h[i] = host_from<T>(dist == 0 ? u(rng) : g(rng));
            host[i] = host_f32(h[i]);
        }
        CHECK(cudaMemcpy(dev, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    }
    void poison() { CHECK(cudaMemset(dev, 0xff, n * sizeof(T))); }  // NaN in every dtype
    std::vector<double> read() const {
        std::vector<T> h(n);
        CHECK(cudaMemcpy(h.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost));
        std::vector<double> r(n);
        for (size_t i = 0; i < n; ++i) r[i] = host_f32(h[i]);
        return r;
    }
};

// Launch with `smem` bytes of dynamic shared memory (staged rows) and a cluster of `cluster`
// CTAs along x (above 8: non-portable, allowed on the kernel first).
template <typename... Args>
void launch_smem(void (*k)(Args...), unsigned grid, unsigned block, unsigned cluster,
                 size_t smem, Args... args) {
    if (smem > 0) {
        CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    }
    if (cluster > 8) {
        CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = cluster > 1 ? 1 : 0;
    CHECK(cudaLaunchKernelEx(&cfg, k, args...));
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
}

template <typename... Args>
void launch(void (*k)(Args...), unsigned grid, unsigned block, unsigned cluster, Args... args) {
    launch_smem(k, grid, block, cluster, 0, args...);
}

// Dynamic shared memory of a row config's stage (kernels/common.cuh RowCfg::STAGED).
template <class C, typename T> constexpr size_t stage_bytes() {
    return size_t(C::RPB) * C::STAGE_ELEMS * sizeof(T);
}

inline int g_failures = 0, g_cases = 0;

// Passes when every element is finite where the reference is, and within atol + rtol*|ref|.
inline void compare(const std::string& name, const std::vector<double>& got,
                    const std::vector<double>& ref, double atol, double rtol) {
    ++g_cases;
    size_t bad = 0, first = got.size();
    double worst = 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
        const bool ok = std::isnan(ref[i]) ? std::isnan(got[i])
                        : std::isinf(ref[i]) ? got[i] == ref[i]
                                             : std::fabs(got[i] - ref[i]) <= atol + rtol * std::fabs(ref[i]);
        if (!ok) {
            if (first == got.size()) first = i;
            ++bad;
        }
        if (std::isfinite(ref[i]) && std::isfinite(got[i])) {
            worst = std::max(worst, std::fabs(got[i] - ref[i]));
        }
    }
    if (bad) {
        ++g_failures;
        std::printf("FAIL %-60s %zu/%zu bad; first [%zu] got %.8g want %.8g\n", name.c_str(), bad,
                    got.size(), first, got[first], ref[first]);
    } else {
        std::printf("ok   %-60s max |err| %.3g\n", name.c_str(), worst);
    }
}
