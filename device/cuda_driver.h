// Where driver results become evaluation statuses (DESIGN decision 2), and the checked-call
// macro for the CUDA device's driver calls. The driver table itself is runtime/cuda_driver.h's.
#pragma once

#include <cuda.h>

#include <string>

#include "common/expected.h"
#include "runtime/cuda_driver.h"
#include "store/enums.h"

namespace kforge::eval {

// The driver table and its helpers live in runtime/ (the launch path device/ shares with
// libkforge_runtime.so); the evaluator names them as before.
using runtime::DriverApi;
using runtime::driver_api;
using runtime::driver_error_string;
using runtime::launch_config;

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
