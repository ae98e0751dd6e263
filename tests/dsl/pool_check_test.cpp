// Pool kernels in the kernel language: `pool max|avg|adaptive_avg|adaptive_max(X[N,C,..])`
// parses and prints back, checks against the problem's pool op (the expression proves the op
// word, input and attributes match; the chain runs on the pooled value), and wrong programs get
// clear errors: an unknown op word, a rank the template lacks, a pool the problem does not have,
// a mismatched op word or output, bad knobs.
#include <gtest/gtest.h>

#include <string>

#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "sol/device.h"
#include "tests/dsl/check_test_util.h"

namespace kforge::dsl {
namespace {

const char* kSpec = R"({"name": "p", "dims": {"N": 4, "C": 8, "H": 20, "W": 18},
    "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"}},
    "graph": [{"op": "max_pool", "inputs": ["x"], "output": "h", "kernel_size": 3, "stride": 2,
               "padding": 1, "ceil_mode": true},
              {"op": "relu", "inputs": ["h"], "output": "y"},
              {"op": "avg_pool", "inputs": ["x"], "output": "a", "kernel_size": 2}],
    "outputs": ["y", "a"], "precision": {"policy": "fp32_strict"}})";

const char* kGood = R"(program p for "p"
kernel k0 = pool max(x[N,C,H,W]) threads 128 items 2
    { relu; store y[N,C,Ho,Wo] }
kernel k1 = pool avg(x[N,C,H,W])
    { store a[N,C,Ho2,Wo2] }
)";

CheckResult check_text(const std::string& text) { return testing::check_text(kSpec, text); }

void expect_check_error(const std::string& text, const std::string& fragment) {
    SCOPED_TRACE(text);
    testing::expect_error_containing(check_text(text), fragment);
}

void expect_parse_error(const std::string& text, const std::string& fragment) {
    auto prog = parse_program(text, "p.kf");
    ASSERT_FALSE(prog.ok()) << "parsed:\n" << text;
    EXPECT_NE(prog.error().to_string().find(fragment), std::string::npos)
        << prog.error().to_string();
}

TEST(PoolCheck, ParsesPrintsAndChecks) {
    auto prog = parse_program(kGood, "p.kf");
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 2u);
    EXPECT_EQ(prog->kernels[0].kind, KernelKind::kPool);
    EXPECT_EQ(prog->kernels[0].pool_op, OpKind::kMaxPool);
    EXPECT_EQ(prog->kernels[0].pool.threads, 128);
    EXPECT_EQ(prog->kernels[0].pool.items, 2);
    EXPECT_EQ(prog->kernels[1].pool_op, OpKind::kAvgPool);
    const std::string text = print_canonical(*prog);
    EXPECT_NE(text.find("kernel k0 = pool max(x[N,C,H,W]) threads 128 items 2"), std::string::npos)
        << text;
    auto again = parse_program(text, "again.kf");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(strip_locations(*again), strip_locations(*prog));
    CheckResult r = check_text(kGood);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.errors.front().to_string());
}

TEST(PoolCheck, ParseErrors) {
    expect_parse_error(R"(program p for "p"
kernel k0 = pool mean(x[N,C,H,W]) { store y[N,C,Ho,Wo] })",
                       "a pool op (max, avg, adaptive_avg, adaptive_max)");
    expect_parse_error(R"(program p for "p"
kernel k0 = pool max(x[N,C]) { store y[N,C] })",
                       "pool takes X[N,C,L], X[N,C,H,W] or X[N,C,D,H,W]");
    expect_parse_error(R"(program p for "p"
kernel k0 = pool max(x[N,C,H,W]) items 3 { store y[N,C,Ho,Wo] })",
                       "items");
    expect_parse_error(R"(program p for "p"
kernel k0 = pool max(x[N,C,H,W]) split 4 { store y[N,C,Ho,Wo] })",
                       "threads");
    // a thread's tile (rows, vec) and windows split over lanes exclude each other
    expect_parse_error(R"(program p for "p"
kernel k0 = pool max(x[N,C,H,W]) lanes 8 vec 4 { store y[N,C,Ho,Wo] })",
                       "vec applies to lanes 1");
    expect_parse_error(R"(program p for "p"
kernel k0 = pool adaptive_avg(x[N,C,H,W]) rows 2 { store y[N,C,Ho,Wo] })",
                       "rows applies to max and avg pools");
}

TEST(PoolCheck, WrongProgramsAreRefused) {
    // the op word must be the problem op's: an avg pool where the problem has max
    expect_check_error(R"(program p for "p"
kernel k0 = pool avg(x[N,C,H,W]) { relu; store y[N,C,Ho,Wo] }
kernel k1 = pool avg(x[N,C,H,W]) { store a[N,C,Ho2,Wo2] }
)", "y");
    // a pool the problem does not have
    expect_check_error(R"(program p for "p"
kernel k0 = pool adaptive_max(x[N,C,H,W]) { relu; store y[N,C,Ho,Wo] }
kernel k1 = pool avg(x[N,C,H,W]) { store a[N,C,Ho2,Wo2] }
)", "no adaptive_max_pool op of the problem reads x");
    // the relu left out: the program computes another value
    expect_check_error(R"(program p for "p"
kernel k0 = pool max(x[N,C,H,W]) { store y[N,C,Ho,Wo] }
kernel k1 = pool avg(x[N,C,H,W]) { store a[N,C,Ho2,Wo2] }
)", "relu");
}

}  // namespace
}  // namespace kforge::dsl
