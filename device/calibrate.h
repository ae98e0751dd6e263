// Calibration on a real GPU: measures the DRAM ceiling (a large device-to-device copy, bytes
// read + written) and the GEMM ceilings per unit with cuBLAS (fp32 with TF32 off = fp32 SIMT,
// tf32, bf16, fp16; M = N = K = gemm_size, random data, warm-up, median of CUDA-event times).
// fp8 and fp64 keep their datasheet figures. Without a GPU every entry point returns an Error.
#pragma once

#include <cstdint>

#include "common/expected.h"
#include "sol/calibration.h"

namespace kforge {

struct CalibrateOptions {
    int device_index = 0;
    int gemm_size = 8192;    // M = N = K
    int64_t copy_bytes = 0;  // per buffer; 0: max(1 GiB, 8 x L2), within free memory
    int warmup_runs = 3;
    int timed_runs = 10;  // median of these
};

// How many CUDA devices are visible; 0 when there is no device or no driver.
int cuda_device_count();

// The CUDA name of a device ("NVIDIA H200"); Error when it does not exist.
Expected<std::string> cuda_device_name(int device_index);

// Measures the ceilings of one device. The result's `device` is the device table name when the
// CUDA name is known (device_from_cuda_name), otherwise the CUDA name itself.
Expected<Calibration> calibrate(const CalibrateOptions& options);

}  // namespace kforge
