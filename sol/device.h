// The device table: datasheet figures of the GPUs kforge knows, looked up by name or alias.
// Peaks are DENSE (no 2:4 sparsity), in FLOP/s, at the boost clock the datasheet assumes; tensor
// peaks assume fp32 accumulation (GeForce parts halve fp16/bf16 then, and the table says so).
// Sources: NVIDIA datasheets and architecture whitepapers (H100/H200, A100, Ada, Blackwell),
// CUDA programming guide (shared memory / registers per compute capability). Where the hardware
// reports a figure that differs from the marketing one (H200's L2), the table records what
// cudaGetDeviceProperties reports.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace kforge {

// An execution unit with its own peak rate. Keys in JSON and on the CLI: to_string().
enum class ComputeUnit {
    kFp32Simt,    // "fp32_simt": CUDA cores, fp32 FMA
    kFp64Simt,    // "fp64_simt"
    kFp64Tensor,  // "fp64_tensor" (Ampere/Hopper/Blackwell data-center parts only)
    kTf32Tensor,  // "tf32_tensor"
    kBf16Tensor,  // "bf16_tensor"
    kFp16Tensor,  // "fp16_tensor"
    kFp8Tensor,   // "fp8_tensor" (Ada, Hopper, Blackwell)
};
std::string_view to_string(ComputeUnit u);
std::optional<ComputeUnit> compute_unit_from_string(std::string_view s);
const std::vector<ComputeUnit>& all_compute_units();

struct DeviceSpec {
    std::string name;                     // canonical key, e.g. "h200"
    std::string description;              // e.g. "NVIDIA H200 SXM 141 GB HBM3e"
    std::vector<std::string> aliases;     // other accepted names, lower case
    std::vector<std::string> cuda_names;  // what cudaDeviceProp::name reports
    int cc_major = 0;
    int cc_minor = 0;
    int sm_count = 0;
    double boost_clock_mhz = 0.0;  // max SM clock
    int64_t l2_bytes = 0;
    int64_t dram_bytes = 0;
    double dram_bytes_per_s = 0.0;
    int64_t smem_per_sm_bytes = 0;
    int64_t smem_per_block_optin_bytes = 0;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
    int regs_per_sm = 0;                     // 32-bit registers
    // MUFU (special function unit) results per clock per SM: 32-bit reciprocal, reciprocal
    // square root, log2, exp2, sine, cosine (CUDA C++ Programming Guide, "Arithmetic
    // Instructions" throughput table); 0 = unknown (no SFU term in the bounds).
    int sfu_per_clock_per_sm = 0;
    std::map<ComputeUnit, double> peak_flops;  // dense FLOP/s; a unit missing = not present
    std::string notes;
};

// Every known device, in a fixed order.
const std::vector<DeviceSpec>& device_table();

// MUFU results per second: sfu_per_clock_per_sm x SMs x boost clock (0 when unknown).
double sfu_ops_per_s(const DeviceSpec& d);

// Looks a device up by name or alias, case-insensitively ("h200", "H100-SXM", "a100").
// An unknown name is a user error that lists the known devices.
Expected<DeviceSpec> find_device(std::string_view name);

// Maps the name CUDA reports ("NVIDIA H200") to a table entry; nullopt when unknown.
std::optional<DeviceSpec> device_from_cuda_name(std::string_view cuda_name);

// "h100-pcie, h100-sxm, ..." for messages.
std::string known_device_names();

}  // namespace kforge
