// The GPU reference on a real GPU (label gpu; skips visibly without one): for every suite problem
// at a small shape and a spec of every op, CudaDevice::reference() must agree with the CPU fp64
// interpreter element by element on uniform, normal and heavy-tailed inputs; at full shape a
// large GEMM is fast and matches spot checks. (The pipeline's use of it on a GPU:
// CudaDeviceGpu.GemmBf16PassesOnTheGpu in cuda_device_test.cpp.)
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "device/cuda_device.h"
#include "eval/evaluate.h"
#include "problem/inputs.h"
#include "reference/gpu_reference.h"
#include "index_specs.h"
#include "reference_specs.h"
#include "tests/eval/eval_fixture.h"

namespace kforge::eval {
namespace {

std::unique_ptr<Device>& gpu() {
    static std::unique_ptr<Device> device = [] {
        auto d = make_cuda_device(0);
        return d ? std::move(*d) : std::unique_ptr<Device>();
    }();
    return device;
}

std::string no_gpu() {
    auto d = make_cuda_device(0);
    return "SKIP: no usable GPU (" + (d ? std::string("?") : d.error().message) + ")";
}

TensorData inputs_for(const Problem& p, Distribution d, uint64_t seed) {
    TensorData inputs;
    for (const Tensor* t : p.graph_inputs()) inputs[t->name] = generate_input(p, *t, d, seed);
    return inputs;
}

// The worst relative error seen (elements with |cpu| >= 1e-3 max|cpu|), printed per test.
struct Worst {
    double rel = 0;
    std::string where;
};
Worst& worst() {
    static Worst w;
    return w;
}

// |gpu - cpu| <= 1e-9 |cpu| + 1e-11 max|cpu| (fp64 with another summation order and CUDA's
// transcendentals, within a few ulp of glibc's); NaN where the CPU has NaN, equal infinities.
::testing::AssertionResult agree(const std::string& what, const std::vector<double>& g,
                                 const std::vector<double>& c) {
    if (g.size() != c.size())
        return ::testing::AssertionFailure() << what << ": " << g.size() << " vs " << c.size();
    double scale = 0;
    for (double x : c)
        if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));
    int64_t bad = 0, first = -1;
    double worst_diff = 0;
    for (size_t i = 0; i < c.size(); ++i) {
        bool ok = std::isnan(c[i]) ? std::isnan(g[i])
                  : std::isinf(c[i])
                      ? g[i] == c[i]
                      : std::fabs(g[i] - c[i]) <= 1e-9 * std::fabs(c[i]) + 1e-11 * scale;
        if (std::isfinite(c[i]) && std::fabs(c[i]) >= 1e-3 * scale && scale > 0) {
            double rel = std::fabs(g[i] - c[i]) / std::fabs(c[i]);
            if (rel > worst().rel) worst() = {rel, what};
        }
        if (!ok) {
            if (first < 0) first = static_cast<int64_t>(i);
            ++bad;
            if (std::isfinite(g[i]) && std::isfinite(c[i]))
                worst_diff = std::max(worst_diff, std::fabs(g[i] - c[i]));
        }
    }
    if (bad == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << what << ": " << bad << " of " << c.size() << " elements differ; first at " << first
           << ": gpu " << g[first] << " cpu " << c[first] << " (worst finite |diff| " << worst_diff
           << ", max|cpu| " << scale << ")";
}

void print_worst(const char* test) {
    std::printf("[ INFO     ] %s: max_rel %.3g (%s)\n", test, worst().rel, worst().where.c_str());
    worst() = {};
}

void expect_matches_interpreter(const Problem& p) {
    for (Distribution d : {Distribution::kUniform01, Distribution::kNormal,
                           Distribution::kHeavyTailed}) {
        TensorData inputs = inputs_for(p, d, 7);
        auto cpu = interpret(p, inputs);
        ASSERT_TRUE(cpu.ok()) << p.name << ": " << cpu.error().to_string();
        ReferenceResult g = gpu()->reference(p, inputs);
        ASSERT_TRUE(g.ok()) << p.name << ": " << g.error;
        for (const auto& [name, values] : *cpu)
            EXPECT_TRUE(agree(p.name + " " + name + " (" + std::string(to_string(d)) + ", " +
                                  shapes_key(p) + ")",
                              g.outputs[name], values));
    }
}

TEST(GpuReferenceGpu, EveryOpMatchesTheInterpreter) {
    if (!gpu()) GTEST_SKIP() << no_gpu();
    EXPECT_EQ(gpu()->reference_kind(), kGpuReferenceKind);
    std::vector<testing::NamedSpec> specs = testing::every_op_specs();
    for (const auto& spec : testing::index_op_specs()) specs.push_back(spec);
    for (const auto& spec : specs) {
        auto p = parse_problem(spec.json, spec.name);
        ASSERT_TRUE(p.ok()) << spec.name;
        expect_matches_interpreter(*p);
    }
    print_worst("every op");
}

TEST(GpuReferenceGpu, EverySuiteProblemMatchesTheInterpreterAtASmallShape) {
    if (!gpu()) GTEST_SKIP() << no_gpu();
    for (const std::string& file : testing::suite_problem_files()) {
        auto full = load_problem(file);
        ASSERT_TRUE(full.ok()) << file;
        auto small = testing::interpretable_shape(*full);
        ASSERT_TRUE(small.ok()) << file << ": " << small.error().to_string();
        expect_matches_interpreter(*small);
    }
    print_worst("suite problems");
}

TEST(GpuReferenceGpu, TheModuleIsCompiledOncePerSource) {
    if (!gpu()) GTEST_SKIP() << no_gpu();
    auto p = parse_problem(testing::every_op_specs().front().json, "m");
    ASSERT_TRUE(p.ok());
    TensorData inputs = inputs_for(*p, Distribution::kNormal, 1);
    ReferenceResult first = gpu()->reference(*p, inputs);
    ReferenceResult second = gpu()->reference(*p, inputs);
    ASSERT_TRUE(first.ok() && second.ok()) << first.error << second.error;
    EXPECT_TRUE(second.module_cached);
    EXPECT_EQ(second.time_compile_ms, 0);
    EXPECT_EQ(first.outputs, second.outputs);  // deterministic
}

// A full-shape GEMM: fp64 buffers freed afterwards, the time printed (an H200 should take tens
// of ms for 4096^3 and ~0.1 s for 8192^3), 64 outputs checked against CPU dot products.
void check_full_gemm(const std::string& name) {
    Problem p = testing::suite_problem(name);
    TensorData inputs = inputs_for(p, Distribution::kNormal, 3);
    int64_t before = gpu()->memory_used_bytes();
    gpu()->reference(p, inputs);  // compiles
    auto t0 = std::chrono::steady_clock::now();
    ReferenceResult g = gpu()->reference(p, inputs);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(g.ok()) << g.error;
    std::printf("[ INFO     ] %s fp64 reference: %.1f ms on the device path (run_ms %.1f, with "
                "copies)\n", name.c_str(), s * 1e3, g.time_run_ms);
    EXPECT_LT(s, 10.0);  // a gross guard; the numbers are printed for the record
    EXPECT_LE(gpu()->memory_used_bytes(), before + (64 << 20));
    int64_t m = p.dims.at("M"), n = p.dims.at("N"), k = p.dims.at("K");
    const std::vector<double>& a = inputs.at(p.ops[0].inputs[0]);
    const std::vector<double>& b = inputs.at(p.ops[0].inputs[1]);
    const std::vector<double>& y = g.outputs.at(p.outputs[0]);
    ASSERT_EQ(static_cast<int64_t>(y.size()), m * n);
    for (int t = 0; t < 64; ++t) {
        int64_t i = (t * 7919) % m, j = (t * 104729 + 13) % n;
        double acc = 0;
        for (int64_t q = 0; q < k; ++q) acc += a[i * k + q] * b[q * n + j];  // A[M,K] @ B[K,N]
        EXPECT_NEAR(y[i * n + j], acc, 1e-9 * std::sqrt(double(k))) << name << " (" << i << ", "
                                                                    << j << ")";
    }
}

TEST(GpuReferenceGpu, FullShapeGemmsAreFastAndRight) {
    if (!gpu()) GTEST_SKIP() << no_gpu();
    check_full_gemm("gemm_f32_4096");
    check_full_gemm("gemm_bf16_8192");
}

}  // namespace
}  // namespace kforge::eval
