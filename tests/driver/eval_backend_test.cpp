// driver/eval_backend.h without a GPU: `sim` gives the simulated device in this process, `cuda`
// whose worker cannot start is the environment's failure ("no usable GPU"), `auto` falls back to
// the simulated device with the reason, an unknown simulated model is the user's error.
#include <gtest/gtest.h>

#include "driver/eval_backend.h"

namespace kforge::driver {
namespace {

// No GPU worker can start from here: the binary does not exist.
const char* kNoWorker = "/nonexistent/kforge";

TEST(DeviceChoice, NamesRoundTrip) {
    for (DeviceChoice c : {DeviceChoice::kAuto, DeviceChoice::kCuda, DeviceChoice::kSim})
        EXPECT_EQ(device_choice_from_string(to_string(c)), c);
    EXPECT_FALSE(device_choice_from_string("gpu"));
}

TEST(EvalBackend, SimIsTheSimulatedDeviceInThisProcess) {
    EvalBackendOptions o;
    o.device = DeviceChoice::kSim;
    o.worker_executable = kNoWorker;
    auto b = open_eval_backend(o);
    ASSERT_TRUE(b.value) << b.message;
    EXPECT_EQ(b.failure, OpenFailure::kNone);
    EXPECT_TRUE(b.fallback.empty());
    EXPECT_TRUE(b.value->info().simulated);
    EXPECT_EQ(b.value->info().datasheet_key, "h200");
    auto info = b.value->evaluator().device_info();
    ASSERT_TRUE(info) << info.error().to_string();
    EXPECT_TRUE(info->simulated);
}

TEST(EvalBackend, CudaWithoutAGpuIsTheEnvironmentsFailure) {
    EvalBackendOptions o;
    o.device = DeviceChoice::kCuda;
    o.worker_executable = kNoWorker;
    auto b = open_eval_backend(o);
    EXPECT_FALSE(b.value);
    EXPECT_EQ(b.failure, OpenFailure::kEnvironment);
    EXPECT_EQ(b.message.rfind("no usable GPU: ", 0), 0u) << b.message;
    EXPECT_TRUE(b.fallback.empty());
}

TEST(EvalBackend, AutoWithoutAGpuFallsBackAndSaysWhy) {
    EvalBackendOptions o;
    o.worker_executable = kNoWorker;
    auto b = open_eval_backend(o);
    ASSERT_TRUE(b.value) << b.message;
    EXPECT_TRUE(b.value->info().simulated);
    EXPECT_FALSE(b.fallback.empty());
    EXPECT_LE(b.fallback.size(), 300u);
}

TEST(EvalBackend, UnknownSimModelIsTheUsersError) {
    EvalBackendOptions o;
    o.device = DeviceChoice::kSim;
    o.sim_model = "no_such_gpu";
    auto b = open_eval_backend(o);
    EXPECT_FALSE(b.value);
    EXPECT_EQ(b.failure, OpenFailure::kUserError);
    EXPECT_NE(b.message.find("no_such_gpu"), std::string::npos) << b.message;
}

TEST(OpenDevice, SimAndCudaWithoutAGpu) {
    auto sim = open_device(DeviceChoice::kSim, 0, "h200");
    ASSERT_TRUE(sim.value) << sim.message;
    EXPECT_TRUE(sim.value->info().simulated);
    auto cuda = open_device(DeviceChoice::kCuda, 0, "h200");
    if (cuda.value) GTEST_SKIP() << "a GPU is usable here";
    EXPECT_EQ(cuda.failure, OpenFailure::kEnvironment);
    EXPECT_EQ(cuda.message.rfind("no usable GPU: ", 0), 0u) << cuda.message;
    auto fallback = open_device(DeviceChoice::kAuto, 0, "h200");
    ASSERT_TRUE(fallback.value) << fallback.message;
    EXPECT_TRUE(fallback.value->info().simulated);
    EXPECT_FALSE(fallback.fallback.empty());
}

TEST(StartWorker, CudaWithoutAGpuIsTheEnvironmentsFailure) {
    WorkerOptions o;
    o.device = DeviceChoice::kCuda;
    o.worker_executable = kNoWorker;
    auto s = start_worker(o);
    EXPECT_FALSE(s.value);
    EXPECT_EQ(s.failure, OpenFailure::kEnvironment);
    EXPECT_FALSE(s.message.empty());
}

}  // namespace
}  // namespace kforge::driver
