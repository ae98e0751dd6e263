// A failed compile says why in the compiler's own words (compile/failure_message.h), and compile
// times are kept by kernel kind and configuration (compile/compile_history.h).
#include <gtest/gtest.h>

#include <fstream>

#include "compile/compile_history.h"
#include "compile/failure_message.h"
#include "compile_fixture.h"

namespace kforge::compile {
namespace {

TEST(CompileFailureMessage, NvccLogGivesErrorLinesAndMissingHeader) {
    const std::string log =
        "kernels.cu:3:10: fatal error: kernels/rowwise.cuh: No such file or directory\n"
        "    3 | #include \"kernels/rowwise.cuh\"\n"
        "      |          ^~~~~~~~~~~~~~~~~~~~~\n"
        "compilation terminated.\n";
    EXPECT_EQ(missing_include(log), "kernels/rowwise.cuh");
    auto lines = first_error_lines(log);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("fatal error"), std::string::npos);
    CompileResult r;
    r.status = CompileStatus::kCompileFailed;
    r.log = log;
    r.command = "nvcc -cubin -o kernels.cubin kernels.cu";
    const std::string m = failure_message(r);
    EXPECT_EQ(m.rfind("compile_failed: cannot find the header or template kernels/rowwise.cuh", 0),
              0u) << m;
    EXPECT_NE(m.find("command: nvcc -cubin"), std::string::npos) << m;
}

TEST(CompileFailureMessage, NvrtcAndCiccErrors) {
    const std::string log =
        "NVRTC failed, falling back to nvcc:\n"
        "kernels.cu(2): catastrophic error: cannot open source file \"cutlass/gemm.h\"\n"
        "b.cu(1): error: identifier \"undefined_fn\" is undefined\n"
        "b.cu(1): error: identifier \"undefined_fn\" is undefined\n"
        "2 errors detected in the compilation of \"b.cu\".\n";
    EXPECT_EQ(missing_include(log), "cutlass/gemm.h");
    auto lines = first_error_lines(log);
    ASSERT_EQ(lines.size(), 2u);  // duplicates and the summary dropped
    EXPECT_NE(lines[1].find("undefined_fn"), std::string::npos);
    EXPECT_EQ(first_error_lines("", 6).size(), 0u);
    EXPECT_EQ(first_error_lines("just a warning\n", 6).size(), 1u);  // no error line: the first
    CompileResult r;
    r.status = CompileStatus::kAborted;
    EXPECT_EQ(failure_message(r), "aborted: the compiler printed nothing");
    r.status = CompileStatus::kOk;
    EXPECT_EQ(failure_message(r), "");
}

// The real compiler on a source whose template is missing: fails in preprocessing (well under a
// second, no CUTLASS compiled), and the message names the file and the command; a cached failure
// keeps both.
TEST(CompileFailureMessage, RealNvccNamesTheMissingTemplate) {
    auto dir = testing::fresh_dir("failmsg", "nvcc");
    CompileOptions o = testing::options_in(dir / "cache");
    const std::string source =
        "#include \"kernels/no_such_template.cuh\"\n" + std::string(testing::kKernel);
    for (bool cached : {false, true}) {
        auto r = compile_cuda(source, o);
        ASSERT_TRUE(r) << r.error().to_string();
        if (r->status == CompileStatus::kToolchainMissing) GTEST_SKIP() << "no nvcc: " << r->log;
        ASSERT_EQ(r->status, CompileStatus::kCompileFailed) << r->log;
        EXPECT_EQ(r->cache_hit, cached);
        const std::string m = failure_message(*r);
        EXPECT_NE(m.find("kernels/no_such_template.cuh"), std::string::npos) << m;
        EXPECT_NE(m.find("command: "), std::string::npos) << m;
        EXPECT_NE(m.find("nvcc"), std::string::npos) << m;
    }
    std::filesystem::remove_all(dir);
}

TEST(CompileHistory, EstimatesFromSameConfigThenKindThenDefault) {
    auto dir = testing::fresh_dir("history", "est");
    EXPECT_TRUE(load_compile_history(dir.string()).empty());
    auto e0 = estimate_compile_s({}, "gemm_sm90", "128x128x64 cooperative");
    EXPECT_DOUBLE_EQ(e0.seconds, default_compile_s("gemm_sm90"));
    EXPECT_NE(e0.basis.find("default"), std::string::npos);
    ASSERT_TRUE(append_compile_history(dir.string(), {"gemm_sm90", "128x128x64 cooperative", 40}));
    ASSERT_TRUE(append_compile_history(dir.string(), {"gemm_sm90", "128x128x64 cooperative", 44}));
    ASSERT_TRUE(append_compile_history(dir.string(), {"gemm_sm90", "128x256x64 pingpong", 70}));
    ASSERT_TRUE(append_compile_history(dir.string(), {"map", "", 1.5}));
    {  // a damaged line is skipped, not fatal
        std::ofstream out(compile_history_path(dir.string()), std::ios::app);
        out << "{not json\n{\"kind\": 5}\n";
    }
    auto h = load_compile_history(dir.string());
    ASSERT_EQ(h.size(), 4u);
    auto same = estimate_compile_s(h, "gemm_sm90", "128x128x64 cooperative");
    EXPECT_DOUBLE_EQ(same.seconds, 42);
    EXPECT_EQ(same.basis, "2 samples of gemm_sm90 128x128x64 cooperative");
    auto kind = estimate_compile_s(h, "gemm_sm90", "64x64x64 cooperative");
    EXPECT_NEAR(kind.seconds, (40 + 44 + 70) / 3.0, 1e-9);
    EXPECT_DOUBLE_EQ(estimate_compile_s(h, "conv2d", "").seconds, default_compile_s("conv2d"));
    EXPECT_LT(default_compile_s("rowwise"), default_compile_s("gemm_multistage"));
    std::filesystem::remove_all(dir);
}

TEST(CompileHistory, KeepsWhoACompileIsChargedTo) {
    auto dir = testing::fresh_dir("history", "charged");
    CompileTimeSample s{"gemm_sm90", "128x128x64 stream_k", 48};
    s.charged_to = "a1b2c3";
    s.shared_by = 3;
    ASSERT_TRUE(append_compile_history(dir.string(), s));
    ASSERT_TRUE(append_compile_history(dir.string(), {"map", "", 1.5}));
    auto h = load_compile_history(dir.string());
    ASSERT_EQ(h.size(), 2u);
    EXPECT_EQ(h[0].charged_to, "a1b2c3");
    EXPECT_EQ(h[0].shared_by, 3);
    EXPECT_EQ(h[1].charged_to, "");
    EXPECT_EQ(h[1].shared_by, 0);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kforge::compile
