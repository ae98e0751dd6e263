// The built-in suite (problems/*.json): every spec loads and validates, its name equals its file
// stem and is unique, and it still validates and interprets when rebound to small dims (the
// shapes the simulated device and the screening tier use).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "problem/inputs.h"
#include "problem/interpret.h"
#include "problem/spec.h"
#include "problem/work.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMinSuiteSize = 24;
constexpr int64_t kSmallDimCap = 32;  // a multiple of every group count in the suite (32)
// The suite's sizing rule (problems/README.md): the PyTorch reference takes about 0.2-20 ms on an
// H100-class GPU. The 4096^3 half-precision GEMMs sit at 0.196 ms by design, hence 0.15.
constexpr double kMinEagerMs = 0.15;
constexpr double kMaxEagerMs = 20.0;

fs::path suite_dir() { return fs::path(KFORGE_SOURCE_DIR) / "problems"; }

std::vector<std::string> spec_stems() {
    std::vector<std::string> stems;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(suite_dir(), ec)) {
        if (entry.is_regular_file() && entry.path().extension() == ".json") {
            stems.push_back(entry.path().stem().string());
        }
    }
    std::sort(stems.begin(), stems.end());
    return stems;
}

std::string spec_path(const std::string& stem) { return (suite_dir() / (stem + ".json")).string(); }

// Every dim capped at kSmallDimCap, keeping the values that are already small.
std::map<std::string, int64_t> small_dims(const Problem& problem) {
    std::map<std::string, int64_t> dims;
    for (const auto& [name, value] : problem.dims) dims[name] = std::min(value, kSmallDimCap);
    return dims;
}

// Values for every graph input and param from the evaluator's own generator.
TensorValues generate_inputs(const Problem& problem, Distribution distribution) {
    TensorValues inputs;
    for (const Tensor* t : problem.graph_inputs()) inputs[t->name] = generate(*t, distribution, 7);
    return inputs;
}

TEST(ProblemSuite, HasEnoughProblemsWithUniqueNames) {
    const auto stems = spec_stems();
    EXPECT_GE(stems.size(), kMinSuiteSize) << "in " << suite_dir();
    std::map<std::string, std::string> owner;  // problem name -> file
    for (const auto& stem : stems) {
        auto problem = load_problem(spec_path(stem));
        if (!problem) continue;  // reported by the per-spec test
        auto [it, inserted] = owner.emplace(problem->name, stem);
        EXPECT_TRUE(inserted) << "name \"" << problem->name << "\" in " << stem
                              << ".json and in " << it->second << ".json";
    }
}

// Planning peaks of problems/suite_table.py: GEMM FLOP/s by policy, other FLOP/s, DRAM B/s.
double gemm_peak(PrecisionPolicy policy) {
    switch (policy) {
        case PrecisionPolicy::kFp32Strict: return 50e12;
        case PrecisionPolicy::kTf32: return 350e12;
        case PrecisionPolicy::kBf16:
        case PrecisionPolicy::kFp16: return 700e12;
    }
    return 50e12;
}
constexpr double kSimtPeak = 50e12;
constexpr double kBandwidth = 3.5e12;

// One kernel per op, each at the larger of its compute and memory time (PyTorch eager).
double eager_estimate_ms(const Problem& problem, const WorkCount& work) {
    double seconds = 0.0;
    for (const OpWork& op : work.per_op) {
        double compute = op.flops_matrix / gemm_peak(problem.policy) + op.flops_other / kSimtPeak;
        seconds += std::max(compute, op.bytes() / kBandwidth);
    }
    return seconds * 1e3;
}

class SuiteSpec : public testing::TestWithParam<std::string> {};

TEST_P(SuiteSpec, LoadsAndNameMatchesFile) {
    auto problem = load_problem(spec_path(GetParam()));
    ASSERT_TRUE(problem) << problem.error().to_string();
    EXPECT_EQ(problem->name, GetParam());
    EXPECT_FALSE(problem->description.empty());
    EXPECT_FALSE(problem->outputs.empty());
    for (const auto& tensor : problem->tensors) {
        if (tensor.role != TensorRole::kInput && tensor.role != TensorRole::kParam) continue;
        for (const auto& dim : tensor.dim_names) {
            EXPECT_FALSE(dim.empty()) << tensor.name << " has an unnamed dim: it cannot be "
                                      << "rebound to small shapes";
        }
    }
}

TEST_P(SuiteSpec, ReferenceTimeEstimateIsInTheSuiteWindow) {
    auto problem = load_problem(spec_path(GetParam()));
    ASSERT_TRUE(problem) << problem.error().to_string();
    auto work = count_work(*problem);
    ASSERT_TRUE(work) << work.error().to_string();
    double ms = eager_estimate_ms(*problem, *work);
    EXPECT_GE(ms, kMinEagerMs) << "too small to time reliably";
    EXPECT_LE(ms, kMaxEagerMs) << "too large for the search budget";
}

TEST_P(SuiteSpec, RebindsToSmallDimsAndInterprets) {
    auto problem = load_problem(spec_path(GetParam()));
    ASSERT_TRUE(problem) << problem.error().to_string();
    auto small = rebind_dims(*problem, small_dims(*problem));
    ASSERT_TRUE(small) << small.error().to_string();
    for (const auto& [name, value] : small->dims) EXPECT_LE(value, kSmallDimCap) << name;
    for (const auto& tensor : small->tensors) EXPECT_LE(tensor.numel(), int64_t{1} << 20);
    for (Distribution distribution :
         {Distribution::kUniform01, Distribution::kNormal, Distribution::kHeavyTailed}) {
        SCOPED_TRACE(std::string(to_string(distribution)) + " inputs");
        auto outputs = interpret(*small, generate_inputs(*small, distribution));
        ASSERT_TRUE(outputs) << outputs.error().to_string();
        ASSERT_EQ(outputs->size(), small->outputs.size());
        for (const auto& name : small->outputs) {
            auto it = outputs->find(name);
            ASSERT_NE(it, outputs->end()) << "no values for output " << name;
            const Tensor* tensor = small->find_tensor(name);
            ASSERT_NE(tensor, nullptr);
            EXPECT_EQ(static_cast<int64_t>(it->second.size()), tensor->numel()) << name;
            int64_t non_finite = std::count_if(it->second.begin(), it->second.end(),
                                               [](double x) { return !std::isfinite(x); });
            EXPECT_EQ(non_finite, 0) << name << " has non-finite values in fp64";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Builtin, SuiteSpec, testing::ValuesIn(spec_stems()),
                         [](const testing::TestParamInfo<std::string>& info) {
                             return info.param;
                         });

}  // namespace
}  // namespace kforge
