// The CUDA driver API, reached at run time: libcuda.so.1 is dlopen()ed and every entry point is
// resolved with cuGetProcAddress at the ABI of the headers kforge was built with, so kforge and
// libkforge_runtime.so link and run (device-free) where no driver is installed. The evaluator's
// CUDA device (device/) and the runtime's launches share this one table.
#pragma once

#include <cuda.h>

#include <string>

#include "common/expected.h"

namespace kforge::runtime {

// Each entry point with the CUDA version whose ABI the prototype in <cuda.h> has: cuGetProcAddress
// is asked for exactly that version (asking for CUDA_VERSION would hand out the newest variant,
// e.g. CUDA 13's cuCtxGetDevice(CUdevice*, CUcontext), while cuda.h still declares the one-argument
// cuCtxGetDevice: called through the old type, the driver read a garbage context from a register
// and crashed depending on memory layout). cuda_driver.cpp checks every pair against
// <cudaTypedefs.h>'s PFN_<name>_v<version> at compile time.
#define KFORGE_DRIVER_FUNCTIONS(X)                                                          \
    X(cuInit, 2000) X(cuDriverGetVersion, 2020) X(cuDeviceGet, 2000)                        \
    X(cuDeviceGetCount, 2000) X(cuDeviceGetName, 2000) X(cuDeviceGetAttribute, 2000)        \
    X(cuDeviceTotalMem, 3020) X(cuDeviceGetUuid, 11040) X(cuDevicePrimaryCtxRetain, 7000)   \
    X(cuDevicePrimaryCtxRelease, 11000) X(cuCtxSetCurrent, 4000) X(cuCtxGetCurrent, 4000)   \
    X(cuCtxGetDevice, 2000) X(cuModuleLoadData, 2000) X(cuModuleUnload, 2000)               \
    X(cuModuleGetFunction, 2000) X(cuFuncSetAttribute, 9000) X(cuLaunchKernelEx, 11060)     \
    X(cuMemAlloc, 3020) X(cuMemFree, 3020) X(cuMemcpyHtoDAsync, 3020) X(cuMemcpyDtoH, 3020) \
    X(cuMemsetD8Async, 3020) X(cuMemGetInfo, 3020) X(cuStreamCreate, 2000)                  \
    X(cuStreamDestroy, 4000) X(cuStreamQuery, 2000) X(cuEventCreate, 2000)                  \
    X(cuEventRecord, 2000) X(cuEventQuery, 2000) X(cuEventElapsedTime, 12080)               \
    X(cuEventDestroy, 4000) X(cuGetErrorName, 6000) X(cuGetErrorString, 6000)               \
    X(cuStreamBeginCapture, 10010) X(cuStreamEndCapture, 10000)                             \
    X(cuGraphInstantiateWithFlags, 11040) X(cuGraphLaunch, 10000)                           \
    X(cuGraphExecDestroy, 10000) X(cuGraphDestroy, 10000) X(cuMemAllocHost, 3020)           \
    X(cuMemFreeHost, 2000) X(cuGraphExecUpdate, 12000) X(cuStreamIsCapturing, 10000)

struct DriverApi {
#define KFORGE_DRIVER_MEMBER(name, version) decltype(&::name) name = nullptr;
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
