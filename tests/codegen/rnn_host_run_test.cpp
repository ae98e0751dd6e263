// Integration, no GPU: the numbers of kernels/rnn.cuh against the fp64 interpreter. An lstm /
// gru problem's seed is lowered; the real generated source (both launches of every layer) with
// kernels/rnn.cuh is compiled for the host against a small CUDA emulation in which every thread
// of the grid is a ucontext coroutine (switched at __syncthreads and at the grid barrier's spin,
// so the persistent kernel's cross-CTA barrier really runs), each launch of the plan is run in
// order over its workspaces, and the stored result is compared with interpret().
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>

#include "codegen/lower.h"
#include "problem/inputs.h"
#include "problem/interpret.h"
#include "problem/spec.h"
#include "planner/plan.h"
#include "sol/device.h"
#include "tests/codegen/host_run_shim.h"
#include "tests/reference/rnn_specs.h"

namespace kforge::codegen {
namespace {

namespace fs = std::filesystem;

// The emulation: all threads of a launch as coroutines; block barriers; a spin yields.
constexpr const char* kEmulation = R"(#include <ucontext.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
struct KfDim3 { unsigned x = 0, y = 0, z = 0; };
struct KfThread { ucontext_t ctx; KfDim3 tid, bid; int block = 0; int state = 0; };
static std::vector<KfThread> kf_threads;
static std::vector<std::vector<char>> kf_stacks;
static ucontext_t kf_sched;
static int kf_cur = 0;
static KfDim3 gridDim, blockDim;
static std::vector<std::vector<float>> kf_smem_blocks;
#define threadIdx (kf_threads[kf_cur].tid)
#define blockIdx (kf_threads[kf_cur].bid)
inline void kf_wait(int state) { kf_threads[kf_cur].state = state; swapcontext(&kf_threads[kf_cur].ctx, &kf_sched); }
inline void __syncthreads() { kf_wait(1); }
inline void __threadfence() {}
inline unsigned atomicAdd(unsigned* p, unsigned v) { unsigned o = *p; *p += v; return o; }
#define KFORGE_RNN_SPIN_PAUSE() kf_wait(0)
#define KFORGE_RNN_LOAD_CG(p) (*(p))
#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(n)
#include <functional>
static std::function<void()> kf_body;
static void kf_trampoline() { kf_body(); kf_threads[kf_cur].state = 3; swapcontext(&kf_threads[kf_cur].ctx, &kf_sched); }
inline float* kf_block_smem() { return kf_smem_blocks[kf_threads[kf_cur].block].data(); }
// Runs `body` on every thread of grid x block; false on a deadlock or a runaway spin.
static bool kf_launch(KfDim3 grid, unsigned block, size_t smem_floats, std::function<void()> body) {
    const unsigned blocks = grid.x * grid.y * grid.z, n = blocks * block;
    gridDim = grid; blockDim = {block, 1, 1};
    kf_body = body;
    kf_threads.assign(n, KfThread{});
    kf_stacks.resize(n);
    kf_smem_blocks.assign(blocks, std::vector<float>(smem_floats + 1, 0.f));
    for (unsigned i = 0; i < n; ++i) {
        KfThread& t = kf_threads[i];
        const unsigned b = i / block;
        t.block = int(b);
        t.tid = {i % block, 0, 0};
        t.bid = {b % grid.x, (b / grid.x) % grid.y, b / (grid.x * grid.y)};
        kf_stacks[i].resize(64 * 1024);
        getcontext(&t.ctx);
        t.ctx.uc_stack.ss_sp = kf_stacks[i].data();
        t.ctx.uc_stack.ss_size = kf_stacks[i].size();
        t.ctx.uc_link = nullptr;
        makecontext(&t.ctx, kf_trampoline, 0);
    }
    for (long round = 0; round < 50000000L / (n + 1) + 100000; ++round) {
        bool ran = false;
        for (unsigned i = 0; i < n; ++i) {
            if (kf_threads[i].state != 0) continue;
            kf_cur = int(i);
            ran = true;
            swapcontext(&kf_sched, &kf_threads[i].ctx);
        }
        bool released = false;
        for (unsigned b = 0; b < blocks; ++b) {
            bool all = true, any = false;
            for (unsigned t = b * block; t < (b + 1) * block; ++t) {
                if (kf_threads[t].state == 3) continue;
                any = true;
                all = all && kf_threads[t].state == 1;
            }
            if (!all || !any) continue;
            for (unsigned t = b * block; t < (b + 1) * block; ++t)
                if (kf_threads[t].state == 1) kf_threads[t].state = 0;
            released = true;
        }
        bool done = true;
        for (const KfThread& t : kf_threads) done = done && t.state == 3;
        if (done) return true;
        if (!ran && !released) return false;
    }
    return false;
}
)";

std::string prepared(std::string src) {
    src = std::regex_replace(src, std::regex(R"(#include "[^"]*"\n|#pragma once\n)"), "");
    src = std::regex_replace(src, std::regex(R"(extern __shared__ float kf_smem\[\];)"),
                             "float* kf_smem = kf_block_smem();");
    src = std::regex_replace(src, std::regex(R"(__shared__ kforge::RnnProjTile tile;)"),
                             "kforge::RnnProjTile& tile = *reinterpret_cast<kforge::RnnProjTile*>(kf_block_smem());");
    return src;
}

// Inputs: 0.6 sin(0.37 i) (small, every gate in its linear range), or with `evaluator` the
// evaluation's own draw (generate_input: N(0, 1), rnn weights at 1 / sqrt(H)).
void expect_matches_interpreter(const std::string& json, int units, int threads,
                                std::optional<Distribution> evaluator = std::nullopt) {
    auto problem = parse_problem(json, "rnn.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto prog = planner::seed_program(*problem, dsl::device_limits(find_device("h200").value()));
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 1u);
    prog->kernels[0].rnn.units = units;
    prog->kernels[0].rnn.threads = threads;
    auto low = lower_program(*prog, *problem, {});
    ASSERT_TRUE(low.ok()) << low.error().to_string();

    TensorValues in;
    int seed = 3;
    const fs::path dir = fs::temp_directory_path() / ("kforge_rnn_host_" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::string main_src = "int main(int, char** argv) {\n    const std::string dir = argv[1];\n";
    auto buffer = [&](const std::string& name, int64_t n, bool load) {
        main_src += "    std::vector<float> b_" + name + "(" + std::to_string(n) + " + 1, 0.f);\n";
        if (load)
            main_src += "    { FILE* f = std::fopen((dir + \"/" + name + ".bin\").c_str(), \"rb\"); "
                        "if (!f || std::fread(b_" + name + ".data(), 4, " + std::to_string(n) +
                        ", f) != " + std::to_string(n) + ") return 2; std::fclose(f); }\n";
    };
    for (const Tensor* t : problem->graph_inputs()) {
        std::vector<float> v;
        if (evaluator)
            for (double e : generate_input(*problem, *t, *evaluator, 1000)) v.push_back(float(e));
        else
            for (int64_t i = 0; i < t->numel(); ++i) v.push_back(float(0.6 * std::sin(0.37 * ++seed)));
        in[t->name].assign(v.begin(), v.end());
        std::ofstream(dir / (t->name + ".bin"), std::ios::binary)
            .write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * 4));
        buffer(t->name, t->numel(), true);
    }
    const Tensor& y = *problem->find_tensor(problem->outputs[0]);
    buffer(y.name, y.numel(), false);
    for (const BufferDecl& b : low->plan.buffers) {
        int64_t n = 1;
        for (int64_t e : b.shape) n *= e;
        buffer(b.name, n, false);
    }
    for (const KernelLaunch& l : low->plan.kernels) {
        std::string args;
        for (const KernelParam& p : l.params) {
            const bool sync = p.name.size() > 5 && p.name.substr(p.name.size() - 5) == "_sync";
            args += (args.empty() ? "" : ", ") +
                    (sync ? "reinterpret_cast<unsigned*>(b_" + p.name + ".data())"
                          : "b_" + p.name + ".data()");
        }
        main_src += "    if (!kf_launch({" + std::to_string(l.grid[0]) + ", " +
                    std::to_string(l.grid[1]) + ", " + std::to_string(l.grid[2]) + "}, " +
                    std::to_string(l.block[0]) + ", " +
                    std::to_string(std::max<size_t>(l.smem_bytes / 4, 16 * 68 * 2)) +
                    ", [&] { " + l.symbol + "(" + args + "); })) { std::puts(\"deadlock in " +
                    l.symbol + "\"); return 4; }\n";
    }
    main_src += "    FILE* o = std::fopen((dir + \"/out.bin\").c_str(), \"wb\");\n"
                "    return o && std::fwrite(b_" + y.name + ".data(), 4, " + std::to_string(y.numel()) +
                ", o) == " + std::to_string(y.numel()) + " && !std::fclose(o) ? 0 : 3;\n}\n";
    const fs::path kernels = fs::path(KFORGE_SOURCE_DIR) / "kernels";
    std::ofstream(dir / "run.cpp") << kEmulation << "#include <string>\n"
                                   << prepared(hostrun::read_text(kernels / "rnn.cuh"))
                                   << prepared(low->cuda_source) << main_src;
    const hostrun::HostBuild build = hostrun::build_host_run(dir);
    ASSERT_EQ(build.status, 0) << build.log;
    const std::string run = (dir / "run").string() + " " + dir.string();
    ASSERT_EQ(std::system(run.c_str()), 0) << hostrun::read_text(dir / "run.cpp");
    std::vector<float> got(static_cast<size_t>(y.numel()));
    std::ifstream(dir / "out.bin", std::ios::binary)
        .read(reinterpret_cast<char*>(got.data()), std::streamsize(got.size() * 4));
    fs::remove_all(dir);
    auto ref = interpret(*problem, in);
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();
    const std::vector<double>& want = ref->at(y.name);
    ASSERT_EQ(want.size(), got.size());
    int bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (std::abs(double(got[i]) - want[i]) > 2e-5 * (1.0 + std::abs(want[i])) && bad++ < 5)
            ADD_FAILURE() << y.name << "[" << i << "]: kernel " << got[i] << ", interpreter " << want[i];
    EXPECT_EQ(bad, 0);
}

using eval::testing::rnn_spec_json;

TEST(RnnHostRun, TwoLayerLstmOutputMatchesTheInterpreter) {
    // H = 6 over units 4: two CTAs, the second with two idle units
    expect_matches_interpreter(rnn_spec_json("l", "lstm", 2, false, false, true, "output"), 4, 64);
}

TEST(RnnHostRun, BidirectionalBatchFirstGruHnMatchesTheInterpreter) {
    expect_matches_interpreter(rnn_spec_json("g", "gru", 2, true, true, true, "h_n"), 2, 32);
}

TEST(RnnHostRun, LstmCellStateWithoutBiasMatchesTheInterpreter) {
    expect_matches_interpreter(rnn_spec_json("c", "lstm", 2, true, true, false, "c_n"), 3, 64);
}

TEST(RnnHostRun, GruOutputOverALongerSequenceMatchesTheInterpreter) {
    expect_matches_interpreter(rnn_spec_json("o", "gru", 1, true, false, true, "output", 40, 2, 70, 5), 1, 32);
}

TEST(RnnHostRun, TwoLayerGruOnTheEvaluatorsNormalInputsMatchesTheInterpreter) {
    // The GPU's "incorrect" lstm / gru (session 18): with N(0, 1) weights the recurrence is
    // chaotic and fp32 leaves the fp64 reference within tens of steps (here ~40% of h_n off by
    // up to 0.1); the evaluator now draws rnn weights at 1 / sqrt(H) (problem/inputs.h), where
    // the same fp32 kernel matches.
    expect_matches_interpreter(rnn_spec_json("n", "gru", 2, false, false, true, "h_n", 48, 2, 8, 32), 4,
                               32, Distribution::kNormal);
}

}  // namespace
}  // namespace kforge::codegen
