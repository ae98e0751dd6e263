#include "device/calibrate.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/cuda_check.h"
#include "common/stats.h"

namespace kforge {
namespace {

constexpr int64_t kGiB = 1024LL * 1024 * 1024;

struct DeviceFree {
    void operator()(void* p) const { cudaFree(p); }
};
using DeviceBuffer = std::unique_ptr<void, DeviceFree>;

Expected<DeviceBuffer> device_alloc(size_t bytes) {
    void* p = nullptr;
    KFORGE_CUDA_CHECK(cudaMalloc(&p, bytes));
    return DeviceBuffer(p);
}

struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Events() {
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
    }
};

// cuBLAS is loaded with dlopen when a calibration starts (libcublas.so.<major>, else the
// toolkit's lib folder), so kforge starts without it; the CUDA runtime is linked statically.
struct CublasApi {
    decltype(&::cublasCreate_v2) create = nullptr;
    decltype(&::cublasDestroy_v2) destroy = nullptr;
    decltype(&::cublasGetVersion_v2) get_version = nullptr;
    decltype(&::cublasSetMathMode) set_math_mode = nullptr;
    // cublas_api.h overloads cublasGemmEx in C++; this is the C entry point's type
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                              const void*, const void*, cudaDataType, int, const void*,
                              cudaDataType, int, const void*, void*, cudaDataType, int,
                              cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
};

Expected<CublasApi> load_cublas() {
    const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* lib = nullptr;
    for (const std::string& name : {soname, std::string(KFORGE_CUDA_LIBDIR) + "/" + soname})
        if ((lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
        const char* why = dlerror();
        return make_error("cublas", "cannot load cuBLAS (" + soname + "): " +
                                        (why ? why : "not found"));
    }
    CublasApi api;
    std::string missing;
    auto load = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
        if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
    };
    load(api.create, "cublasCreate_v2");
    load(api.destroy, "cublasDestroy_v2");
    load(api.get_version, "cublasGetVersion_v2");
    load(api.set_math_mode, "cublasSetMathMode");
    load(api.gemm_ex, "cublasGemmEx");
    if (!missing.empty()) return make_error("cublas", soname + " lacks " + missing);
    return api;
}

Expected<const CublasApi*> cublas_api() {
    static std::once_flag once;
    static std::optional<Expected<CublasApi>> loaded;
    std::call_once(once, [] { loaded.emplace(load_cublas()); });
    if (!loaded->ok()) return loaded->error();
    return &loaded->value();
}

struct CublasHandle {
    const CublasApi* api = nullptr;
    cublasHandle_t h = nullptr;
    ~CublasHandle() {
        if (h) api->destroy(h);
    }
};

// Times `launch` (which enqueues work on the default stream): warm-up, then the median of
// `runs` CUDA-event intervals, in seconds.
template <typename Launch>
Expected<double> time_median(const CalibrateOptions& o, Launch launch) {
    Events ev;
    KFORGE_CUDA_CHECK(cudaEventCreate(&ev.start));
    KFORGE_CUDA_CHECK(cudaEventCreate(&ev.stop));
    for (int i = 0; i < o.warmup_runs; ++i) {
        if (auto s = launch(); !s) return s.error();
    }
    KFORGE_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> times;
    for (int i = 0; i < std::max(1, o.timed_runs); ++i) {
        KFORGE_CUDA_CHECK(cudaEventRecord(ev.start));
        if (auto s = launch(); !s) return s.error();
        KFORGE_CUDA_CHECK(cudaEventRecord(ev.stop));
        KFORGE_CUDA_CHECK(cudaEventSynchronize(ev.stop));
        float ms = 0.0f;
        KFORGE_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.stop));
        times.push_back(static_cast<double>(ms) * 1e-3);
    }
    return median(times);
}

// Device-to-device copy: bytes read + written per second.
Expected<double> measure_copy(const CalibrateOptions& o, int64_t l2_bytes, int64_t* used) {
    size_t free_b = 0, total_b = 0;
    KFORGE_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    int64_t bytes = o.copy_bytes > 0 ? o.copy_bytes : std::max<int64_t>(kGiB, 8 * l2_bytes);
    bytes = std::min<int64_t>(bytes, static_cast<int64_t>(free_b) / 4);
    bytes &= ~int64_t{255};
    if (bytes <= 0) return make_error("calibrate", "not enough free device memory for the copy");
    *used = bytes;
    auto src = device_alloc(bytes);
    if (!src) return src.error();
    auto dst = device_alloc(bytes);
    if (!dst) return dst.error();
    KFORGE_CUDA_CHECK(cudaMemset(src->get(), 1, bytes));
    auto t = time_median(o, [&]() -> Status {
        KFORGE_CUDA_CHECK(cudaMemcpyAsync(dst->get(), src->get(), bytes, cudaMemcpyDeviceToDevice));
        return Ok{};
    });
    if (!t) return t.error();
    return 2.0 * static_cast<double>(bytes) / *t;
}

struct GemmCase {
    const char* unit;
    cudaDataType_t data_type;
    cublasComputeType_t compute;
};

