#include "sol/target.h"

namespace kforge {

std::string sm_name(int cc_major, int cc_minor) {
    return "sm_" + std::to_string(cc_major * 10 + cc_minor);
}

std::string cuda_arch(int cc_major, int cc_minor) {
    return sm_name(cc_major, cc_minor) + (cc_major == 9 ? "a" : "");
}

Target make_target(const DeviceSpec& device) {
    Target t;
    t.device_key = device.name;
    t.known = true;
    t.arch = cuda_arch(device.cc_major, device.cc_minor);
    t.cc_major = device.cc_major;
    t.cc_minor = device.cc_minor;
    t.sm_count = device.sm_count;
    t.boost_clock_mhz = device.boost_clock_mhz;
    t.l2_bytes = device.l2_bytes;
    t.dram_bytes = device.dram_bytes;
    t.dram_bytes_per_s = device.dram_bytes_per_s;
    t.smem_per_block_optin_bytes = device.smem_per_block_optin_bytes;
    return t;
}

Expected<Target> find_target(std::string_view device_key) {
    auto spec = find_device(device_key);
    if (!spec) return spec.error();
    return make_target(*spec);
}

Target target_for_device(std::string_view device_key, int sm_count_reported) {
    Target t;
    if (auto spec = find_device(device_key); spec.ok()) {
        t = make_target(*spec);
    } else {
        t = make_target(find_device(kDefaultTargetDevice).value());
        t.device_key = std::string(device_key);
        t.known = false;
    }
    if (sm_count_reported > 0) t.sm_count = sm_count_reported;
    return t;
}

}  // namespace kforge
