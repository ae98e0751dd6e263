// Per-kernel times from per-launch times (device/device.h TimingResult::kernel_times_ns): a
// program kernel may run as several launches (conv2d's four, a GEMM's operand-staging
// pre-kernel, a two-pass reduction), each named after its kernel in the launch plan
// (codegen/launch_plan.h KernelLaunch::name). Device-free, so the grouping and the medians are
// unit tested without a GPU; the CUDA device's per-kernel pass (device/cuda_device_time.cpp)
// measures the launch times.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kforge::eval {

struct KernelGrouping {
    std::vector<size_t> kernel_of_launch;  // per launch, the index of its program kernel
    size_t kernels = 0;                    // program kernels with at least one launch
};

// Launches grouped by kernel name, kernels numbered in `program_kernels`' order (the program's
// kernel names) with any launch name it lacks after them in first-launch order; a program
// kernel without a launch gets no index.
KernelGrouping group_launches(const std::vector<std::string>& launch_names,
                              const std::vector<std::string>& program_kernels);

// Per kernel, the median over iterations of the sum of its launches' times; `launch_ns` holds
// one row per iteration, one time per launch. Empty when there is no iteration or a row's size
// differs from the grouping's launch count.
std::vector<double> median_kernel_times(const KernelGrouping& grouping,
                                        const std::vector<std::vector<double>>& launch_ns);

}  // namespace kforge::eval
