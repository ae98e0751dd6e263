// report/baseline_store.h: a PyTorch baseline document stored into a temporary SQLite store and
// read back - the carrier candidate, the labels, the device, the shapes key, a new run or the
// given run on the same device, a run on another device refused, a failed mode not stored.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "problem/spec.h"
#include "report/baseline.h"
#include "report/baseline_store.h"
#include "store/store.h"

namespace kforge::report {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

json device_json(const std::string& uuid = "GPU-00000000-1111-2222-3333-444444444444") {
    return {{"name", "NVIDIA H200"}, {"uuid", uuid}, {"driver", "CUDA driver 13000"},
            {"compute_capability", "9.0"}};
}

json mode(double base, const std::string& status = "ok") {
    json m{{"status", status}};
    if (status != "ok") {
        m["message"] = "disagrees with eager";
        return m;
    }
    json samples = json::array(), clocks = json::array();
    for (int i = 0; i < 60; ++i) {
        samples.push_back(base + i);
        clocks.push_back({{"sm_clock_mhz", 1980}, {"mem_clock_mhz", 3201}});
    }
    m["samples_ns"] = samples;
    m["clocks"] = clocks;
    m["stats"] = {{"n", 60}, {"median_ns", base + 29.5}};
    return m;
}

json document() {
    return {{"torch", "2.15.0"}, {"torch_cuda", "13.2"}, {"triton", "3.9.0"},
            {"protocol", {{"iters", 60}, {"warmup", 10}}}};
}

class BaselineStore : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("kforge_baseline_store_" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        auto store = open_store((dir_ / "kforge.db").string());
        ASSERT_TRUE(store) << store.error().to_string();
        store_.emplace(std::move(*store));
        auto p = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/softmax_long_rows_f32.json");
        ASSERT_TRUE(p) << p.error().to_string();
        problem_ = *p;
    }
    void TearDown() override {
        store_.reset();
        fs::remove_all(dir_);
    }
    fs::path dir_;
    std::optional<Store> store_;
    Problem problem_;
};

TEST_F(BaselineStore, RoundTripThroughTheStore) {
    json result{{"settings", {{"fp32_strict", true}}},
                {"modes", {{"eager", mode(10000)}, {"compile_default", mode(8000)}}}};
    auto stored = store_baseline(*store_, problem_, "R=4,C=8", device_json(), document(), result,
                                 std::nullopt);
    ASSERT_TRUE(stored) << stored.error().to_string();

    auto run = store_->get_run(stored->run_id);
    ASSERT_TRUE(run);
    auto device = store_->get_device(run->device_id);
    ASSERT_TRUE(device);
    EXPECT_EQ(device->uuid, "GPU-00000000-1111-2222-3333-444444444444");
    EXPECT_EQ(device->datasheet_key, "h200");

    auto cand = store_->get_candidate(stored->candidate_id);
    ASSERT_TRUE(cand);
    EXPECT_EQ(cand->proposer, "baseline:pytorch");
    EXPECT_TRUE(is_baseline_carrier(cand->proposer));

    auto ev = store_->get_evaluation(stored->evaluation_id);
    ASSERT_TRUE(ev) << ev.error().to_string();
    EXPECT_EQ(ev->shapes_key, "R=4,C=8");
    EXPECT_EQ(ev->tier, EvalTier::kFull);
    EXPECT_EQ(ev->status, EvalStatus::kPassed);
    EXPECT_EQ(ev->toolchain, "torch 2.15.0 (CUDA 13.2) / triton 3.9.0");
    ASSERT_EQ(ev->measurements.size(), 120u);
    int eager = 0, compiled = 0;
    for (const MeasurementRecord& m : ev->measurements) {
        eager += m.label == baseline_label("eager");
        compiled += m.label == baseline_label("compile_default");
        EXPECT_EQ(m.sm_clock_mhz, 1980);
    }
    EXPECT_EQ(eager, 60);
    EXPECT_EQ(compiled, 60);
    auto evidence = json::parse(ev->evidence_json);
    EXPECT_FALSE(evidence["modes"]["eager"].contains("samples_ns"));  // the samples are rows

    // a second document into the same run (same device)
    auto again = store_baseline(*store_, problem_, "R=4,C=8", device_json(), document(), result,
                                stored->run_id);
    ASSERT_TRUE(again) << again.error().to_string();
    EXPECT_EQ(again->run_id, stored->run_id);
}

TEST_F(BaselineStore, RunOnAnotherDeviceIsRefused) {
    json result{{"modes", {{"eager", mode(10000)}}}};
    auto first = store_baseline(*store_, problem_, "R=4,C=8", device_json(), document(), result,
                                std::nullopt);
    ASSERT_TRUE(first) << first.error().to_string();
    auto other = store_baseline(*store_, problem_, "R=4,C=8", device_json("GPU-other"),
                                document(), result, first->run_id);
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().where, "--run");
    EXPECT_NE(other.error().message.find("this GPU is NVIDIA H200 GPU-other"), std::string::npos)
        << other.error().message;
}

TEST_F(BaselineStore, FailedModeIsNotStoredAndNamed) {
    json result{{"modes", {{"eager", mode(10000)}, {"compile_default", mode(0, "mismatch")}}}};
    auto stored = store_baseline(*store_, problem_, "R=4,C=8", device_json(), document(), result,
                                 std::nullopt);
    ASSERT_TRUE(stored) << stored.error().to_string();
    auto ev = store_->get_evaluation(stored->evaluation_id);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->measurements.size(), 60u);
    EXPECT_EQ(ev->error_text, "compile_default: disagrees with eager");
}

TEST_F(BaselineStore, NoUuidIsAnError) {
    json device = device_json();
    device.erase("uuid");
    auto stored = store_baseline(*store_, problem_, "R=4,C=8", device, document(),
                                 json{{"modes", json::object()}}, std::nullopt);
    ASSERT_FALSE(stored);
    EXPECT_NE(stored.error().message.find("no device uuid"), std::string::npos);
}

}  // namespace
}  // namespace kforge::report
