// A test double shared by the search tests: the simulated device claiming to be real to the
// loop (device_info().simulated = false), so the loop and the suite's start phase precompile
// into their compile cache as on a GPU - row-wise programs through NVRTC, seconds on CI -
// while every evaluation still runs on the simulated device.
#pragma once

#include "device/device.h"
#include "eval/evaluator.h"

namespace kforge::search::testing {

class PrecompilingSimEvaluator final : public eval::Evaluator {
public:
    explicit PrecompilingSimEvaluator(eval::Device& device) : inner_(device) {}
    Expected<eval::DeviceInfo> device_info() override {
        auto info = inner_.device_info();
        if (info) info->simulated = false;
        return info;
    }
    eval::EvalReport run_pipeline(const eval::EvalRequest& request) override {
        return inner_.run_pipeline(request);
    }
    eval::TimeReport time(const eval::TimeRequest& request) override { return inner_.time(request); }

private:
    eval::InProcessEvaluator inner_;
};

}  // namespace kforge::search::testing
