#include "sol/device.h"

#include <algorithm>
#include <cctype>

namespace kforge {
namespace {

constexpr double kT = 1e12;   // TFLOP/s
constexpr double kGBs = 1e9;  // GB/s
constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * 1024;
constexpr int64_t kGB = 1000LL * 1000 * 1000;

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

// MUFU throughput, results per clock per SM, from the CUDA C++ Programming Guide's "Arithmetic
// Instructions" throughput table, row "32-bit floating-point reciprocal, reciprocal square root,
// base-2 logarithm (__log2f), base 2 exponential (exp2f), sine (__sinf), cosine (__cosf)": 16
// for compute capability 7.x, 8.0, 8.6, 8.9 and 9.0 (4 per SM sub-partition; 1/8 of the 128
// fp32 FMA results of these SMs). Blackwell (cc 10.0) is taken as equal: not checked here.
constexpr int kSfuPerClockPerSm = 16;

// Hopper (cc 9.0) and Blackwell data-center (cc 10.0): 228 KiB smem per SM, 227 KiB per block.
// Ampere GA100 (cc 8.0): 164 / 163 KiB. Ada (cc 8.9): 100 / 99 KiB. 64 K registers per SM.
std::vector<DeviceSpec> make_table() {
    using U = ComputeUnit;
    std::vector<DeviceSpec> t;
    t.push_back(DeviceSpec{
        .name = "h100-sxm",
        .description = "NVIDIA H100 SXM5 80 GB HBM3",
        .aliases = {"h100", "h100sxm", "h100-sxm5"},
        .cuda_names = {"NVIDIA H100 80GB HBM3"},
        .cc_major = 9,
        .cc_minor = 0,
        .sm_count = 132,
        .boost_clock_mhz = 1980.0,
        .l2_bytes = 50 * kMiB,
        .dram_bytes = 80 * kGB,
        .dram_bytes_per_s = 3350 * kGBs,
        .smem_per_sm_bytes = 228 * kKiB,
        .smem_per_block_optin_bytes = 227 * kKiB,
        .regs_per_sm = 65536,
        .sfu_per_clock_per_sm = kSfuPerClockPerSm,
        .peak_flops = {{U::kFp32Simt, 67.0 * kT},
                       {U::kFp64Simt, 34.0 * kT},
                       {U::kFp64Tensor, 67.0 * kT},
                       {U::kTf32Tensor, 494.7 * kT},
                       {U::kBf16Tensor, 989.4 * kT},
                       {U::kFp16Tensor, 989.4 * kT},
                       {U::kFp8Tensor, 1978.9 * kT}},
        .notes = "H100 datasheet (dense = half the sparse figures); L2 as cudaDeviceProp reports"});
    t.push_back(DeviceSpec{.name = "h100-pcie",
                           .description = "NVIDIA H100 PCIe 80 GB HBM2e",
                           .aliases = {"h100pcie"},
                           .cuda_names = {"NVIDIA H100 PCIe"},
                           .cc_major = 9,
                           .cc_minor = 0,
                           .sm_count = 114,
                           .boost_clock_mhz = 1755.0,
                           .l2_bytes = 50 * kMiB,
                           .dram_bytes = 80 * kGB,
                           .dram_bytes_per_s = 2000 * kGBs,
                           .smem_per_sm_bytes = 228 * kKiB,
                           .smem_per_block_optin_bytes = 227 * kKiB,
                           .regs_per_sm = 65536,
                           .sfu_per_clock_per_sm = kSfuPerClockPerSm,
                           .peak_flops = {{U::kFp32Simt, 51.2 * kT},
                                          {U::kFp64Simt, 25.6 * kT},
                                          {U::kFp64Tensor, 51.2 * kT},
                                          {U::kTf32Tensor, 378.0 * kT},
                                          {U::kBf16Tensor, 756.0 * kT},
                                          {U::kFp16Tensor, 756.0 * kT},
                                          {U::kFp8Tensor, 1513.0 * kT}},
                           .notes = "H100 datasheet (dense = half the sparse figures)"});
    t.push_back(DeviceSpec{
        .name = "h200",
        .description = "NVIDIA H200 SXM 141 GB HBM3e",
        .aliases = {"h200-sxm", "h200sxm"},
        .cuda_names = {"NVIDIA H200"},
        .cc_major = 9,
        .cc_minor = 0,
        .sm_count = 132,
        .boost_clock_mhz = 1980.0,
        .l2_bytes = 60 * kMiB,
        .dram_bytes = 141 * kGB,
        .dram_bytes_per_s = 4800 * kGBs,
        .smem_per_sm_bytes = 228 * kKiB,
        .smem_per_block_optin_bytes = 227 * kKiB,
        .regs_per_sm = 65536,
        .sfu_per_clock_per_sm = kSfuPerClockPerSm,
        .peak_flops = {{U::kFp32Simt, 67.0 * kT},
                       {U::kFp64Simt, 34.0 * kT},
                       {U::kFp64Tensor, 67.0 * kT},
                       {U::kTf32Tensor, 494.7 * kT},
                       {U::kBf16Tensor, 989.4 * kT},
                       {U::kFp16Tensor, 989.4 * kT},
                       {U::kFp8Tensor, 1978.9 * kT}},
        .notes = "H200 datasheet. Read on an H200 here (2026-11-30): 132 SMs, L2 62914560 B "
                 "(60 MiB; the H100 SXM reports 50 MiB), 232448 B smem per block opt-in, "
                 "1980 MHz; kforge calibrate measured 4.23 TB/s, bf16 798, tf32 414, fp32 SIMT "
                 "51.3 TFLOP/s"});
    t.push_back(DeviceSpec{.name = "a100-sxm",
                           .description = "NVIDIA A100 SXM4 80 GB HBM2e",
                           .aliases = {"a100", "a100-80gb", "a100sxm"},
                           .cuda_names = {"NVIDIA A100-SXM4-80GB"},
                           .cc_major = 8,
                           .cc_minor = 0,
                           .sm_count = 108,
                           .boost_clock_mhz = 1410.0,
                           .l2_bytes = 40 * kMiB,
                           .dram_bytes = 80 * kGB,
                           .dram_bytes_per_s = 2039 * kGBs,
                           .smem_per_sm_bytes = 164 * kKiB,
                           .smem_per_block_optin_bytes = 163 * kKiB,
                           .regs_per_sm = 65536,
                           .sfu_per_clock_per_sm = kSfuPerClockPerSm,
                           .peak_flops = {{U::kFp32Simt, 19.5 * kT},
                                          {U::kFp64Simt, 9.7 * kT},
                                          {U::kFp64Tensor, 19.5 * kT},
                                          {U::kTf32Tensor, 156.0 * kT},
                                          {U::kBf16Tensor, 312.0 * kT},
                                          {U::kFp16Tensor, 312.0 * kT}},
                           .notes = "A100 datasheet (80 GB SXM); no fp8 tensor cores"});
    t.push_back(DeviceSpec{.name = "l40s",
                           .description = "NVIDIA L40S 48 GB GDDR6",
                           .aliases = {"l40-s"},
                           .cuda_names = {"NVIDIA L40S"},
                           .cc_major = 8,
                           .cc_minor = 9,
                           .sm_count = 142,
                           .boost_clock_mhz = 2520.0,
                           .l2_bytes = 96 * kMiB,
                           .dram_bytes = 48 * kGB,
                           .dram_bytes_per_s = 864 * kGBs,
                           .smem_per_sm_bytes = 100 * kKiB,
                           .smem_per_block_optin_bytes = 99 * kKiB,
                           .regs_per_sm = 65536,
                           .sfu_per_clock_per_sm = kSfuPerClockPerSm,
                           .peak_flops = {{U::kFp32Simt, 91.6 * kT},
                                          {U::kFp64Simt, 1.43 * kT},
                                          {U::kTf32Tensor, 183.0 * kT},
                                          {U::kBf16Tensor, 362.05 * kT},
                                          {U::kFp16Tensor, 362.05 * kT},
                                          {U::kFp8Tensor, 733.0 * kT}},
                           .notes = "L40S datasheet; fp64 at 1/64 of fp32; no fp64 tensor cores"});
    t.push_back(DeviceSpec{.name = "b200",
                           .description = "NVIDIA B200 (HGX, 1000 W) 180 GB HBM3e",
                           .aliases = {"b200-sxm", "hgx-b200"},
                           .cuda_names = {"NVIDIA B200"},
                           .cc_major = 10,
                           .cc_minor = 0,
                           .sm_count = 148,
                           .boost_clock_mhz = 1965.0,
                           .l2_bytes = 126 * kMiB,
                           .dram_bytes = 180 * kGB,
                           .dram_bytes_per_s = 8000 * kGBs,
                           .smem_per_sm_bytes = 228 * kKiB,
                           .smem_per_block_optin_bytes = 227 * kKiB,
                           .regs_per_sm = 65536,
                           .sfu_per_clock_per_sm = kSfuPerClockPerSm,
                           .peak_flops = {{U::kFp32Simt, 75.0 * kT},
                                          {U::kFp64Simt, 37.0 * kT},
                                          {U::kFp64Tensor, 37.0 * kT},
                                          {U::kTf32Tensor, 1100.0 * kT},
                                          {U::kBf16Tensor, 2250.0 * kT},
                                          {U::kFp16Tensor, 2250.0 * kT},
                                          {U::kFp8Tensor, 4500.0 * kT}},
                           .notes = "HGX B200 datasheet per GPU (dense = half the sparse figures); "
                                    "L2 and clock from public "
                                    "device-query reports, not checked on hardware here"});
    t.push_back(DeviceSpec{
        .name = "rtx4090",
        .description = "NVIDIA GeForce RTX 4090 24 GB GDDR6X",
        .aliases = {"rtx-4090", "4090"},
        .cuda_names = {"NVIDIA GeForce RTX 4090"},
        .cc_major = 8,
        .cc_minor = 9,
        .sm_count = 128,
        .boost_clock_mhz = 2520.0,
        .l2_bytes = 72 * kMiB,
        .dram_bytes = 24 * kGB,
        .dram_bytes_per_s = 1008 * kGBs,
        .smem_per_sm_bytes = 100 * kKiB,
        .smem_per_block_optin_bytes = 99 * kKiB,
        .regs_per_sm = 65536,
        .sfu_per_clock_per_sm = kSfuPerClockPerSm,
        .peak_flops = {{U::kFp32Simt, 82.6 * kT},
                       {U::kFp64Simt, 1.29 * kT},
                       {U::kTf32Tensor, 82.6 * kT},
                       {U::kBf16Tensor, 165.2 * kT},
                       {U::kFp16Tensor, 165.2 * kT},
                       {U::kFp8Tensor, 330.3 * kT}},
        .notes =
            "Ada whitepaper; tensor peaks with fp32 accumulation (half the fp16-accumulate rate)"});
    return t;
}

}  // namespace

double sfu_ops_per_s(const DeviceSpec& d) {
    return static_cast<double>(d.sfu_per_clock_per_sm) * d.sm_count * d.boost_clock_mhz * 1e6;
}

std::string_view to_string(ComputeUnit u) {
    switch (u) {
        case ComputeUnit::kFp32Simt:
            return "fp32_simt";
        case ComputeUnit::kFp64Simt:
            return "fp64_simt";
        case ComputeUnit::kFp64Tensor:
            return "fp64_tensor";
        case ComputeUnit::kTf32Tensor:
            return "tf32_tensor";
        case ComputeUnit::kBf16Tensor:
            return "bf16_tensor";
        case ComputeUnit::kFp16Tensor:
            return "fp16_tensor";
        case ComputeUnit::kFp8Tensor:
            return "fp8_tensor";
    }
    return "unknown";
}

const std::vector<ComputeUnit>& all_compute_units() {
    static const std::vector<ComputeUnit> units = {
        ComputeUnit::kFp32Simt,   ComputeUnit::kFp64Simt,   ComputeUnit::kFp64Tensor,
        ComputeUnit::kTf32Tensor, ComputeUnit::kBf16Tensor, ComputeUnit::kFp16Tensor,
        ComputeUnit::kFp8Tensor};
    return units;
}

std::optional<ComputeUnit> compute_unit_from_string(std::string_view s) {
    for (ComputeUnit u : all_compute_units()) {
        if (to_string(u) == s) return u;
    }
    return std::nullopt;
}

const std::vector<DeviceSpec>& device_table() {
    static const std::vector<DeviceSpec> table = make_table();
    return table;
}

std::string known_device_names() {
    std::string s;
    for (const auto& d : device_table()) s += (s.empty() ? "" : ", ") + d.name;
    return s;
}

Expected<DeviceSpec> find_device(std::string_view name) {
    const std::string key = lower(name);
    for (const auto& d : device_table()) {
        if (d.name == key) return d;
        if (std::find(d.aliases.begin(), d.aliases.end(), key) != d.aliases.end()) return d;
    }
    return make_error("--device", "unknown device \"" + std::string(name) +
                                      "\"; known devices: " + known_device_names());
}

std::optional<DeviceSpec> device_from_cuda_name(std::string_view cuda_name) {
    // Exact names first, then case-insensitively: "NVIDIA H200 NVL" (a different power class)
    // must not map to the SXM H200.
    for (const auto& d : device_table()) {
        for (const auto& n : d.cuda_names) {
            if (n == cuda_name) return d;
        }
    }
    const std::string key = lower(cuda_name);
    for (const auto& d : device_table()) {
        for (const auto& n : d.cuda_names) {
            if (lower(n) == key) return d;
        }
    }
    return std::nullopt;
}

}  // namespace kforge
