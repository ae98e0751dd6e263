// Unit tests of the analytic time model (perfmodel/sim_model.h): its noise, and how tiles,
// stages and conv2d's staged implicit GEMM show in its estimates.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/timing.h"
#include "dsl/parser.h"
#include "perfmodel/sim_model.h"
#include "problem/spec.h"
#include "sol/device.h"

namespace kforge::perfmodel {
namespace {

Problem suite_problem(const std::string& name) {
    auto p = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".json");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

TEST(SimModel, NoiseIsDeterministicAroundOnePercent) {
    std::vector<double> f;
    for (int i = 0; i < 2000; ++i) f.push_back(sim_noise_factor("abc", i));
    EXPECT_DOUBLE_EQ(sim_noise_factor("abc", 3), f[3]);
    EXPECT_NE(sim_noise_factor("abd", 3), f[3]);
    eval::TimingStats s = eval::timing_stats(f, 10);
    EXPECT_NEAR(s.median_ns, 1.0, 0.002);
    EXPECT_GT(s.iqr_ns, 0.005);
    EXPECT_LT(s.iqr_ns, 0.02);
    EXPECT_GT(s.min_ns, 0.95);
    EXPECT_LT(s.max_ns, 1.05);
}

TEST(SimModel, TileQuantizationAndStagesShowInTheModel) {
    Problem p = suite_problem("gemm_bf16_4096");
    auto spec = find_device("h200");
    ASSERT_TRUE(spec.ok());
    Ceilings c = effective_ceilings(*spec, std::nullopt);
    auto time_of = [&](const char* knobs) {
        std::string text = std::string("program g for \"gemm_bf16_4096\"\nkernel k0 = gemm(A[M,K], "
                                       "B[K,N]) ") + knobs + " { cast bf16; store C[M,N] }\n";
        auto prog = dsl::parse_program(text, "<t>");
        EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
        auto e = model_time(p, *prog, c, spec->sm_count);
        EXPECT_TRUE(e.ok());
        return e->time_ns;
    };
    double good = time_of("tile 128x128x64 stages 4 schedule cooperative");
    EXPECT_LT(good, time_of("tile 128x128x64 stages 2 schedule cooperative"));
    EXPECT_LT(good, time_of("tile 64x64x64 stages 4 schedule cooperative"));
    EXPECT_GT(good, 1.374e11 / c.peak(ComputeUnit::kBf16Tensor) * 1e9);  // never beats the peak
}

// conv2d kernels: the implicit GEMM's tiles and stages show as a gemm's, tf32x3 costs more
// than tf32, the staging and epilogue launches add their DRAM traffic, and a kernel whose
// operands no conv2d op reads is an error.
TEST(SimModel, Conv2dKernelsAreModelledAsStagedImplicitGemms) {
    auto p = parse_problem(R"({"name": "conv", "dims": {"N": 16, "C": 64, "H": 64, "W": 64,
        "K": 128, "R": 3, "S": 3},
        "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
                   "w": {"shape": ["K", "C", "R", "S"], "dtype": "f32", "param": true},
                   "b": {"shape": ["K"], "dtype": "f32", "param": true}},
        "graph": [{"op": "conv2d", "inputs": ["x", "w", "b"], "output": "h", "padding": 1,
                   "out_dims": ["P", "Q"]},
                  {"op": "relu", "inputs": ["h"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "tf32"}})", "conv");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    auto spec = find_device("h200");
    ASSERT_TRUE(spec.ok());
    Ceilings c = effective_ceilings(*spec, std::nullopt);
    auto estimate = [&](const std::string& head, const char* knobs) {
        std::string text = "program g for \"conv\"\nkernel k0 = conv2d(" + head + ") " + knobs +
                           " { add b[K]; relu; store y[N,K,P,Q] }\n";
        auto prog = dsl::parse_program(text, "<t>");
        EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
        return model_time(*p, *prog, c, spec->sm_count);
    };
    const std::string head = "x[N,C,H,W], w[K,C,R,S]";
    auto time_of = [&](const char* knobs) {
        auto e = estimate(head, knobs);
        EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().to_string());
        return e.ok() ? e->time_ns : 0.0;
    };
    const double good = time_of("tile 128x64x32 stages 4 math tf32");
    EXPECT_LT(good, time_of("tile 128x64x32 stages 2 math tf32"));
    EXPECT_LT(good, time_of("tile 128x64x32 stages 4 math tf32x3"));
    const double flops = 2.0 * 16 * 64 * 64 * 128 * 64 * 9;  // C = 64 needs no channel padding
    EXPECT_GT(good, flops / c.peak(ComputeUnit::kTf32Tensor) * 1e9);
    auto e = estimate(head, "tile 128x64x32 stages 4 math tf32");
    ASSERT_TRUE(e.ok());
    ASSERT_EQ(e->kernels.size(), 1u);
    EXPECT_DOUBLE_EQ(e->kernels[0].flops, flops);
    // x and w read and written staged, the f32 workspace written and read, y written, b read
    const double x = 16.0 * 64 * 64 * 64 * 4, w = 128.0 * 64 * 9 * 4, ys = 16.0 * 64 * 64 * 128 * 4;
    EXPECT_DOUBLE_EQ(e->kernels[0].bytes, 2 * x + 2 * w + (x + w + ys) + ys + 128 * 4 + ys);
    EXPECT_GT(e->time_ns, e->kernels[0].bytes / c.dram_bytes_per_s * 1e9);

    auto wrong = estimate("w[K,C,R,S], x[N,C,H,W]", "tile 128x64x32 stages 4 math tf32");
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.error().message.find("no conv2d op of the problem reads w and x"),
              std::string::npos) << wrong.error().message;
}

}  // namespace
}  // namespace kforge::perfmodel
