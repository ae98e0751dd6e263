// The CUDA device's arena and launch modes against the fake CUDA driver (tests/runtime/
// fake_cuda_driver.cpp, a labelled test double first on LD_LIBRARY_PATH; no GPU, no kernel
// runs): a chain x -> A -> B -> C -> y whose plan carries no offsets is placed on load, a
// correctness run poisons y before the sequence and each intermediate just before the launch
// that first writes it (4 memsets, 4 launches), stream timing launches one by one, graph timing
// captures once and replays.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "device/device.h"
#include "problem/spec.h"

namespace kforge::eval {
namespace {

template <typename Fn>
Fn fake(const char* name) {
    void* cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return cu ? reinterpret_cast<Fn>(dlsym(cu, name)) : nullptr;
}

codegen::KernelLaunch launch(const std::string& name, const std::string& in, const std::string& out) {
    codegen::KernelLaunch k;
    k.name = k.symbol = name;
    k.params = {{codegen::ParamKind::kTensor, in, 0, 0.0}, {codegen::ParamKind::kTensor, out, 0, 0.0}};
    return k;
}

// y = relu(x): the problem the fake chains run for (nothing runs; only the tensors matter).
Expected<Problem> chain_problem() {
    return parse_problem(R"({"name": "chain", "dims": {"N": 4096},
      "inputs": {"x": {"shape": ["N"], "dtype": "f32"}},
      "graph": [{"op": "relu", "inputs": ["x"], "output": "y"}], "outputs": ["y"],
      "precision": {"policy": "fp32_strict"}})", "chain.json");
}

TEST(CudaDeviceFakeDriver, ArenaBuffersArePoisonedAtFirstWriteAndGraphsReplay) {
    auto device = make_cuda_device(0);
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    auto memsets = fake<unsigned long (*)()>("fake_cuda_memset_count");
    auto launches = fake<unsigned long (*)()>("fake_cuda_launch_count");
    auto captures = fake<unsigned long (*)()>("fake_cuda_capture_count");
    auto graph_launches = fake<unsigned long (*)()>("fake_cuda_graph_launch_count");
    ASSERT_TRUE(memsets && launches && captures && graph_launches) << "not the fake driver";

    auto problem = chain_problem();
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    const std::filesystem::path cubin =
        std::filesystem::temp_directory_path() / ("kforge-fake-" + std::to_string(getpid()) + ".cubin");
    std::ofstream(cubin, std::ios::binary) << "\x7f" "ELF fake cubin";
    Candidate c;
    c.problem = &*problem;
    c.cubin_path = cubin.string();
    c.plan.kernels = {launch("k0", "x", "A"), launch("k1", "A", "B"), launch("k2", "B", "C"),
                      launch("k3", "C", "y")};
    for (const char* n : {"A", "B", "C"}) c.plan.buffers.push_back({n, DType::kF32, {4096}, false, false});
    ASSERT_TRUE((*device)->load(c).ok());

    TensorData inputs{{"x", std::vector<double>(4096, 1.0)}};
    unsigned long m0 = memsets(), l0 = launches();
    RunResult r = (*device)->run(inputs, RunOptions{0, false});
    ASSERT_EQ(r.status, EvalStatus::kPassed) << r.message;
    EXPECT_EQ(memsets() - m0, 4u);  // y before the sequence; A, B, C each before its writer
    EXPECT_EQ(launches() - l0, 4u);

    TimingOptions o;
    o.warmup_iterations = 1;
    o.iterations = 3;
    o.flush_l2 = false;
    l0 = launches();
    unsigned long g0 = graph_launches(), c0 = captures();
    TimingResult t = (*device)->time(o);
    ASSERT_EQ(t.status, EvalStatus::kPassed) << t.message;
    EXPECT_EQ(t.samples.size(), 3u);
    EXPECT_EQ(launches() - l0, 16u);
    EXPECT_EQ(graph_launches(), g0);
    o.use_graph = true;
    l0 = launches();
    t = (*device)->time(o);
    ASSERT_EQ(t.status, EvalStatus::kPassed) << t.message;
    EXPECT_EQ(captures() - c0, 1u);
    EXPECT_EQ(graph_launches() - g0, 4u);
    EXPECT_EQ(launches() - l0, 16u);  // the graph's four kernels per replay
    (*device)->unload();
    std::filesystem::remove(cubin);
}

// The per-kernel pass (TimingOptions::per_kernel): an event before every launch, each program
// kernel the sum of its launches' intervals (the fake driver's elapsed time is 1 ms for any
// pair), min(5, samples) iterations of its own after the samples; one kernel needs no pass.
TEST(CudaDeviceFakeDriver, PerKernelPassSumsEachKernelsLaunches) {
    auto device = make_cuda_device(0);
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    auto launches = fake<unsigned long (*)()>("fake_cuda_launch_count");
    ASSERT_TRUE(launches) << "not the fake driver";
    auto problem = chain_problem();
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    const std::filesystem::path cubin = std::filesystem::temp_directory_path() /
                                        ("kforge-fake-pk-" + std::to_string(getpid()) + ".cubin");
    std::ofstream(cubin, std::ios::binary) << "\x7f" "ELF fake cubin";
    Candidate c;
    c.problem = &*problem;
    c.cubin_path = cubin.string();
    // k1 runs as two launches (a staging pre-kernel or a two-pass reduction)
    c.plan.kernels = {launch("k0", "x", "A"), launch("k1", "A", "B"), launch("k1", "B", "C"),
                      launch("k2", "C", "y")};
    for (const char* n : {"A", "B", "C"}) c.plan.buffers.push_back({n, DType::kF32, {4096}, false, false});
    ASSERT_TRUE((*device)->load(c).ok());
    TensorData inputs{{"x", std::vector<double>(4096, 1.0)}};
    ASSERT_EQ((*device)->run(inputs, RunOptions{0, false}).status, EvalStatus::kPassed);
    TimingOptions o;
    o.warmup_iterations = 1;
    o.iterations = 3;
    o.flush_l2 = false;
    o.per_kernel = true;
    unsigned long l0 = launches();
    TimingResult t = (*device)->time(o);
    ASSERT_EQ(t.status, EvalStatus::kPassed) << t.message;
    EXPECT_EQ(t.samples.size(), 3u);
    EXPECT_EQ(launches() - l0, 16u + 12u);  // 4 sequences, then 3 of the per-kernel pass
    EXPECT_EQ(t.kernel_times_ns, (std::vector<double>{1e6, 2e6, 1e6}));
    o.per_kernel = false;
    EXPECT_TRUE((*device)->time(o).kernel_times_ns.empty());
    // one kernel: the samples' median, no pass
    c.plan.kernels = {launch("k0", "x", "y")};
    c.plan.buffers.clear();
    ASSERT_TRUE((*device)->load(c).ok());
    ASSERT_EQ((*device)->run(inputs, RunOptions{0, false}).status, EvalStatus::kPassed);
    o.per_kernel = true;
    l0 = launches();
    t = (*device)->time(o);
    ASSERT_EQ(t.status, EvalStatus::kPassed) << t.message;
    EXPECT_EQ(launches() - l0, 4u);
    EXPECT_EQ(t.kernel_times_ns, (std::vector<double>{1e6}));
    (*device)->unload();
    std::filesystem::remove(cubin);
}

}  // namespace
}  // namespace kforge::eval
