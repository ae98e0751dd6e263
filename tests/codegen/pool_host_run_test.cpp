// Integration, no GPU: the numbers of kernels/pool.cuh against the fp64 interpreter. A pooling
// problem's seed is lowered with the knobs each case names (or the seed's own, lanes 1: the
// shuffle path needs a warp, the GPU run checks it); the real generated source - the geometry
// struct, the chain functor, the entry point - with kernels/pool.cuh and kernels/chain_ops.cuh
// is compiled for the host (kernels/common.cuh's helpers replaced by scalar host code) and its
// entry point run for every thread of the launch, a warp at a time as 32 host threads (pool_tiles
// stages a warp's outputs in shared memory between __syncwarp calls), then compared with
// interpret(); an output the kernel does not store keeps a sentinel and fails the comparison.
// pool_tiles (max / avg): tiles of rows x items outputs with vec-wide loads, at the edges
// (padding, ceil_mode's last window, partial tiles along both axes), dilation, count_include_pad
// both ways, divisor_override, 1-d / 2-d / 3-d; pool_outputs: adaptive windows.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "codegen/lower.h"
#include "problem/interpret.h"
#include "problem/spec.h"
#include "planner/plan.h"
#include "sol/device.h"
#include "tests/codegen/host_run_shim.h"

namespace kforge::codegen {
namespace {

namespace fs = std::filesystem;

std::string strip_includes(std::string s) {
    return std::regex_replace(s, std::regex(R"(#include "[^"]*"\n|#pragma once\n)"), "");
}

// A kernel's knobs for one run; threads 0: the seed's knobs as planned.
struct Knobs {
    int items = 1, rows = 1, vec = 1, threads = 64;
};

void expect_matches_interpreter(const std::string& op, const std::string& shape,
                                const std::string& attrs, const std::string& dims,
                                const Knobs& knobs) {
    SCOPED_TRACE(op + " " + attrs + " items " + std::to_string(knobs.items) + " rows " +
                 std::to_string(knobs.rows) + " vec " + std::to_string(knobs.vec));
    const std::string json = R"({"name": "pool_host", "dims": )" + dims +
                             R"(, "inputs": {"x": {"shape": )" + shape + R"(, "dtype": "f32"}},
        "graph": [{"op": ")" + op + R"(", "inputs": ["x"], "output": "y", )" + attrs + R"(}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})";
    auto problem = parse_problem(json, "pool.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto prog = planner::seed_program(*problem, dsl::device_limits(find_device("h200").value()));
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 1u);
    dsl::PoolConfig& cfg = prog->kernels[0].pool;
    if (knobs.threads > 0) {
        cfg.lanes = 1;
        cfg.items = knobs.items;
        cfg.rows = knobs.rows;
        cfg.vec = knobs.vec;
        cfg.threads = knobs.threads;
    }
    ASSERT_EQ(cfg.lanes, 1) << "the host run has no warp shuffles";
    auto low = lower_program(*prog, *problem, {});
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    const KernelLaunch& launch = low->plan.kernels.at(0);

    const Tensor& x = *problem->find_tensor("x");
    const Tensor& y = *problem->find_tensor("y");
    std::vector<float> xs;
    std::vector<double> xd;
    for (int64_t i = 0; i < x.numel(); ++i) {
        xs.push_back(float(2.0 * std::sin(0.37 * double(i)) + 0.1 * double(i % 7)));
        xd.push_back(double(xs.back()));
    }
    auto ref = interpret(*problem, {{"x", xd}});
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();

    const fs::path dir = fs::temp_directory_path() / ("kforge_pool_host_" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "x.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(xs.data()), std::streamsize(xs.size() * 4));
    const fs::path kernels = fs::path(KFORGE_SOURCE_DIR) / "kernels";
    const std::string shim = std::string(hostrun::kHostShim) +
        "#include <condition_variable>\n#include <cstring>\n#include <mutex>\n#include <thread>\n"
        "struct KfDim3 { unsigned x = 0, y = 0, z = 0; };\n"
        "static KfDim3 blockIdx, gridDim;\nstatic thread_local KfDim3 threadIdx;\n"
        "#define __global__\n#define __launch_bounds__(n)\n#define __shared__ static\n"
        // a warp is 32 host threads; __syncwarp waits for all of them (one warp runs at a time,
        // so function-local statics stand in for the block's shared memory)
        "struct KfWarpBarrier {\n"
        "    std::mutex m; std::condition_variable cv; int waiting = 0, generation = 0;\n"
        "    void wait() {\n"
        "        std::unique_lock<std::mutex> l(m);\n"
        "        const int g = generation;\n"
        "        if (++waiting == 32) { waiting = 0; ++generation; cv.notify_all(); return; }\n"
        "        cv.wait(l, [&] { return generation != g; });\n"
        "    }\n"
        "};\n"
        "static KfWarpBarrier kf_warp_barrier;\n"
        "inline void __syncwarp(unsigned = 0xffffffffu) { kf_warp_barrier.wait(); }\n"
        "template <class T> T __shfl_xor_sync(unsigned, T v, int, int) { return v; }\n"
        "namespace kforge {\n"
        "template <int V, typename T> inline void load_vec(float (&o)[V], const T* p) {\n"
        "    for (int j = 0; j < V; ++j) o[j] = p[j];\n"
        "}\n"
        "}  // namespace kforge\n";
    const std::string main_src =
        "int main(int, char** argv) {\n"
        "    std::vector<float> x(" + std::to_string(x.numel()) + "), y(" +
        std::to_string(y.numel()) + ", -12345.f);\n"
        "    FILE* f = std::fopen(argv[1], \"rb\");\n"
        "    if (!f || std::fread(x.data(), 4, x.size(), f) != x.size()) return 2;\n"
        "    gridDim.x = " + std::to_string(launch.grid[0]) + ";\n"
        "    for (unsigned b = 0; b < gridDim.x; ++b)\n"
        "        for (unsigned w = 0; w < " + std::to_string(launch.block[0]) + "; w += 32) {\n"
        "            blockIdx.x = b;\n"
        "            std::vector<std::thread> warp;\n"
        "            for (unsigned l = 0; l < 32; ++l)\n"
        "                warp.emplace_back([&, l] {\n"
        "                    threadIdx.x = w + l;\n"
        "                    kforge_k0(x.data(), y.data(), " + std::to_string(x.shape[0] * x.shape[1]) + ");\n"
        "                });\n"
        "            for (std::thread& t : warp) t.join();\n"
        "        }\n"
        "    FILE* o = std::fopen(argv[2], \"wb\");\n"
        "    return o && std::fwrite(y.data(), 4, y.size(), o) == y.size() && !std::fclose(o) ? 0 : 3;\n"
        "}\n";
    std::ofstream(dir / "run.cpp")
        << shim << strip_includes(hostrun::read_text(kernels / "chain_ops.cuh"))
        << strip_includes(hostrun::read_text(kernels / "pool.cuh"))
        << strip_includes(low->cuda_source) << main_src;
    const hostrun::HostBuild build = hostrun::build_host_run(dir);
    ASSERT_EQ(build.status, 0) << build.log << "\n" << hostrun::read_text(dir / "run.cpp");
    const std::string run = (dir / "run").string() + " " + (dir / "x.bin").string() + " " +
                            (dir / "y.bin").string();
    ASSERT_EQ(std::system(run.c_str()), 0) << hostrun::read_text(dir / "run.cpp");
    std::vector<float> got(static_cast<size_t>(y.numel()));
    std::ifstream(dir / "y.bin", std::ios::binary)
        .read(reinterpret_cast<char*>(got.data()), std::streamsize(got.size() * 4));
    fs::remove_all(dir);
    const std::vector<double>& want = ref->at("y");
    ASSERT_EQ(want.size(), got.size());
    int bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        if (std::abs(double(got[i]) - want[i]) > 1e-5 * (1.0 + std::abs(want[i])) && bad++ < 5)
            ADD_FAILURE() << op << " " << attrs << " y[" << i << "]: kernel " << got[i]
                          << ", interpreter " << want[i];
    }
    EXPECT_EQ(bad, 0);
}

TEST(PoolHostRun, KernelMatchesTheInterpreter) {
    const std::string dims = R"({"N": 2, "C": 3, "D": 5, "H": 9, "W": 11})";
    const Knobs one{1, 1, 1, 64}, two{2, 1, 1, 64}, tile{2, 4, 1, 64};
    // the old knobs (2 outputs a thread) and a tile across rows: odd extents, scalar loads
    for (const Knobs& k : {two, tile}) {
        expect_matches_interpreter("max_pool", R"(["N", "C", "W"])",
                                   R"("kernel_size": 4, "stride": 3, "padding": 2, "dilation": 2, "ceil_mode": true)", dims, k);
        expect_matches_interpreter("avg_pool", R"(["N", "C", "H", "W"])",
                                   R"("kernel_size": [3, 2], "stride": 2, "padding": 1, "ceil_mode": true, "count_include_pad": false)", dims, k);
        expect_matches_interpreter("avg_pool", R"(["N", "C", "D", "H", "W"])",
                                   R"("kernel_size": 3, "stride": [1, 2, 2], "padding": 1, "divisor_override": 5)", dims, k);
    }
    expect_matches_interpreter("avg_pool", R"(["N", "C", "H", "W"])",
                               R"("kernel_size": [3, 5], "stride": [1, 2], "padding": [1, 2], "ceil_mode": true)", dims, one);
    // pool_outputs: adaptive windows (overlapping; global)
    expect_matches_interpreter("adaptive_max_pool", R"(["N", "C", "H", "W"])",
                               R"("output_size": [4, 6])", dims, two);
    expect_matches_interpreter("adaptive_avg_pool", R"(["N", "C", "H", "W"])",
                               R"("output_size": 1)", dims, one);
}

// Rows of 48 (a multiple of 4): vector loads, tiles wholly inside the input (no checks) and not,, a tile's windows overlapping along both axes,
// tiles past the last output row and column, windows in the padding on both sides.
TEST(PoolHostRun, VectorTilesMatchTheInterpreter) {
    const std::string dims = R"({"N": 2, "C": 2, "D": 7, "H": 12, "W": 48})";
    const std::string w1 = R"(["N", "C", "W"])", hw = R"(["N", "C", "H", "W"])",
                      dhw = R"(["N", "C", "D", "H", "W"])";
    // KernelBench level 1's forms: 41 (1-d max, dilation 3), 44 (1-d avg), 42 (2-d max, kernel 4
    // stride 1), 43 (3-d max, stride 2 dilation 3), 46 (3-d avg, stride 2)
    for (const Knobs& k : {Knobs{4, 1, 4, 64}, Knobs{8, 1, 4, 32}, Knobs{2, 1, 2, 64}}) {
        expect_matches_interpreter("max_pool", w1, R"("kernel_size": 8, "stride": 1, "padding": 4, "dilation": 3)", dims, k);
        expect_matches_interpreter("avg_pool", w1, R"("kernel_size": 8, "stride": 1, "padding": 4)", dims, k);
    }
    for (const Knobs& k : {Knobs{4, 4, 4, 64}, Knobs{4, 8, 4, 32}, Knobs{2, 2, 2, 64}})
        expect_matches_interpreter("max_pool", hw, R"("kernel_size": 4, "stride": 1, "padding": 1)", dims, k);
    for (const Knobs& k : {Knobs{2, 1, 4, 64}, Knobs{2, 2, 4, 64}}) {
        expect_matches_interpreter("max_pool", dhw, R"("kernel_size": 3, "stride": 2, "padding": 1, "dilation": 3)", dims, k);
        expect_matches_interpreter("avg_pool", dhw, R"("kernel_size": 3, "stride": 2, "padding": 1)", dims, k);
    }
    // count_include_pad false and ceil_mode's last window (partly past the padding), vec 2
    expect_matches_interpreter("avg_pool", hw, R"("kernel_size": [3, 4], "stride": [2, 2], "padding": [1, 2], "ceil_mode": true, "count_include_pad": false)", dims, Knobs{1, 4, 2, 64});
    // the seed's own knobs
    expect_matches_interpreter("max_pool", hw, R"("kernel_size": 4, "stride": 1, "padding": 1)", dims, Knobs{0, 0, 0, 0});
    expect_matches_interpreter("avg_pool", dhw, R"("kernel_size": 3, "stride": 2, "padding": 1)", dims, Knobs{0, 0, 0, 0});
}

}  // namespace
}  // namespace kforge::codegen
