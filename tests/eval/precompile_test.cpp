// eval::precompile with the real toolchain (NVRTC / nvcc, no GPU): a batch of programs is
// lowered at every shape the tier's evaluation lowers at and compiled into the cache, so the
// evaluator's own compile of each (same lowering, same options, written out here as
// eval/evaluate.cpp's prepare writes them) is a cache hit; invalid programs are reported and
// skipped. Integration: needs the CUDA toolkit.
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "compile/compile.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluate.h"
#include "eval/precompile.h"
#include "eval_fixture.h"

namespace kforge::eval {
namespace {
namespace fs = std::filesystem;
using testing::read_text;
using testing::suite_problem;

constexpr const char* kLayerNorm256 = R"(program layer_norm_256 for "layer_norm_f32"
kernel k0 = rowwise layer_norm(X[R,C], w[C], b[C]) rows_per_block 1 threads 256 vec 4 passes 1 split 1
    { store Y[R,C] }
)";
constexpr const char* kUnparsable = "program broken for \"layer_norm_f32\"\nkernel k0 = ???\n";
constexpr const char* kUnknownTensor = R"(program wrong_tensor for "layer_norm_f32"
kernel k0 = rowwise layer_norm(Q[R,C], w[C], b[C]) rows_per_block 1 threads 256 vec 4 passes 1 split 1
    { store Y[R,C] }
)";

fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() /
                 ("kforge_precompile_test_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

DeviceInfo h200() {
    DeviceInfo d;
    d.name = "NVIDIA H200";
    d.datasheet_key = "h200";
    d.sm_count = 132;
    return d;
}

bool toolchain_present() { return compile::nvcc_version("nvcc").ok(); }

// The evaluator's compile of `text` at `shape` (eval/evaluate.cpp Pipeline::prepare, written out
// independently so a drift in builder::compile_options breaks this test).
compile::CompileResult evaluator_compile(const std::string& text, const Problem& shape,
                                         const Problem& full, const std::string& cache_dir) {
    auto program = dsl::parse_program(text, "<program>");
    EXPECT_TRUE(program.ok());
    codegen::LowerOptions lower;
    lower.arch = "sm_90a";
    lower.sm_count = 132;
    lower.program_hash = dsl::program_hash(*program);
    lower.config_problem = &full;
    auto lowered = codegen::lower_program(*program, shape, lower);
    EXPECT_TRUE(lowered.ok()) << (lowered.ok() ? "" : lowered.error().to_string());
    compile::CompileOptions options = compile::default_compile_options(lower.arch);
    options.host_library = lowered->has_host_code;
    options.try_nvrtc = !lowered->uses_cutlass && !lowered->has_host_code;
    options.cache_dir = cache_dir;
    auto built = compile::compile_cuda(lowered->cuda_source, options);
    EXPECT_TRUE(built.ok()) << (built.ok() ? "" : built.error().to_string());
    return built.ok() ? *built : compile::CompileResult{};
}

// The shapes a quick evaluation of `text` lowers at: full, small, check (distinct).
std::vector<Problem> quick_shapes(const Problem& full, const std::string& text) {
    std::vector<Problem> shapes{full};
    auto small = small_shape(full, text, "h200", kSmallShapeMaxFlops);
    EXPECT_TRUE(small.ok());
    auto check = check_shape(full, *small, text, "h200");
    EXPECT_TRUE(check.ok());
    for (const Problem& s : {*small, *check})
        if (std::none_of(shapes.begin(), shapes.end(),
                         [&](const Problem& p) { return p.dims == s.dims; }))
            shapes.push_back(s);
    return shapes;
}

TEST(Precompile, QuickBatchMakesEveryEvaluatorCompileACacheHit) {
    if (!toolchain_present()) GTEST_SKIP() << "SKIP: nvcc not found; precompile needs the toolkit";
    fs::path cache = fresh_dir("quick");
    PrecompileRequest r;
    r.problem = suite_problem("layer_norm_f32");
    std::string base = read_text(std::string(KFORGE_SOURCE_DIR) + "/problems/layer_norm_f32.kf");
    // the fourth is the first again: its sources are compiled once
    r.program_texts = {base, kLayerNorm256, kUnparsable, base, kUnknownTensor};
    r.device = h200();
    r.tier = EvalTier::kQuick;
    r.compile_cache_dir = cache.string();
    r.jobs = 2;
    // lowering alone counts the units the compile will build (a search sizes batches by it)
    EXPECT_EQ(compile_units(r), 2);
    PrecompileRequest compile_tier = r;
    compile_tier.tier = EvalTier::kCostModel;
    EXPECT_EQ(compile_units(compile_tier), 0);
    auto report = precompile(r);
    ASSERT_TRUE(report.ok()) << report.error().to_string();
    ASSERT_EQ(report->programs.size(), 5u);

    for (size_t i : {size_t{0}, size_t{1}, size_t{3}}) {
        const PrecompiledProgram& p = report->programs[i];
        EXPECT_EQ(p.status, PrecompileStatus::kCompiled) << i << ": " << p.message;
        EXPECT_TRUE(p.message.empty()) << p.message;
        // 32768x4096 f32: the check shape is a shrink, not the full one (16M-element budget);
        // the row kernel configured for the full rows serves the shorter ones: one source
        EXPECT_EQ(p.shapes.size(), 3u);
        EXPECT_EQ(p.sources, 1);
    }
    EXPECT_EQ(report->programs[0].shapes, report->programs[3].shapes);
    for (size_t i : {size_t{2}, size_t{4}}) {
        const PrecompiledProgram& p = report->programs[i];
        EXPECT_EQ(p.status, PrecompileStatus::kInvalidProgram) << i;
        EXPECT_FALSE(p.message.empty());
        EXPECT_EQ(p.sources, 0);
        EXPECT_TRUE(p.shapes.empty());
    }
    EXPECT_NE(report->programs[4].message.find('Q'), std::string::npos)
        << report->programs[4].message;
    EXPECT_EQ(report->sources, 2);  // one per program; the duplicate adds none
    EXPECT_EQ(report->cache_hits, 0);
    EXPECT_EQ(report->jobs, 2);

    // every compile the evaluator makes for the two programs is now answered from the cache
    for (const std::string& text : {base, std::string(kLayerNorm256)}) {
        for (const Problem& shape : quick_shapes(r.problem, text)) {
            compile::CompileResult c = evaluator_compile(text, shape, r.problem, cache.string());
            EXPECT_EQ(c.status, compile::CompileStatus::kOk) << c.log;
            EXPECT_TRUE(c.cache_hit) << shapes_key(shape);
            EXPECT_TRUE(fs::exists(c.cubin_path)) << c.cubin_path;
        }
    }

    // the same batch again: nothing left to compile
    auto again = precompile(r);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->sources, 2);
    EXPECT_EQ(again->cache_hits, 2);
    EXPECT_EQ(again->programs[1].cache_hits, 1);
    EXPECT_EQ(again->programs[1].time_compile_ns, 0);
    EXPECT_EQ(again->programs[1].status, PrecompileStatus::kCompiled);
    fs::remove_all(cache);
}

TEST(Precompile, CompileTierLowersTheFullShapeOnly) {
    if (!toolchain_present()) GTEST_SKIP() << "SKIP: nvcc not found; precompile needs the toolkit";
    fs::path cache = fresh_dir("compile_tier");
    PrecompileRequest r;
    r.problem = suite_problem("layer_norm_f32");
    r.program_texts = {kLayerNorm256};
    r.device = h200();
    r.tier = EvalTier::kCompile;
    r.compile_cache_dir = cache.string();
    auto report = precompile(r);
    ASSERT_TRUE(report.ok());
    const PrecompiledProgram& p = report->programs.at(0);
    EXPECT_EQ(p.status, PrecompileStatus::kCompiled) << p.message;
    EXPECT_EQ(p.shapes, std::vector<std::string>{shapes_key(r.problem)});
    EXPECT_GE(report->jobs, 1);
    EXPECT_TRUE(evaluator_compile(kLayerNorm256, r.problem, r.problem, cache.string()).cache_hit);
    fs::remove_all(cache);
}

