// Shared by the start phase's tests (suite_start_test.cpp, suite_start_failure_test.cpp):
// built-in problems at small shapes with their start programs, a fresh temporary folder, the
// simulated device claiming to be real (so the start phase compiles), and a fixture with the
// simulated device and an in-memory store.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "device/device.h"
#include "eval/evaluator.h"
#include "problem/spec.h"
#include "search/loop.h"
#include "store/store.h"
#include "tests/search/sim_evaluators.h"

namespace kforge::search::testing {
namespace fs = std::filesystem;

inline std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A built-in problem at a small shape (every dim 256, a row length C of 1024) and its start.
inline std::pair<Problem, std::string> small(const std::string& name) {
    const fs::path dir = fs::path(KFORGE_SOURCE_DIR) / "problems";
    auto j = nlohmann::json::parse(read(dir / (name + ".json")));
    for (auto& [dim, value] : j["dims"].items()) value = dim == "C" ? 1024 : 256;
    auto p = parse_problem(j.dump(), name);
    EXPECT_TRUE(p) << p.error().to_string();
    return {*p, read(dir / (name + ".kf"))};
}

inline const char* const kGemms[] = {"gemm_bf16_4096", "gemm_fp16_4096", "gemm_nt_fp16",
                              "gemm_tn_fp16", "linear_bias_relu_bf16", "linear_clamp_chain_bf16"};
inline const char* const kRowwise[] = {"layer_norm_f32", "softmax_short_rows_f32"};

inline fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() /
                 ("kforge_suite_start_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

class SuiteStart : public ::testing::Test {
protected:
    void SetUp() override {
        auto device = eval::make_sim_device("h200");
        ASSERT_TRUE(device) << device.error().to_string();
        device_ = std::move(*device);
        evaluator_ = std::make_unique<eval::InProcessEvaluator>(*device_);
        auto store = open_store(":memory:");
        ASSERT_TRUE(store);
        store_.emplace(std::move(*store));
    }
    std::vector<SearchState> start(eval::Evaluator& evaluator, const SearchOptions& o,
                                   std::vector<std::string> names) {
        std::vector<SearchState> states;
        for (const std::string& n : names) {
            auto [problem, text] = small(n);
            auto st = start_search(evaluator, *store_, problem, text, o);
            EXPECT_TRUE(st) << n << ": " << st.error().to_string();
            if (st) states.push_back(std::move(*st));
        }
        return states;
    }
    std::vector<std::string> all_names() const {
        std::vector<std::string> n(std::begin(kGemms), std::end(kGemms));
        n.insert(n.end(), std::begin(kRowwise), std::end(kRowwise));
        return n;
    }
    std::unique_ptr<eval::Device> device_;
    std::unique_ptr<eval::Evaluator> evaluator_;
    std::optional<Store> store_;
};

}  // namespace kforge::search::testing
