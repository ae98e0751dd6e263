// `kforge optimize` / `kforge suite` on problems kforge has never seen, through the binary on the
// simulated device: suite problems copied without their .kf and new specs written here (a
// linear+bias+tanh fp16 at odd sizes, a softmax over 3000 columns, an element-wise chain) get a
// synthesized start program, the search finishes and writes best.kf; a problem the language
// cannot express is a user error naming the op; the suite seeds the problems without a .kf; on
// the simulated device the profiling hook falls back to ptxas + SOL and the diagnosis proposer
// acts on that diagnosis.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "store/store.h"
#include "tests/cli_run.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

using kforge::test::CliRun;
using kforge::test::run_cli;

class OptimizeCli : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("kforge_optimize_cli_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "specs");
    }
    void TearDown() override {
        if (!HasFailure()) fs::remove_all(dir_);
    }
    std::string copy_spec(const std::string& name, bool with_kf = false) {
        const fs::path src = fs::path(KFORGE_SOURCE_DIR) / "problems";
        fs::copy_file(src / (name + ".json"), dir_ / "specs" / (name + ".json"));
        if (with_kf) fs::copy_file(src / (name + ".kf"), dir_ / "specs" / (name + ".kf"));
        return (dir_ / "specs" / (name + ".json")).string();
    }
    std::string write_spec(const std::string& name, const std::string& json) {
        const fs::path p = dir_ / "specs" / (name + ".json");
        std::ofstream(p) << json;
        return p.string();
    }
    // optimize on the simulated device, 2 rounds, no profiling (kept for the profiling test)
    CliRun optimize(const std::string& spec, const std::string& name,
                    const std::string& extra = "--profile-top 0") {
        return run_cli("optimize " + spec + " --device sim --rounds 2 --db " +
                       (dir_ / (name + ".db")).string() + " --out " + (dir_ / name).string() +
                       " " + extra);
    }
    fs::path dir_;
};

const char* kLinearTanhOdd =
    R"({"name":"linear_bias_tanh_fp16_odd","dims":{"M":999,"N":1000,"K":1000},
        "inputs":{"X":{"shape":["M","K"],"dtype":"f16"},"W":{"shape":["N","K"],"dtype":"f16","param":true},
                  "b":{"shape":["N"],"dtype":"f16","param":true}},
        "graph":[{"op":"linear","inputs":["X","W","b"],"output":"H"},{"op":"tanh","inputs":["H"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"fp16"}})";
const char* kSoftmax3000 =
    R"({"name":"softmax_3000_cols_f32","dims":{"R":4096,"C":3000},
        "inputs":{"X":{"shape":["R","C"],"dtype":"f32"}},
        "graph":[{"op":"softmax","inputs":["X"],"output":"Y","axis":-1}],
        "outputs":["Y"],"precision":{"policy":"fp32_strict"}})";
const char* kElementwiseChain =
    R"({"name":"silu_residual_chain_bf16","dims":{"R":3001,"C":768},
        "inputs":{"X":{"shape":["R","C"],"dtype":"bf16"},"Z":{"shape":["R","C"],"dtype":"bf16"},
                  "g":{"shape":["C"],"dtype":"bf16","param":true}},
        "graph":[{"op":"sigmoid","inputs":["X"],"output":"S"},{"op":"mul","inputs":["X","S"],"output":"A"},
                 {"op":"mul","inputs":["A","g"],"output":"B"},{"op":"add","inputs":["B","Z"],"output":"C2"},
                 {"op":"relu","inputs":["C2"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"bf16"}})";

void expect_seeded_run(const CliRun& r, const fs::path& out) {
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("no start program: synthesized one from the problem (fusion plan: k0 "),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(simulated)"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::exists(out / "best.kf")) << r.out;
}

TEST_F(OptimizeCli, SuiteProblemsWithoutTheirProgramAreSeeded) {
    for (const char* name : {"bias_gelu_mul_f32", "linear_softmax_bf16", "layer_norm_bf16",
                             "col_sum_f32"}) {
        const CliRun r = optimize(copy_spec(name), name);
        expect_seeded_run(r, dir_ / name);
    }
}

TEST_F(OptimizeCli, NewProblemsAreSeeded) {
    struct Case {
        const char* name;
        const char* json;
        const char* plan;  // part of the fusion plan the notice must show
    } cases[] = {
        {"linear_bias_tanh_fp16_odd", kLinearTanhOdd, "k0 gemm {add b, tanh"},
        {"softmax_3000_cols_f32", kSoftmax3000, "k0 rowwise softmax -> Y"},
        {"silu_residual_chain_bf16", kElementwiseChain, "k0 map {"},
    };
    for (const auto& c : cases) {
        const CliRun r = optimize(write_spec(c.name, c.json), c.name);
        expect_seeded_run(r, dir_ / c.name);
        EXPECT_NE(r.out.find(c.plan), std::string::npos) << r.out;
        std::ifstream best(dir_ / c.name / "best.kf");
        std::string text((std::istreambuf_iterator<char>(best)), {});
        EXPECT_NE(text.find(std::string("for \"") + c.name + "\""), std::string::npos) << text;
    }
}