// One CUTLASS GEMM (host param builders: nvcc with the host library, never NVRTC), at the
// compile tier so it is a single nvcc run (about a minute).
TEST(Precompile, CutlassGemmWithHostCodeIsACacheHit) {
    if (!toolchain_present()) GTEST_SKIP() << "SKIP: nvcc not found; precompile needs the toolkit";
    fs::path cache = fresh_dir("cutlass");
    PrecompileRequest r;
    r.problem = suite_problem("gemm_bf16_4096");
    std::string text = read_text(std::string(KFORGE_TEST_DATA_DIR) + "/data/gemm_bf16_4096.kf");
    r.program_texts = {text};
    r.device = h200();
    r.tier = EvalTier::kCompile;
    r.compile_cache_dir = cache.string();
    auto report = precompile(r);
    ASSERT_TRUE(report.ok());
    const PrecompiledProgram& p = report->programs.at(0);
    ASSERT_EQ(p.status, PrecompileStatus::kCompiled) << p.message;
    EXPECT_GT(p.time_compile_ns, 0);
    compile::CompileResult c = evaluator_compile(text, r.problem, r.problem, cache.string());
    EXPECT_TRUE(c.cache_hit);
    EXPECT_EQ(c.backend, compile::CompileBackend::kNvcc);
    EXPECT_FALSE(c.host_library_path.empty());
    fs::remove_all(cache);
}

TEST(Precompile, NothingToCompileIsASkipNotACompile) {
    fs::path cache = fresh_dir("skip");
    PrecompileRequest r;
    r.problem = suite_problem("layer_norm_f32");
    r.program_texts = {kLayerNorm256, kUnparsable};
    r.compile_cache_dir = cache.string();
    r.device = h200();
    r.device.simulated = true;
    auto sim = precompile(r);
    ASSERT_TRUE(sim.ok());
    EXPECT_EQ(sim->programs[0].status, PrecompileStatus::kSkipped);
    EXPECT_NE(sim->programs[0].message.find("simulated"), std::string::npos);
    EXPECT_EQ(sim->programs[1].status, PrecompileStatus::kInvalidProgram);
    EXPECT_EQ(sim->sources, 0);
    r.device.simulated = false;
    r.tier = EvalTier::kStatic;
    auto stat = precompile(r);
    ASSERT_TRUE(stat.ok());
    EXPECT_EQ(stat->programs[0].status, PrecompileStatus::kSkipped);
    EXPECT_EQ(stat->sources, 0);
    EXPECT_TRUE(fs::is_empty(cache));
    fs::remove_all(cache);
}

TEST(Precompile, NoCacheDirIsAnError) {
    PrecompileRequest r;
    r.problem = suite_problem("layer_norm_f32");
    r.program_texts = {kLayerNorm256};
    r.device = h200();
    auto report = precompile(r);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.error().message.find("cache"), std::string::npos);
}

// The target, lowering and compile options are the builder's (tests/builder/); here the status
// names only.
TEST(Precompile, StatusNamesRoundTrip) {
    for (PrecompileStatus s : {PrecompileStatus::kCompiled, PrecompileStatus::kSkipped,
                               PrecompileStatus::kInvalidProgram, PrecompileStatus::kFailed})
        EXPECT_EQ(precompile_status_from_string(to_string(s)), s);
    EXPECT_FALSE(precompile_status_from_string("bogus"));
}

}  // namespace
}  // namespace kforge::eval
