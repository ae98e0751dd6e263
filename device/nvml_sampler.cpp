#include "device/nvml_sampler.h"

#include <dlfcn.h>

namespace kforge::eval {
namespace {

// The few NVML entry points used, declared from NVML's stable C ABI (nvml.h).
using NvmlReturn = int;  // NVML_SUCCESS = 0
using NvmlDevice = void*;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMem = 2;
constexpr int kNvmlTemperatureGpu = 0;

}  // namespace

struct NvmlSampler::Api {
    void* lib = nullptr;
    NvmlReturn (*init)() = nullptr;
    NvmlReturn (*shutdown)() = nullptr;
    NvmlReturn (*by_uuid)(const char*, NvmlDevice*) = nullptr;
    NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
    NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
    NvmlReturn (*reasons)(NvmlDevice, unsigned long long*) = nullptr;
};

NvmlSampler::NvmlSampler(const std::string& uuid) : api_(std::make_unique<Api>()) {
    api_->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!api_->lib) {
        note_ = "NVML unavailable (libnvidia-ml.so.1 not loadable): clocks not recorded";
        return;
    }
    auto sym = [&](const char* name) { return dlsym(api_->lib, name); };
    api_->init = reinterpret_cast<decltype(api_->init)>(sym("nvmlInit_v2"));
    api_->shutdown = reinterpret_cast<decltype(api_->shutdown)>(sym("nvmlShutdown"));
    api_->by_uuid = reinterpret_cast<decltype(api_->by_uuid)>(sym("nvmlDeviceGetHandleByUUID"));
    api_->clock = reinterpret_cast<decltype(api_->clock)>(sym("nvmlDeviceGetClockInfo"));
    api_->temperature =
        reinterpret_cast<decltype(api_->temperature)>(sym("nvmlDeviceGetTemperature"));
    api_->reasons = reinterpret_cast<decltype(api_->reasons)>(
        sym("nvmlDeviceGetCurrentClocksEventReasons"));
    if (!api_->reasons)
        api_->reasons = reinterpret_cast<decltype(api_->reasons)>(
            sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
    if (!api_->init || !api_->by_uuid || !api_->clock) {
        note_ = "NVML lacks the needed entry points: clocks not recorded";
        return;
    }
    if (api_->init() != 0) {
        note_ = "nvmlInit failed: clocks not recorded";
        api_->init = nullptr;
        return;
    }
    NvmlDevice dev = nullptr;
    if (api_->by_uuid(uuid.c_str(), &dev) != 0 || !dev) {
        note_ = "NVML does not know device " + uuid + ": clocks not recorded";
        return;
    }
    device_ = dev;
}

NvmlSampler::~NvmlSampler() {
    if (api_ && api_->init && api_->shutdown) api_->shutdown();
    if (api_ && api_->lib) dlclose(api_->lib);
}

void NvmlSampler::sample(TimingSample& s) const {
    if (!device_) return;
    unsigned v = 0;
    if (api_->clock(device_, kNvmlClockSm, &v) == 0) s.sm_clock_mhz = static_cast<int>(v);
    if (api_->clock(device_, kNvmlClockMem, &v) == 0) s.mem_clock_mhz = static_cast<int>(v);
    if (api_->temperature && api_->temperature(device_, kNvmlTemperatureGpu, &v) == 0)
        s.temperature_c = static_cast<int>(v);
    unsigned long long reasons = 0;
    if (api_->reasons && api_->reasons(device_, &reasons) == 0) s.throttle_reasons = reasons;
}

}  // namespace kforge::eval
