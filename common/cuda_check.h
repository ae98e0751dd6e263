// The one checked-call macro for CUDA runtime, driver, NVRTC and cuBLAS calls. It records the
// statement, file and line and returns a kforge::Error from the enclosing function, which must
// return an Expected<...> or Status.
#pragma once

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <string>

#include "common/expected.h"

namespace kforge {

inline std::string cuda_error_string(cudaError_t e) { return cudaGetErrorName(e) + std::string(": ") + cudaGetErrorString(e); }
inline std::string cuda_error_string(CUresult e) {
    const char* name = nullptr;
    const char* text = nullptr;
    cuGetErrorName(e, &name);
    cuGetErrorString(e, &text);
    return std::string(name ? name : "CUDA_ERROR_UNKNOWN") + ": " + (text ? text : "unknown driver error");
}
inline std::string cuda_error_string(nvrtcResult e) { return nvrtcGetErrorString(e); }
inline std::string cuda_error_string(cublasStatus_t e) { return std::string("cuBLAS status ") + std::to_string(static_cast<int>(e)); }

inline bool cuda_ok(cudaError_t e) { return e == cudaSuccess; }
inline bool cuda_ok(CUresult e) { return e == CUDA_SUCCESS; }
inline bool cuda_ok(nvrtcResult e) { return e == NVRTC_SUCCESS; }
inline bool cuda_ok(cublasStatus_t e) { return e == CUBLAS_STATUS_SUCCESS; }

}  // namespace kforge

#define KFORGE_CUDA_CHECK(stmt)                                                               \
    do {                                                                                      \
        auto kforge_status_ = (stmt);                                                         \
        if (!::kforge::cuda_ok(kforge_status_)) {                                             \
            return ::kforge::make_error(std::string(__FILE__) + ":" + std::to_string(__LINE__), \
                                        std::string(#stmt) + " failed: " +                   \
                                            ::kforge::cuda_error_string(kforge_status_));     \
        }                                                                                     \
    } while (0)
