// Launch knobs on the GPU (codegen/launch_knobs.h, issue 27): a split-K GEMM and its launch-knob
// variants - another split, another raster and swizzle, stream-K - evaluated through the gated
// pipeline on the CUDA device with one compile cache: the first compiles (one nvcc), every
// variant passes the correctness gates on that compile (its compile gate a cache hit, no
// compiler time) and the search's rule (search/knob_space.h) calls each move free; the knobs
// reach CUTLASS at run time (the split-K workspace the host builder asks grows with the split).
// A tile change is a compile of its own. Skips visibly without a GPU or nvcc. Label gpu; carried
// to the GPU machine by bench/lib/make_carry.sh (a CUTLASS compile: never in CI).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "builder/build.h"
#include "compile/compile.h"
#include "device/device.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluate.h"
#include "problem/interpret.h"
#include "problem/spec.h"
#include "runtime/launch.h"
#include "search/knob_space.h"

namespace kforge::search {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const eval::GateOutcome* compile_gate(const eval::EvalReport& r) {
    for (const eval::GateOutcome& g : r.gates)
        if (g.gate == "compile") return &g;
    return nullptr;
}

dsl::Program variant(const dsl::Program& p, void (*set)(dsl::GemmConfig&)) {
    dsl::Program q = p;
    set(q.kernels[0].gemm);
    return q;
}

TEST(FreeKnobsGpu, VariantsRunOnOneCompile) {
    if (!compile::nvcc_version("nvcc").ok()) GTEST_SKIP() << "SKIP: nvcc not found";
    auto device = eval::make_cuda_device(0);
    if (!device.ok()) GTEST_SKIP() << "SKIP: no usable GPU: " << device.error().to_string();
    const std::string dir = std::string(KFORGE_SOURCE_DIR) + "/problems/";
    auto full = load_problem(dir + "gemm_large_k_bf16.json");
    ASSERT_TRUE(full.ok()) << full.error().to_string();
    auto problem = rebind_dims(*full, {{"M", 1024}, {"N", 1024}, {"K", 16384}});
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto base = dsl::parse_program(read_text(dir + "gemm_large_k_bf16.kf"), "gemm_large_k_bf16.kf");
    ASSERT_TRUE(base.ok()) << base.error().to_string();  // cooperative, splitk 2
    const fs::path cache = fs::temp_directory_path() / ("kforge_free_knobs_" + std::to_string(getpid()));
    fs::remove_all(cache);

    auto evaluate = [&](const dsl::Program& p) {
        eval::EvalRequest req;
        req.problem = *problem;
        req.program_text = dsl::print_canonical(p);
        req.tier = EvalTier::kQuick;
        req.compile_cache_dir = cache.string();
        eval::EvalReport r = eval::evaluate(**device, req);
        EXPECT_EQ(r.status, EvalStatus::kPassed) << req.program_text << "\n" << r.message;
        const eval::GateOutcome* g = compile_gate(r);
        EXPECT_NE(g, nullptr);
        return g ? g->evidence : nlohmann::ordered_json::object();
    };
    const nlohmann::ordered_json first = evaluate(*base);
    EXPECT_EQ(first.value("cache_hit", true), false);
    EXPECT_GT(first.value("time_compile_ns", int64_t{0}), 0);
    const std::vector<dsl::Program> variants = {
        variant(*base, [](dsl::GemmConfig& c) { c.split_k = 4; }),
        variant(*base, [](dsl::GemmConfig& c) {
            c.split_k = 3;
            c.raster = dsl::Raster::kAlongM;
            c.swizzle = 4;
        }),
        variant(*base, [](dsl::GemmConfig& c) {
            c.schedule = dsl::Schedule::kStreamK;
            c.split_k = 1;
        }),
    };
    for (const dsl::Program& v : variants) {
        EXPECT_TRUE(is_free_move(*base, v)) << dsl::print_canonical(v);
        const nlohmann::ordered_json ev = evaluate(v);
        EXPECT_EQ(ev.value("cache_hit", false), true) << dsl::print_canonical(v);
        EXPECT_EQ(ev.value("time_compile_ns", int64_t{-1}), 0);
    }

    // The knobs reach CUTLASS at run time: split 8's workspace (fp32 partials) is larger than
    // split 2's, asked of the one host library.
    builder::BuildOptions options;
    options.compile_cache_dir = cache.string();
    const Target target = target_for_device((*device)->info().datasheet_key,
                                            (*device)->info().sm_count);
    auto workspace = [&](const dsl::Program& p) -> uint64_t {
        builder::BuiltCandidate c = builder::build(p, *problem, target, options);
        EXPECT_EQ(c.status, builder::BuildStatus::kBuilt) << c.message;
        if (!c.compiled) return 0;
        EXPECT_TRUE(c.compiled->cache_hit);
        auto m = runtime::load_builders(c.lowered.plan, c.compiled->host_library_path);
        EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().to_string());
        if (!m.ok()) return 0;
        std::vector<int64_t> dims;
        for (const auto& [name, v] : problem->dims) dims.push_back(v);
        auto ws = runtime::builder_workspace_bytes(*m, c.lowered.plan, c.lowered.plan.kernels.size() - 1,
                                                   dims, target.sm_count, 0);
        EXPECT_TRUE(ws.ok()) << (ws.ok() ? "" : ws.error().to_string());
        return ws.ok() ? *ws : 0;
    };
    const uint64_t ws2 = workspace(*base);
    const uint64_t ws8 = workspace(variant(*base, [](dsl::GemmConfig& c) { c.split_k = 8; }));
    std::printf("split-K workspace: splitk 2 %llu bytes, splitk 8 %llu bytes\n",
                (unsigned long long)ws2, (unsigned long long)ws8);
    EXPECT_GT(ws8, ws2);

    // a tile change is a compile of its own
    const dsl::Program tile = variant(*base, [](dsl::GemmConfig& c) { c.tile_n = 256; });
    EXPECT_FALSE(is_free_move(*base, tile));
    EXPECT_EQ(evaluate(tile).value("cache_hit", true), false);
    fs::remove_all(cache);
}

}  // namespace
}  // namespace kforge::search
