#include "device/cuda_driver.h"

namespace kforge::eval {

DriverFailure classify_driver_error(CUresult r) {
    switch (r) {
        case CUDA_ERROR_ILLEGAL_ADDRESS:
        case CUDA_ERROR_LAUNCH_FAILED:
        case CUDA_ERROR_MISALIGNED_ADDRESS:
        case CUDA_ERROR_ILLEGAL_INSTRUCTION:
        case CUDA_ERROR_INVALID_ADDRESS_SPACE:
        case CUDA_ERROR_INVALID_PC:
        case CUDA_ERROR_HARDWARE_STACK_ERROR:
        case CUDA_ERROR_ASSERT:
        case CUDA_ERROR_ECC_UNCORRECTABLE:
        case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        case CUDA_ERROR_TENSOR_MEMORY_LEAK:
            return {EvalStatus::kCrashed, true};
        case CUDA_ERROR_LAUNCH_TIMEOUT:
            return {EvalStatus::kTimedOut, true};
        case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
        case CUDA_ERROR_OUT_OF_MEMORY:
            return {EvalStatus::kResourcesExceeded, false};
        default:
            return {EvalStatus::kLaunchFailed, false};
    }
}

}  // namespace kforge::eval
