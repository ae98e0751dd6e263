// Manual GPU smoke of a kforge CUTLASS build (not in CTest yet; the evaluator owns launching).
// Build: g++ -std=c++17 -I/usr/local/cuda/include -I. tests/codegen/gemm_gpu_smoke.cpp -o smoke \
//   -L/usr/local/cuda/lib64/stubs -lcuda -ldl;  run: ./smoke DIR  (DIR from `kforge compile` of
// tests/compile/data/gemm_bias_relu.kf). Passed on an H200 (driver 580): 512x384x256, 0 errors.
// GPU smoke test of a kforge CUTLASS build: dlopen the host library, build params, launch the
// cubin's wrapper with cuLaunchKernelEx (cluster attribute), compare Y = relu(X W^T + b) with a
// CPU reference on a small problem (dims passed at run time).
#include <cuda.h>
#include <dlfcn.h>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <random>
#include "codegen/host_abi.h"
#define CK(x) do { CUresult r = (x); if (r != CUDA_SUCCESS) { const char* s; cuGetErrorString(r, &s); std::printf("%s failed: %s\n", #x, s); return 1; } } while (0)
static uint16_t to_bf16(float f) { uint32_t u; std::memcpy(&u, &f, 4); u += 0x7fff + ((u >> 16) & 1); return u >> 16; }
static float from_bf16(uint16_t h) { uint32_t u = uint32_t(h) << 16; float f; std::memcpy(&f, &u, 4); return f; }
int main(int argc, char** argv) {
    const char* dir = argv[1];
    int64_t M = 512, N = 384, K = 256;
    CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
    int sms; CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    std::string lib = std::string(dir) + "/kernels_host.so", cub = std::string(dir) + "/kernels.cubin";
    void* h = dlopen(lib.c_str(), RTLD_NOW); if (!h) { std::printf("dlopen: %s\n", dlerror()); return 1; }
    auto build = (KforgeParamBuilderFn)dlsym(h, "kforge_build_k0");
    CUmodule mod; CK(cuModuleLoad(&mod, cub.c_str())); CUfunction fn; CK(cuModuleGetFunction(&fn, mod, "kforge_k0"));
    std::mt19937 rng(1); std::uniform_real_distribution<float> u(-1, 1);
    std::vector<uint16_t> X(M*K), W(N*K), b(N), Y(M*N);
    for (auto& v : X) v = to_bf16(u(rng)); for (auto& v : W) v = to_bf16(u(rng)); for (auto& v : b) v = to_bf16(u(rng));
    CUdeviceptr dX, dW, db, dY; CK(cuMemAlloc(&dX, X.size()*2)); CK(cuMemAlloc(&dW, W.size()*2)); CK(cuMemAlloc(&db, b.size()*2)); CK(cuMemAlloc(&dY, Y.size()*2));
    CK(cuMemcpyHtoD(dX, X.data(), X.size()*2)); CK(cuMemcpyHtoD(dW, W.data(), W.size()*2)); CK(cuMemcpyHtoD(db, b.data(), b.size()*2)); CK(cuMemsetD8(dY, 0, Y.size()*2));
    void* tensors[4] = {(void*)dX, (void*)dW, (void*)dY, (void*)db};  // builder_tensors: X W Y b
    int64_t dims[3] = {K, M, N};  // sorted by name
    KforgeBuildArgs a{}; a.abi_version = KFORGE_HOST_ABI_VERSION; a.num_tensors = 4; a.tensors = tensors; a.num_dims = 3; a.dims = dims; a.sm_count = sms;
    alignas(64) static unsigned char blob[4096];
    KforgeBuiltLaunch l{}; l.params = blob; l.params_capacity = sizeof blob;
    int rc = build(&a, &l);
    CUdeviceptr ws = 0;
    if (rc == KFORGE_BUILD_NEED_WORKSPACE) { CK(cuMemAlloc(&ws, l.workspace_bytes)); CK(cuMemsetD8(ws, 0, l.workspace_bytes)); a.workspace = (void*)ws; rc = build(&a, &l); }
    std::printf("builder rc=%d params=%llu grid=%u,%u,%u block=%u cluster=%u,%u smem=%u ws=%llu\n", rc, (unsigned long long)l.params_bytes, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.cluster[0], l.cluster[1], l.smem_bytes, (unsigned long long)l.workspace_bytes);
    if (rc != 0) return 1;
    CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, l.smem_bytes));
    CUlaunchConfig cfg{}; cfg.gridDimX = l.grid[0]; cfg.gridDimY = l.grid[1]; cfg.gridDimZ = l.grid[2];
    cfg.blockDimX = l.block[0]; cfg.blockDimY = l.block[1]; cfg.blockDimZ = l.block[2]; cfg.sharedMemBytes = l.smem_bytes;
    CUlaunchAttribute attr{}; attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION; attr.value.clusterDim.x = l.cluster[0]; attr.value.clusterDim.y = l.cluster[1]; attr.value.clusterDim.z = l.cluster[2];
    cfg.attrs = &attr; cfg.numAttrs = 1;
    void* params[1] = {blob};
    CK(cuLaunchKernelEx(&cfg, fn, params, nullptr)); CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(Y.data(), dY, Y.size()*2));
    double worst = 0; int64_t bad = 0;
    for (int64_t i = 0; i < M; ++i) for (int64_t j = 0; j < N; ++j) {
        double acc = 0; for (int64_t k = 0; k < K; ++k) acc += double(from_bf16(X[i*K+k])) * from_bf16(W[j*K+k]);
        double ref = std::max(0.0, acc + from_bf16(b[j])); double got = from_bf16(Y[i*N+j]);
        double err = std::fabs(got - ref); worst = std::max(worst, err); if (err > 2e-2 + 2e-2 * std::fabs(ref)) ++bad;
    }
    std::printf("max abs err %.4g, %lld of %lld outside tolerance\n", worst, (long long)bad, (long long)(M*N));
    return bad == 0 ? 0 : 2;
}
