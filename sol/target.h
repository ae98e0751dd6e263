// The compile target (TVM's Target): what every build decision reads about the GPU a candidate
// is built for, derived once from the device table entry (sol/device.h) and, for a real device,
// what it reports. The one rule that maps a compute capability to the CUDA arch kforge compiles
// for lives here (cuda_arch), so the lowering, the compile, the evaluator, the seeding, `kforge
// compile` and the profiling fallback cannot disagree on it.
//
// It lives in sol/, beside the device table, because every holder of a compute capability
// (DeviceSpec here, dsl's DeviceLimits, eval's DeviceInfo) sits at or above sol/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/expected.h"
#include "sol/device.h"

namespace kforge {

// The name of compute capability cc_major.cc_minor with no arch-specific features: "sm_90",
// "sm_80" (the GPU fp64 reference compiles for it; messages name a device's arch with it).
std::string sm_name(int cc_major, int cc_minor);

// The CUDA arch kforge compiles candidates for at compute capability cc_major.cc_minor: the
// "a" suffix only on cc 9.x ("sm_90a": wgmma, TMA multicast and setmaxnreg, which CUTLASS's
// sm90 kernels need, exist only as arch-specific features of cc 9.0; a cc 10 part runs kforge's
// CUTLASS 2.x path, which needs none, so it gets the portable "sm_100"). The one arch rule:
// sm_name(cc) + "a" on cc 9.x.
std::string cuda_arch(int cc_major, int cc_minor);

struct Target {
    std::string device_key;  // sol/ device table key ("h200"); the key asked for when unknown
    bool known = true;       // false: not in the table, the figures are the default device's
    std::string arch;        // cuda_arch(cc_major, cc_minor), e.g. "sm_90a"
    int cc_major = 9;
    int cc_minor = 0;
    int sm_count = 132;                     // as the device reports it, else the table's
    double boost_clock_mhz = 0.0;
    int64_t l2_bytes = 0;
    int64_t dram_bytes = 0;
    double dram_bytes_per_s = 0.0;
    int64_t smem_per_block_optin_bytes = 0;
};

// The default device's key when none is known ("h200", as dsl::DeviceLimits' default).
inline constexpr std::string_view kDefaultTargetDevice = "h200";

// The target of a device table entry.
Target make_target(const DeviceSpec& device);

// The target of device table key `device_key`; an unknown key is a user error (find_device's).
Expected<Target> find_target(std::string_view device_key);

// The target of a device known by its table key and, where it reports one, its SM count (a
// real device reports it; 0: none). An unknown key gets the default device's figures (sm_90a)
// with known = false, as the evaluator has always compiled for an unknown device.
Target target_for_device(std::string_view device_key, int sm_count_reported = 0);

}  // namespace kforge
