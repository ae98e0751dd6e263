// The CUDA driver API, reached at run time: libcuda.so.1 is dlopen()ed and every entry point is
// resolved with cuGetProcAddress at the ABI of the headers kforge was built with, so kforge and
// libkforge_runtime.so link and run (device-free) where no driver is installed. The evaluator's
// CUDA device (device/) and the runtime's launches share this one table.
#pragma once

#include <cuda.h>

#include <string>

#include "common/expected.h"

namespace kforge::runtime {

#define KFORGE_DRIVER_FUNCTIONS(X)                                                          \
    X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName)   \
    X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDeviceGetUuid)                          \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)             \
    X(cuCtxGetCurrent) X(cuCtxGetDevice)                                                    \
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

}  // namespace kforge::runtime
