// The suite's start phase and rounds with the real compiler (the simulated device claiming to be
// real, so they compile into a cache while every evaluation runs simulated): with no CUTLASS
// headers and no kernel templates where it looks, a start's compile fails at once (nvcc stops at
// the first missing header, well under a second) and the compiler's own words (the missing
// header, the command) are in the printed line and in the store's evaluation of the start; a
// round's compile wave (row-wise programs: NVRTC, seconds) feeds the compile-time history the
// next start phase plans by.
#include <gtest/gtest.h>

#include "common/install_paths.h"
#include "compile/compile_history.h"
#include "search/loop_internal.h"
#include "search/suite_start.h"
#include "suite_start_fixture.h"

namespace kforge::search {
namespace {
namespace fs = std::filesystem;
using testing::PrecompilingSimEvaluator;
using testing::SuiteStart;
using testing::fresh_dir;

TEST_F(SuiteStart, CompileFailureMessageInOutputAndStore) {
    const fs::path dir = fresh_dir("failure");
    fs::create_directories(dir / "home" / "kernels");
    fs::create_directories(dir / "cutlass");
    const InstallPaths saved = install_paths();
    InstallPaths broken = saved;
    broken.data_dir = (dir / "home").string();
    broken.cutlass_include = (dir / "cutlass").string();
    set_install_paths(broken);
    PrecompilingSimEvaluator evaluator(*device_);
    SearchOptions o;
    o.compile_cache_dir = (dir / "cache").string();
    o.budget.wall_s = 60;
    o.suite = "broken";
    auto states = start(evaluator, o, {"gemm_bf16_4096"});
    ASSERT_EQ(states.size(), 1u);
    std::vector<std::string> lines;
    StartPhaseOptions start;
    start.jobs = 1;
    start.print = [&](const std::string& l) { lines.push_back(l); };
    Spent spent;
    start_wall_clock(spent);
    auto r = run_start_phase(states, evaluator, *store_, o, spent, start);
    set_install_paths(saved);
    ASSERT_TRUE(r) << r.error().to_string();
    std::string all;
    for (const std::string& l : lines) all += l;
    if (all.find("toolchain_missing") != std::string::npos) GTEST_SKIP() << "no nvcc: " << all;
    ASSERT_EQ(r->failed.size(), 1u) << all;
    EXPECT_NE(all.find("start gemm_bf16_4096: compile failed"), std::string::npos) << all;
    // the header it could not find (the first of the CUTLASS headers and kforge's templates)
    EXPECT_NE(all.find("cannot find the header or template "), std::string::npos) << all;
    EXPECT_NE(all.find("command: "), std::string::npos) << all;
    EXPECT_EQ(all.find(": compile_failed\n"), std::string::npos) << "a bare status: " << all;
    const SearchState& st = states[0];
    EXPECT_EQ(st.stop_reason.rfind("its start program failed to compile: compile_failed: cannot "
                                   "find the header or template ", 0), 0u)
        << st.stop_reason;
    auto evals = store_->list_evaluations(st.candidates.at(st.start_hash).id);
    ASSERT_TRUE(evals);
    ASSERT_EQ(evals->size(), 1u);
    EXPECT_EQ((*evals)[0].status, EvalStatus::kCompileFailed);
    EXPECT_NE((*evals)[0].error_text.find("cannot find the header or template "), std::string::npos)
        << (*evals)[0].error_text;
    EXPECT_NE((*evals)[0].error_text.find("command: "), std::string::npos);
    fs::remove_all(dir);
}

// A round's compile wave feeds the history: each program that compiled something, by its
// costliest kernel (the report of a precompile, as eval::precompile writes it).
TEST_F(SuiteStart, RoundCompileWavesFeedTheCompileHistory) {
    const fs::path dir = fresh_dir("history");
    auto states = start(*evaluator_, SearchOptions{}, {"gemm_bf16_4096", "layer_norm_f32"});
    ASSERT_EQ(states.size(), 2u);
    eval::PrecompileRequest pre;
    pre.compile_cache_dir = (dir / "cache").string();
    pre.jobs = 4;
    eval::PrecompileReport report;
    for (const SearchState& st : states) {
        pre.program_texts.push_back(st.candidates.at(st.start_hash).text);
        eval::PrecompiledProgram p;
        p.status = eval::PrecompileStatus::kCompiled;
        p.sources = 1;
        p.time_compile_ns = st.problem.name == "layer_norm_f32" ? 1'500'000'000 : 40'000'000'000;
        report.programs.push_back(p);
    }
    eval::PrecompiledProgram cached;  // a cache hit compiled nothing: no sample
    cached.status = eval::PrecompileStatus::kCompiled;
    cached.sources = cached.cache_hits = 1;
    pre.program_texts.push_back(pre.program_texts[0]);
    report.programs.push_back(cached);
    report.sources = 3;
    report.cache_hits = 1;
    detail::record_compile_cost(states[0], pre, report, 41.0);
    auto history = compile::load_compile_history(pre.compile_cache_dir);
    ASSERT_EQ(history.size(), 2u);
    EXPECT_EQ(history[0].kind, "gemm_sm90");
    EXPECT_EQ(history[0].config, "128x256x64 cooperative bf16 cluster 2x1");
    EXPECT_DOUBLE_EQ(history[0].seconds, 40.0);
    EXPECT_EQ(history[1].kind, "rowwise");
    EXPECT_DOUBLE_EQ(history[1].seconds, 1.5);
    // the next plan estimates by it
    StartPlan plan = plan_starts(states, true, pre.compile_cache_dir, 2, 1.0);
    ASSERT_FALSE(plan.items.empty());
    EXPECT_TRUE(plan.items[0].needs_nvcc);
    EXPECT_DOUBLE_EQ(plan.items[0].compile_est_s, 40.0);
    EXPECT_EQ(plan.items[0].estimate_basis, "1 sample of gemm_sm90 128x256x64 cooperative bf16 cluster 2x1");
    fs::remove_all(dir);
}

}  // namespace
}  // namespace kforge::search