TEST_F(OptimizeCli, AGivenProgramStillWinsAndAMissingOneIsAnError) {
    const std::string spec = copy_spec("softmax_short_rows_f32", true);
    const CliRun r = optimize(spec, "with_kf");
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_EQ(r.out.find("synthesized"), std::string::npos) << r.out;
    const CliRun missing = optimize(spec, "missing", "--program /nonexistent/start.kf");
    EXPECT_EQ(missing.rc, 2) << missing.out;
    EXPECT_NE(missing.out.find("/nonexistent/start.kf"), std::string::npos) << missing.out;
}

TEST_F(OptimizeCli, AProblemTheLanguageCannotExpressIsAUserErrorNamingTheOp) {
    // a square input whose rows and columns share one dim name (a softmax over a middle axis was
    // the example until copy kernels made it expressible, d5b6d5f)
    const std::string spec = write_spec("softmax_square", R"({"name":"softmax_square",
        "dims":{"N":256},"inputs":{"X":{"shape":["N","N"],"dtype":"f32"}},
        "graph":[{"op":"softmax","inputs":["X"],"output":"Y","axis":1}],
        "outputs":["Y"],"precision":{"policy":"fp32_strict"}})");
    const CliRun r = optimize(spec, "mid");
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("none can be synthesized"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("not expressible: softmax"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir_ / "mid" / "best.kf"));
}

TEST_F(OptimizeCli, SuiteSeedsTheProblemsWithoutAProgram) {
    copy_spec("softmax_short_rows_f32", true);
    copy_spec("row_sum_f32");
    write_spec("softmax_3000_cols_f32", kSoftmax3000);
    const CliRun r = run_cli("suite " + (dir_ / "specs").string() + " --device sim --rounds 2 " +
                             "--profile-top 0 --db " + (dir_ / "suite.db").string() + " --out " +
                             (dir_ / "out").string());
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("row_sum_f32: no start program: synthesized"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("softmax_3000_cols_f32: no start program: synthesized"),
              std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("softmax_short_rows_f32: no start program"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("3 problems"), std::string::npos) << r.out;
    for (const char* n : {"softmax_short_rows_f32", "row_sum_f32", "softmax_3000_cols_f32"})
        EXPECT_TRUE(fs::exists(dir_ / "out" / n / "best.kf")) << n << "\n" << r.out;
}

// On the simulated device the best candidates are diagnosed from ptxas + SOL; the diagnosis
// proposer then makes the moves of that diagnosis (their reason names the bottleneck class, e.g.
// "dram_bound: wider vector accesses", which the SOL-only moves never do).
TEST_F(OptimizeCli, SimulatedProfilingFallsBackAndTheDiagnosisProposerReadsIt) {
    const std::string spec = write_spec("softmax_3000_cols_f32", kSoftmax3000);
    const CliRun r = run_cli("optimize " + spec + " --device sim --rounds 3 --profile-top 1 " +
                             "--proposers diagnosis --db " + (dir_ / "p.db").string() +
                             " --out " + (dir_ / "p").string());
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("[ptxas + SOL fallback: simulated device: no profiler"),
              std::string::npos) << r.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("run ([0-9]+) on"))) << r.out;
    auto store = open_store((dir_ / "p.db").string());
    ASSERT_TRUE(store.ok()) << store.error().to_string();
    auto cands = store->list_candidates(std::stoll(m[1]));
    ASSERT_TRUE(cands.ok()) << cands.error().to_string();
    int from_diagnosis = 0;
    for (const auto& c : *cands)
        if (c.proposer == "search:diagnosis" &&
            std::regex_search(c.move, std::regex("\\((dram_bound|spill_bound|launch_tail_bound|"
                                                 "latency_bound_low_occupancy): ")))
            ++from_diagnosis;
    EXPECT_GT(from_diagnosis, 0) << r.out;
}

// A run whose start program fails a gate ends empty and says which gate and why, not only "no
// candidate passed": here the start adds G where the problem multiplies by it (the static gate's
// semantic check refuses it, with the place).
TEST_F(OptimizeCli, AnEmptyRunSaysWhatStoppedTheStartProgram) {
    const std::string spec = copy_spec("bias_gelu_mul_f32");
    std::ofstream(dir_ / "specs" / "wrong.kf")
        << "program bias_gelu_mul_f32 for \"bias_gelu_mul_f32\"\n"
           "kernel k0 = map(X[R,C]) block 896 vec 4 items 4 grid_stride\n"
           "    { add b[C]; gelu erf; add G[R,C]; store Y[R,C] }\n";
    const CliRun r = run_cli("optimize " + spec + " --program " +
                             (dir_ / "specs" / "wrong.kf").string() +
                             " --device sim --rounds 1 --profile-top 0 --db " +
                             (dir_ / "wrong.db").string());
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.out.find("no candidate passed the full tier"), std::string::npos) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("the start program: invalid_program: static: .*adds G")))
        << r.out;
}

