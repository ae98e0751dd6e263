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

// Hopper (cc 9.0) and Blackwell data-center (cc 10.0): 228 KiB smem per SM, 227 KiB per block.
// Ampere GA100 (cc 8.0): 164 / 163 KiB. Ada (cc 8.9): 100 / 99 KiB. 64 K registers per SM.
std::vector<DeviceSpec> make_table() {
    using U = ComputeUnit;
    std::vector<DeviceSpec> t;
    t.push_back(DeviceSpec{
        "h100-sxm", "NVIDIA H100 SXM5 80 GB HBM3", {"h100", "h100sxm", "h100-sxm5"},
        {"NVIDIA H100 80GB HBM3"}, 9, 0, 132, 1980.0, 50 * kMiB, 80 * kGB, 3350 * kGBs,
        228 * kKiB, 227 * kKiB, 65536,
        {{U::kFp32Simt, 67.0 * kT}, {U::kFp64Simt, 34.0 * kT}, {U::kFp64Tensor, 67.0 * kT},
         {U::kTf32Tensor, 494.7 * kT}, {U::kBf16Tensor, 989.4 * kT}, {U::kFp16Tensor, 989.4 * kT},
         {U::kFp8Tensor, 1978.9 * kT}},
        "H100 datasheet (dense = half the sparse figures); L2 as cudaDeviceProp reports"});
    t.push_back(DeviceSpec{
        "h100-pcie", "NVIDIA H100 PCIe 80 GB HBM2e", {"h100pcie"}, {"NVIDIA H100 PCIe"}, 9, 0,
        114, 1755.0, 50 * kMiB, 80 * kGB, 2000 * kGBs, 228 * kKiB, 227 * kKiB, 65536,
        {{U::kFp32Simt, 51.2 * kT}, {U::kFp64Simt, 25.6 * kT}, {U::kFp64Tensor, 51.2 * kT},
         {U::kTf32Tensor, 378.0 * kT}, {U::kBf16Tensor, 756.0 * kT}, {U::kFp16Tensor, 756.0 * kT},
         {U::kFp8Tensor, 1513.0 * kT}},
        "H100 datasheet (dense = half the sparse figures)"});
    t.push_back(DeviceSpec{
        "h200", "NVIDIA H200 SXM 141 GB HBM3e", {"h200-sxm", "h200sxm"}, {"NVIDIA H200"}, 9, 0,
        132, 1980.0, 60 * kMiB, 141 * kGB, 4800 * kGBs, 228 * kKiB, 227 * kKiB, 65536,
        {{U::kFp32Simt, 67.0 * kT}, {U::kFp64Simt, 34.0 * kT}, {U::kFp64Tensor, 67.0 * kT},
         {U::kTf32Tensor, 494.7 * kT}, {U::kBf16Tensor, 989.4 * kT}, {U::kFp16Tensor, 989.4 * kT},
         {U::kFp8Tensor, 1978.9 * kT}},
        "H200 datasheet; L2 is 60 MiB as cudaDeviceProp/PyTorch report on the H200 (the H100 "
        "SXM reports 50 MiB)"});
    t.push_back(DeviceSpec{
        "a100-sxm", "NVIDIA A100 SXM4 80 GB HBM2e", {"a100", "a100-80gb", "a100sxm"},
        {"NVIDIA A100-SXM4-80GB"}, 8, 0, 108, 1410.0, 40 * kMiB, 80 * kGB, 2039 * kGBs,
        164 * kKiB, 163 * kKiB, 65536,
        {{U::kFp32Simt, 19.5 * kT}, {U::kFp64Simt, 9.7 * kT}, {U::kFp64Tensor, 19.5 * kT},
         {U::kTf32Tensor, 156.0 * kT}, {U::kBf16Tensor, 312.0 * kT}, {U::kFp16Tensor, 312.0 * kT}},
        "A100 datasheet (80 GB SXM); no fp8 tensor cores"});
    t.push_back(DeviceSpec{
        "l40s", "NVIDIA L40S 48 GB GDDR6", {"l40-s"}, {"NVIDIA L40S"}, 8, 9, 142, 2520.0,
        96 * kMiB, 48 * kGB, 864 * kGBs, 100 * kKiB, 99 * kKiB, 65536,
        {{U::kFp32Simt, 91.6 * kT}, {U::kFp64Simt, 1.43 * kT}, {U::kTf32Tensor, 183.0 * kT},
         {U::kBf16Tensor, 362.05 * kT}, {U::kFp16Tensor, 362.05 * kT}, {U::kFp8Tensor, 733.0 * kT}},
        "L40S datasheet; fp64 at 1/64 of fp32; no fp64 tensor cores"});
    t.push_back(DeviceSpec{
        "b200", "NVIDIA B200 (HGX, 1000 W) 180 GB HBM3e", {"b200-sxm", "hgx-b200"},
        {"NVIDIA B200"}, 10, 0, 148, 1965.0, 126 * kMiB, 180 * kGB, 8000 * kGBs, 228 * kKiB,
        227 * kKiB, 65536,
        {{U::kFp32Simt, 75.0 * kT}, {U::kFp64Simt, 37.0 * kT}, {U::kFp64Tensor, 37.0 * kT},
         {U::kTf32Tensor, 1100.0 * kT}, {U::kBf16Tensor, 2250.0 * kT},
         {U::kFp16Tensor, 2250.0 * kT}, {U::kFp8Tensor, 4500.0 * kT}},
        "HGX B200 datasheet per GPU (dense = half the sparse figures); L2 and clock from public "
        "device-query reports, not checked on hardware here"});
    t.push_back(DeviceSpec{
        "rtx4090", "NVIDIA GeForce RTX 4090 24 GB GDDR6X", {"rtx-4090", "4090"},
        {"NVIDIA GeForce RTX 4090"}, 8, 9, 128, 2520.0, 72 * kMiB, 24 * kGB, 1008 * kGBs,
        100 * kKiB, 99 * kKiB, 65536,
        {{U::kFp32Simt, 82.6 * kT}, {U::kFp64Simt, 1.29 * kT}, {U::kTf32Tensor, 82.6 * kT},
         {U::kBf16Tensor, 165.2 * kT}, {U::kFp16Tensor, 165.2 * kT}, {U::kFp8Tensor, 330.3 * kT}},
        "Ada whitepaper; tensor peaks with fp32 accumulation (half the fp16-accumulate rate)"});
    return t;
}

}  // namespace

std::string_view to_string(ComputeUnit u) {
    switch (u) {
        case ComputeUnit::kFp32Simt: return "fp32_simt";
        case ComputeUnit::kFp64Simt: return "fp64_simt";
        case ComputeUnit::kFp64Tensor: return "fp64_tensor";
        case ComputeUnit::kTf32Tensor: return "tf32_tensor";
        case ComputeUnit::kBf16Tensor: return "bf16_tensor";
        case ComputeUnit::kFp16Tensor: return "fp16_tensor";
        case ComputeUnit::kFp8Tensor: return "fp8_tensor";
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
