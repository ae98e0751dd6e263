// Shared set-up for the store tests: a fresh database file in a temporary folder, with one
// device, one problem and one run already stored.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "store/store.h"

namespace kforge::test {

inline std::filesystem::path make_temp_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kforge_store_XXXXXX").string();
    char* dir = mkdtemp(tmpl.data());
    EXPECT_NE(dir, nullptr);
    return dir ? std::filesystem::path(dir) : std::filesystem::path();
}

inline DeviceRecord test_device(std::string uuid = "GPU-test-0001") {
    return DeviceRecord{0, "NVIDIA H200", std::move(uuid), "9.0", "580.65", "h200_sxm"};
}

inline constexpr const char* kSpecJson =
    R"({"name": "gemm_small", "dims": {"M": 64, "N": 64, "K": 64}, "graph": []})";

// A candidate whose hash is derived from its text, as the dsl stage's content hash would be.
inline NewCandidate test_candidate(int64_t run, int64_t problem, const std::string& text) {
    NewCandidate c;
    c.run_id = run;
    c.problem_id = problem;
    c.program_text = text;
    c.content_hash = content_hash(text);
    c.proposer = "human";
    c.move = "seed";
    return c;
}

inline NewEvaluation test_evaluation(int64_t candidate, int64_t device, int samples,
                                     double base_ns = 1000.0) {
    NewEvaluation e;
    e.candidate_id = candidate;
    e.device_id = device;
    e.toolchain = "nvcc 13.0";
    e.shapes_key = "M=64,N=64,K=64";
    e.tier = EvalTier::kQuick;
    e.status = EvalStatus::kPassed;
    e.evidence_json = R"({"max_abs_error": 1e-6})";
    e.flops = 2 * 64 * 64 * 64;
    e.bytes = 3 * 64 * 64 * 4;
    for (int i = 0; i < samples; ++i) {
        MeasurementRecord m;
        m.sample_index = i;
        m.time_ns = base_ns + i;
        m.sm_clock_mhz = 1980;
        m.mem_clock_mhz = 2619;
        m.temperature_c = 45;
        m.throttle_reasons = 0;
        e.measurements.push_back(m);
    }
    return e;
}

class StoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = make_temp_dir();
        auto s = Store::open((dir_ / "kforge.db").string());
        ASSERT_TRUE(s.ok()) << s.error().to_string();
        store_.emplace(std::move(*s));
        auto d = store_->upsert_device(test_device());
        ASSERT_TRUE(d.ok()) << d.error().to_string();
        device_ = *d;
        auto p = store_->upsert_problem("gemm_small", kSpecJson);
        ASSERT_TRUE(p.ok()) << p.error().to_string();
        problem_ = *p;
        NewRun r;
        r.problem_id = problem_;
        r.device_id = device_;
        r.options_json = R"({"budget_s": 60})";
        auto run = store_->create_run(r);
        ASSERT_TRUE(run.ok()) << run.error().to_string();
        run_ = *run;
    }
    void TearDown() override {
        store_.reset();
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }

    std::filesystem::path dir_;
    std::optional<Store> store_;
    int64_t device_ = 0, problem_ = 0, run_ = 0;
};

}  // namespace kforge::test