// --out after a failing run (issue 31, item 9): a run with no best removes the earlier run's
// best.kf, best.cu and plan.json, so its "best": null stands alone; a symlink planted at an
// output name is replaced, the file it points to untouched; a folder that holds best.kf but no
// evidence.json is not kforge's and is refused, nothing in it removed.
TEST_F(OptimizeCli, AFailingRunLeavesNoEarlierBestInOut) {
    const std::string spec = copy_spec("softmax_short_rows_f32", true);
    const fs::path out = dir_ / "out";
    const CliRun ok = optimize(spec, "out");
    ASSERT_EQ(ok.rc, 0) << ok.out;
    for (const char* f : {"best.kf", "best.cu", "plan.json", "evidence.json"})
        ASSERT_TRUE(fs::exists(out / f)) << f;
    std::ofstream(out / "notes.txt") << "mine";  // not kforge's: kept

    const CliRun failed = run_cli("optimize " + spec + " --device sim --rounds 0 --profile-top 0 "
                                  "--db " + (dir_ / "out.db").string() + " --out " +
                                  out.string());
    EXPECT_EQ(failed.rc, 1) << failed.out;
    EXPECT_NE(failed.out.find("no candidate passed the full tier"), std::string::npos)
        << failed.out;
    for (const char* f : {"best.kf", "best.cu", "plan.json"})
        EXPECT_FALSE(fs::exists(fs::symlink_status(out / f))) << f << " of the earlier run";
    std::ifstream ev(out / "evidence.json");
    std::string evidence((std::istreambuf_iterator<char>(ev)), {});
    EXPECT_NE(evidence.find("\"best\": null"), std::string::npos) << evidence;
    EXPECT_TRUE(fs::exists(out / "notes.txt"));
    for (const auto& e : fs::directory_iterator(out))  // no temporary file left behind
        EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

TEST_F(OptimizeCli, ASymlinkInOutIsReplacedNotWrittenThrough) {
    const std::string spec = copy_spec("softmax_short_rows_f32", true);
    const fs::path out = dir_ / "out", victim = dir_ / "victim.txt";
    fs::create_directories(out);
    std::ofstream(victim) << "untouched";
    std::ofstream(out / "evidence.json") << "{}";  // an earlier kforge output folder
    fs::create_symlink(victim, out / "best.kf");
    fs::create_symlink(victim, out / "plan.json");
    const CliRun r = optimize(spec, "out");
    ASSERT_EQ(r.rc, 0) << r.out;
    std::ifstream in(victim);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(text, "untouched");
    EXPECT_FALSE(fs::is_symlink(out / "best.kf"));
    EXPECT_FALSE(fs::is_symlink(out / "plan.json"));
    EXPECT_TRUE(fs::is_regular_file(out / "best.kf"));
}

TEST_F(OptimizeCli, AFolderThatIsNotKforgesOutputIsRefused) {
    const std::string spec = copy_spec("softmax_short_rows_f32", true);
    const fs::path out = dir_ / "out";
    fs::create_directories(out);
    std::ofstream(out / "best.kf") << "someone else's";
    const CliRun r = optimize(spec, "out");
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("not a kforge output folder"), std::string::npos) << r.out;
    std::ifstream in(out / "best.kf");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(text, "someone else's");
    EXPECT_FALSE(fs::exists(out / "evidence.json"));
}

// --budget-compiles counts compile configurations and the start program is one: 0 (or not a
// number) is a user error naming the flag, and a suite's --allocation takes sol or uniform only.
TEST_F(OptimizeCli, ACompileBudgetBelowOneAndAnUnknownAllocationAreUserErrors) {
    const std::string spec = copy_spec("softmax_short_rows_f32", true);
    const CliRun zero = optimize(spec, "zero", "--budget-compiles 0");
    EXPECT_EQ(zero.rc, 2) << zero.out;
    EXPECT_NE(zero.out.find("--budget-compiles: must be at least 1, not 0"), std::string::npos)
        << zero.out;
    const CliRun alloc = run_cli("suite " + (dir_ / "specs").string() +
                                 " --device sim --rounds 1 --allocation fair --db " +
                                 (dir_ / "alloc.db").string());
    EXPECT_EQ(alloc.rc, 2) << alloc.out;
    EXPECT_NE(alloc.out.find("--allocation"), std::string::npos) << alloc.out;
}

}  // namespace
}  // namespace kforge