// C = A * A (n x n, column major) on random data in [-1, 1): FLOP/s.
Expected<double> measure_gemm(const CalibrateOptions& o, const CublasHandle& h,
                              const GemmCase& g, const std::vector<float>& host) {
    const int n = o.gemm_size;
    const size_t elems = static_cast<size_t>(n) * n;
    const size_t elem_bytes = g.data_type == CUDA_R_32F ? 4 : 2;
    auto a = device_alloc(elems * elem_bytes);
    if (!a) return a.error();
    auto c = device_alloc(elems * elem_bytes);
    if (!c) return c.error();
    if (g.data_type == CUDA_R_32F) {
        KFORGE_CUDA_CHECK(cudaMemcpy(a->get(), host.data(), elems * 4, cudaMemcpyHostToDevice));
    } else if (g.data_type == CUDA_R_16BF) {
        std::vector<__nv_bfloat16> v(elems);
        for (size_t i = 0; i < elems; ++i) v[i] = __float2bfloat16(host[i]);
        KFORGE_CUDA_CHECK(cudaMemcpy(a->get(), v.data(), elems * 2, cudaMemcpyHostToDevice));
    } else {
        std::vector<__half> v(elems);
        for (size_t i = 0; i < elems; ++i) v[i] = __float2half(host[i]);
        KFORGE_CUDA_CHECK(cudaMemcpy(a->get(), v.data(), elems * 2, cudaMemcpyHostToDevice));
    }
    const float alpha = 1.0f, beta = 0.0f;
    auto t = time_median(o, [&]() -> Status {
        KFORGE_CUDA_CHECK(h.api->gemm_ex(h.h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha,
                                         a->get(), g.data_type, n, a->get(), g.data_type, n,
                                         &beta, c->get(), g.data_type, n, g.compute,
                                         CUBLAS_GEMM_DEFAULT));
        return Ok{};
    });
    if (!t) return t.error();
    return 2.0 * static_cast<double>(n) * n * n / *t;
}

std::string utc_now() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace

int cuda_device_count() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky-free error state
        return 0;
    }
    return n;
}

Expected<std::string> cuda_device_name(int device_index) {
    const int count = cuda_device_count();
    if (device_index < 0 || device_index >= count) {
        return make_error("--device-index", "no CUDA device " + std::to_string(device_index) +
                                                " (" + std::to_string(count) + " visible)");
    }
    cudaDeviceProp prop{};
    KFORGE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device_index));
    return std::string(prop.name);
}

Expected<Calibration> calibrate(const CalibrateOptions& o) {
    if (cuda_device_count() == 0) {
        return make_error("calibrate",
                          "no CUDA device visible (cudaGetDeviceCount found none); "
                          "calibration needs a GPU");
    }
    if (o.gemm_size < 256 || o.timed_runs < 1 || o.warmup_runs < 0) {
        return make_error("calibrate", "gemm_size must be >= 256 and timed_runs >= 1");
    }
    auto name = cuda_device_name(o.device_index);
    if (!name) return name.error();
    KFORGE_CUDA_CHECK(cudaSetDevice(o.device_index));
    cudaDeviceProp prop{};
    KFORGE_CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device_index));
    int clock_khz = 0;
    KFORGE_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, o.device_index));
    int driver = 0, runtime = 0, cublas_version = 0;
    KFORGE_CUDA_CHECK(cudaDriverGetVersion(&driver));
    KFORGE_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));

    Calibration cal;
    auto known = device_from_cuda_name(*name);
    cal.device = known ? known->name : *name;
    cal.measured_at = utc_now();

    int64_t copy_bytes = 0;
    auto bw = measure_copy(o, prop.l2CacheSize, &copy_bytes);
    if (!bw) return bw.error();
    cal.dram_bytes_per_s = *bw;

    auto cublas = cublas_api();
    if (!cublas) return cublas.error();
    CublasHandle handle{*cublas};
    KFORGE_CUDA_CHECK(handle.api->create(&handle.h));
    KFORGE_CUDA_CHECK(handle.api->get_version(handle.h, &cublas_version));
    KFORGE_CUDA_CHECK(handle.api->set_math_mode(handle.h, CUBLAS_DEFAULT_MATH));
    const size_t elems = static_cast<size_t>(o.gemm_size) * o.gemm_size;
    std::vector<float> host(elems);
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (auto& x : host) {  // xorshift64*: uniform in [-1, 1)
        state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
        x = static_cast<float>((state * 2685821657736338717ull) >> 40) / 8388608.0f - 1.0f;
    }
    const GemmCase cases[] = {
        {"fp32_simt", CUDA_R_32F, CUBLAS_COMPUTE_32F},  // default math: TF32 off
        {"tf32_tensor", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
        {"bf16_tensor", CUDA_R_16BF, CUBLAS_COMPUTE_32F},
        {"fp16_tensor", CUDA_R_16F, CUBLAS_COMPUTE_32F},
    };
    for (const auto& g : cases) {
        auto f = measure_gemm(o, handle, g, host);
        if (!f) return f.error();
        cal.peak_flops[g.unit] = *f;
    }
    cal.driver = "CUDA driver " + std::to_string(driver) + ", runtime " + std::to_string(runtime) +
                 ", cuBLAS " + std::to_string(cublas_version);
    cal.notes =
        "cuda_name=" + *name + "; cc=" + std::to_string(prop.major) + "." +
        std::to_string(prop.minor) + "; sm_count=" + std::to_string(prop.multiProcessorCount) +
        "; l2_bytes=" + std::to_string(prop.l2CacheSize) +
        "; smem_per_block_optin=" + std::to_string(prop.sharedMemPerBlockOptin) +
        "; clock_khz=" + std::to_string(clock_khz) + "; copy 2 x " + std::to_string(copy_bytes) +
        " bytes D2D; cuBLAS GemmEx " + std::to_string(o.gemm_size) +
        "^3 on random data; median of " + std::to_string(o.timed_runs) + " after " +
        std::to_string(o.warmup_runs) + " warm-up runs";
    return cal;
}

}  // namespace kforge
