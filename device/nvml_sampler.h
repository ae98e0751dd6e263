// Clocks, temperature and throttle reasons of one GPU per timing sample, through NVML reached at
// run time (dlopen libnvidia-ml.so.1; kforge builds without the NVML headers or library). When
// NVML is missing or fails, samples keep zeros and note() says why.
#pragma once

#include <memory>
#include <string>

#include "device/device.h"

namespace kforge::eval {

class NvmlSampler {
public:
    // `uuid` as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (NVML's device identity).
    explicit NvmlSampler(const std::string& uuid);
    ~NvmlSampler();
    NvmlSampler(const NvmlSampler&) = delete;
    NvmlSampler& operator=(const NvmlSampler&) = delete;

    bool available() const { return device_ != nullptr; }
    const std::string& note() const { return note_; }
    // Fills sm/mem clock, temperature and throttle reasons; leaves zeros where NVML fails.
    void sample(TimingSample& s) const;

private:
    struct Api;
    std::unique_ptr<Api> api_;
    void* device_ = nullptr;
    std::string note_;
};

}  // namespace kforge::eval
