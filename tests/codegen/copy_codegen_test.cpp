// Copy kernels lowered (codegen/lower_copy.cpp) and run through the pipeline without a GPU:
// - the lowered source: one launch of kernels/copy.cuh with the gather baked in (a source per
//   cat input, its valid range on the cat axis, strides as literals), vector stores where the
//   last extent allows;
// - NVRTC compiles the generated source for sm_90a (a bf16 dense cat with a relu, a permute
//   feeding a GEMM, a channel shuffle read through its split view, softmax over channels
//   between transposes by dim names);
// - each problem's seed passes every gate of the evaluator on the simulated device.
#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "compile/compile.h"
#include "compile/nvrtc_compile.h"
#include "device/device.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluate.h"
#include "planner/plan.h"
#include "problem/spec.h"
#include "sol/device.h"
#include "tests/codegen/kernel_checks.h"

namespace kforge::codegen {
namespace {

dsl::DeviceLimits h200() { return dsl::device_limits(find_device("h200").value()); }

const char* kCat = R"({"name": "dense_cat", "dims": {"N": 2, "C": 16, "G": 8, "H": 12, "W": 20},
    "inputs": {"x": {"shape": ["N","C","H","W"], "dtype": "bf16"}, "a": {"shape": ["N","G","H","W"], "dtype": "bf16"},
               "b": {"shape": ["N","G","H","W"], "dtype": "bf16"}},
    "graph": [{"op": "relu", "inputs": ["a"], "output": "ra"},
              {"op": "cat", "inputs": ["x", "ra", "b"], "output": "y", "axis": 1}],
    "outputs": ["y"], "precision": {"policy": "bf16"}})";

const char* kPermuteGemm = R"({"name": "permute_gemm", "dims": {"B": 2, "C": 64, "L": 48, "H": 32},
    "inputs": {"x": {"shape": ["B","C","L"], "dtype": "f32"}, "w": {"shape": ["H","C"], "dtype": "f32", "param": true}},
    "graph": [{"op": "permute", "inputs": ["x"], "output": "t", "dims": [0, 2, 1]},
              {"op": "linear", "inputs": ["t", "w"], "output": "y"}],
    "outputs": ["y"], "precision": {"policy": "fp32_strict"}})";

const char* kShuffle = R"({"name": "shuffle", "dims": {"B": 2, "C": 12, "G": 3, "D": 4, "H": 5, "W": 6},
    "inputs": {"x": {"shape": ["B","C","H","W"], "dtype": "f32"}},
    "graph": [{"op": "relu", "inputs": ["x"], "output": "r"},
              {"op": "reshape", "inputs": ["r"], "output": "v", "shape": ["B", "G", "D", "H", "W"]},
              {"op": "permute", "inputs": ["v"], "output": "t", "dims": [0, 2, 1, 3, 4]},
              {"op": "reshape", "inputs": ["t"], "output": "y", "shape": ["B", "C", "H", "W"]}],
    "outputs": ["y"], "precision": {"policy": "fp32_strict"}})";

// softmax over channels (not the last dim) then a bias and a sigmoid; logsumexp over channels
const char* kSoftmaxC = R"({"name": "softmax_c", "dims": {"N": 2, "C": 16, "D": 3, "H": 8, "W": 8},
    "inputs": {"x": {"shape": ["N","C","D","H","W"], "dtype": "f32"}, "b": {"shape": ["C", 1, 1, 1], "dtype": "f32"}},
    "graph": [{"op": "softmax", "inputs": ["x"], "output": "s", "axis": 1},
              {"op": "add", "inputs": ["s", "b"], "output": "t"},
              {"op": "sigmoid", "inputs": ["t"], "output": "y"},
              {"op": "logsumexp", "inputs": ["x"], "output": "l", "axis": 1}],
    "outputs": ["y", "l"], "precision": {"policy": "fp32_strict"}})";

struct Seeded {
    Problem problem;
    dsl::Program program;
};

Seeded seed(const char* json) {
    auto p = parse_problem(json, "copy.json");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    if (!p.ok()) return {};
    auto prog = planner::seed_program(*p, h200());
    EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
    if (!prog.ok()) return {};
    return {*p, *prog};
}

