// The CUDA driver API, reached at run time: libcuda.so.1 is dlopen()ed and every entry point is
// resolved with cuGetProcAddress at the ABI of the headers kforge was built with, so kforge
// links and runs (device-free) where no driver is installed. Also the one place where driver
// results become evaluation statuses (DESIGN decision 2).
#pragma once

#include <cuda.h>

#include <string>

#include "common/expected.h"
#include "store/enums.h"

namespace kforge::eval {

#define KFORGE_DRIVER_FUNCTIONS(X)                                                          \
    X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName)   \
    X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDeviceGetUuid)                          \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)             \
    X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncSetAttribute)      \
    X(cuLaunchKernelEx) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoH)      \
    X(cuMemsetD8Async) X(cuMemGetInfo) X(cuStreamCreate) X(cuStreamDestroy)                 \
    X(cuStreamQuery) X(cuEventCreate) X(cuEventRecord) X(cuEventQuery)                      \
    X(cuEventElapsedTime) X(cuEventDestroy) X(cuGetErrorName) X(cuGetErrorString)           \
    X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags)            \
    X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy)

struct DriverApi {
#define KFORGE_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
    KFORGE_DRIVER_FUNCTIONS(KFORGE_DRIVER_MEMBER)
#undef KFORGE_DRIVER_MEMBER
};

// The driver table (loaded once, process-wide) after a successful cuInit(0); an Error (an
// environment problem: no libcuda, old driver, no device) otherwise.
Expected<const DriverApi*> driver_api();

// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
std::string driver_error_string(const DriverApi& api, CUresult r);

// How a failing driver call ends an evaluation.
struct DriverFailure {
    EvalStatus status = EvalStatus::kLaunchFailed;
    bool context_lost = false;  // sticky error: the context (and the worker) is unusable
};
// Asynchronous kernel faults (illegal address, misaligned address, illegal instruction, trap,
// assert, launch failed, ...) -> kCrashed with context_lost; out of resources / memory and
// oversized shared memory -> kResourcesExceeded; a launch timeout -> kTimedOut; everything else
// (bad launch configuration, missing symbol, bad image) -> kLaunchFailed.
DriverFailure classify_driver_error(CUresult r);

// The launch configuration of one kernel (no attributes: the caller adds cluster dims).
inline CUlaunchConfig launch_config(const unsigned (&grid)[3], const unsigned (&block)[3],
                                    unsigned smem_bytes, CUstream stream) {
    CUlaunchConfig cfg{};
    cfg.gridDimX = grid[0];
    cfg.gridDimY = grid[1];
    cfg.gridDimZ = grid[2];
    cfg.blockDimX = block[0];
    cfg.blockDimY = block[1];
    cfg.blockDimZ = block[2];
    cfg.sharedMemBytes = smem_bytes;
    cfg.hStream = stream;
    return cfg;
}

}  // namespace kforge::eval

// KFORGE_CUDA_CHECK (common/cuda_check.h) for calls through the run-time driver table `api_`
// (common/cuda_check.h's CUresult overload would link libcuda): returns an Error from the
// enclosing function naming the call and the driver's message.
#define KFORGE_DRV(call)                                                              \
    do {                                                                              \
        CUresult kforge_r_ = api_->call;                                              \
        if (kforge_r_ != CUDA_SUCCESS)                                                \
            return ::kforge::make_error("cuda", std::string(#call) + " failed: " +   \
                                        driver_error_string(*api_, kforge_r_));       \
    } while (0)