TEST(CopyCodegen, OneLaunchWithTheGatherBakedIn) {
    Seeded s = seed(kCat);
    ASSERT_EQ(s.program.kernels.size(), 2u);  // the relu map, the cat
    const std::string text = dsl::print_canonical(s.program);
    EXPECT_NE(text.find("copy cat(x[N,C,H,W], ra[N,G,H,W], b[N,G,H,W])"), std::string::npos) << text;
    auto low = lower_program(s.program, s.problem, {});
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    const std::string& src = low->cuda_source;
    EXPECT_NE(src.find("kforge::copy_elements<256, 4>(g, numel, chain)"), std::string::npos) << src;
    // the second input is valid on channels [16, 24) and read 16 channels back
    EXPECT_NE(src.find("if (o1 >= 16LL && o1 < 24LL) kforge::gather_row<V, 1LL>(v, t_ra, -3840LL"),
              std::string::npos) << src;
    EXPECT_EQ(low->plan.kernels.size(), 2u);
}

TEST(CopyCodegen, ChannelShuffleIsOneCopyThroughItsViews) {
    Seeded s = seed(kShuffle);
    const std::string text = dsl::print_canonical(s.program);
    ASSERT_EQ(s.program.kernels.size(), 2u) << text;  // relu map, the permute copy
    EXPECT_NE(text.find("copy permute(r[B,C,H,W])"), std::string::npos) << text;
    EXPECT_NE(text.find("store y[B,C,H,W]"), std::string::npos) << text;
}

TEST(CopyCodegen, SoftmaxOverChannelsRunsBetweenTransposes) {
    Seeded s = seed(kSoftmaxC);
    const std::string text = dsl::print_canonical(s.program);
    ASSERT_EQ(s.program.kernels.size(), 5u) << text;
    EXPECT_NE(text.find("copy permute(x[N,C,D,H,W]) threads 256 vec 4\n    { store x_t0[N,D,H,W,C] }"),
              std::string::npos) << text;
    EXPECT_NE(text.find("rowwise softmax(x_t0[N,D,H,W,C])"), std::string::npos) << text;
    EXPECT_NE(text.find("{ add b[C,1,1,1]; sigmoid; store y[N,C,D,H,W] }"), std::string::npos) << text;
    EXPECT_NE(text.find("{ store l[N,D,H,W] }"), std::string::npos) << text;  // logsumexp: no way back
    // a transpose that does not reorder the input's own dims is refused by the checker
    auto wrong = dsl::parse_program(R"(program w for "softmax_c"
kernel k0 = copy permute(x[N,C,D,H,W]) { store xt[N,D,H,C] }
kernel k1 = copy permute(xt[N,D,H,C]) { store y[N,C,D,H,W] }
)", "w.kf");
    ASSERT_TRUE(wrong.ok()) << wrong.error().to_string();
    const dsl::CheckResult r = dsl::check_program(*wrong, s.problem, h200());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.errors.front().to_string().find("store a reordering of them"), std::string::npos)
        << r.errors.front().to_string();
}

TEST(CopyCodegen, NvrtcCompilesEveryForm) {
    for (const char* json : {kCat, kPermuteGemm, kShuffle, kSoftmaxC}) {
        Seeded s = seed(json);
        SCOPED_TRACE(s.problem.name);
        ASSERT_FALSE(s.program.kernels.empty());
        dsl::Program copies = s.program;  // the copy kernels alone (a GEMM needs nvcc)
        std::erase_if(copies.kernels, [](const dsl::Kernel& k) {
            return k.kind == dsl::KernelKind::kGemm;
        });
        auto low = lower_program(copies, s.problem, {});
        ASSERT_TRUE(low.ok()) << low.error().to_string();
        testing::expect_nvrtc_compiles(low->cuda_source);
    }
}

TEST(CopySim, SeedsPassEveryGateOnTheSimulatedDevice) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    for (const char* json : {kCat, kPermuteGemm, kShuffle, kSoftmaxC}) {
        Seeded s = seed(json);
        SCOPED_TRACE(s.problem.name);
        ASSERT_FALSE(s.program.kernels.empty());
        eval::EvalReport rep = testing::expect_full_tier_passes(**device, s.problem, s.program);
        EXPECT_GT(rep.stats.median_ns, 0);
    }
}

}  // namespace
}  // namespace kforge::codegen
