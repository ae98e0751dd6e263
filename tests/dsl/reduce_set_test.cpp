// Reductions over a set of dims, `rowwise mean(X[N,C,H,W]) over N,H,W`: parse/print round trip,
// the checker's proof that one kernel computes a problem's chain of single-dim reductions
// (BatchNorm's batch statistics as KernelBench files import them) and the user errors.
#include <gtest/gtest.h>

#include "check_test_util.h"
#include "dsl/printer.h"

namespace kforge::dsl::testing {
namespace {

// The mean and the biased variance over N, H, W, each three keepdim means.
constexpr const char* kBnStats = R"({"name": "bn_stats", "dims": {"N": 8, "C": 64, "H": 28, "W": 28},
    "inputs": {"X": {"shape": ["N", "C", "H", "W"], "dtype": "f32"}},
    "graph": [{"op": "mean", "inputs": ["X"], "axis": 3, "keepdim": true, "output": "m3"},
              {"op": "mean", "inputs": ["m3"], "axis": 2, "keepdim": true, "output": "m2"},
              {"op": "mean", "inputs": ["m2"], "axis": 0, "keepdim": true, "output": "M"},
              {"op": "sub", "inputs": ["X", "M"], "output": "D"},
              {"op": "square", "inputs": ["D"], "output": "S"},
              {"op": "mean", "inputs": ["S"], "axis": 3, "keepdim": true, "output": "v3"},
              {"op": "mean", "inputs": ["v3"], "axis": 2, "keepdim": true, "output": "v2"},
              {"op": "mean", "inputs": ["v2"], "axis": 0, "keepdim": true, "output": "V"}],
    "outputs": ["M", "V"], "precision": {"policy": "fp32_strict"}})";

TEST(ReduceSet, ParsesAndPrintsBack) {
    auto p = parse_program(R"(program p for "bn_stats"
kernel k0 = rowwise mean(X[N,C,H,W]) over N,H,W threads 256 vec 4 { store M[1,C,1,1] })", "t.kf");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    EXPECT_EQ(p->kernels[0].over, "N,H,W");
    EXPECT_EQ(over_dims(p->kernels[0]), (std::vector<std::string>{"N", "H", "W"}));
    EXPECT_TRUE(over_is_set(p->kernels[0]));
    const std::string text = print_canonical(*p);
    EXPECT_NE(text.find("over N,H,W"), std::string::npos) << text;
    auto again = parse_program(text, "t.kf");
    ASSERT_TRUE(again.ok()) << again.error().to_string();
    EXPECT_EQ(strip_locations(*again), strip_locations(*p));
    // a trailing comma is a parse error naming what it expected
    auto bad = parse_program(R"(program p for "bn_stats"
kernel k0 = rowwise mean(X[N,C,H,W]) over N,H, { store M[1,C,1,1] })", "t.kf");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("after ','"), std::string::npos) << bad.error().to_string();
}

TEST(ReduceSet, OneKernelPerStatisticChecks) {
    auto r = check_text(kBnStats, R"(program p for "bn_stats"
kernel k0 = rowwise mean(X[N,C,H,W]) over N,H,W { store M[1,C,1,1] }
kernel k1 = rowwise mean(X[N,C,H,W]) pre { sub M[1,C,1,1]; square } over N,H,W { store V[1,C,1,1] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    // the order the set is written in does not matter
    r = check_text(kBnStats, R"(program p for "bn_stats"
kernel k0 = rowwise mean(X[N,C,H,W]) over W,N,H { store M[1,C,1,1] }
kernel k1 = rowwise mean(X[N,C,H,W]) pre { sub M[1,C,1,1]; square } over H,W,N { store V[1,C,1,1] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    // the chain of single-dim kernels it replaces checks as before
    r = check_text(kBnStats, R"(program p for "bn_stats"
kernel k0 = rowwise mean(X[N,C,H,W]) { store m3[N,C,H,1] }
kernel k1 = rowwise mean(m3[N,C,H,1]) over H { store m2[N,C,1,1] }
kernel k2 = rowwise mean(m2[N,C,1,1]) over N { store M[1,C,1,1] }
kernel k3 = rowwise mean(X[N,C,H,W]) pre { sub M[1,C,1,1]; square } { store v3[N,C,H,1] }
kernel k4 = rowwise mean(v3[N,C,H,1]) over H { store v2[N,C,1,1] }
kernel k5 = rowwise mean(v2[N,C,1,1]) over N { store V[1,C,1,1] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
}

TEST(ReduceSet, AWrongSetOrKindIsCaught) {
    // over H,W only: a per-image mean, not the problem's
    auto r = check_text(kBnStats, R"(program p for "bn_stats"
kernel k0 = rowwise mean(X[N,C,H,W]) over H,W { store M[N,C,1,1] }
kernel k1 = rowwise mean(X[N,C,H,W]) pre { sub M[1,C,1,1]; square } over N,H,W { store V[1,C,1,1] })");
    EXPECT_FALSE(r.errors.empty());
    // a sum is not a mean
    r = check_text(kBnStats, R"(program p for "bn_stats"
kernel k0 = rowwise sum(X[N,C,H,W]) over N,H,W { store M[1,C,1,1] }
kernel k1 = rowwise mean(X[N,C,H,W]) pre { sub M[1,C,1,1]; square } over N,H,W { store V[1,C,1,1] })");
    ASSERT_FALSE(r.errors.empty());
    EXPECT_NE(all_errors(r).find("M is not what the problem computes"), std::string::npos)
        << all_errors(r);
}

TEST(ReduceSet, UserErrors) {
    auto r = check_text(kBnStats, R"(program p for "bn_stats"
kernel k0 = rowwise mean(X[N,C,H,W]) over N,Q { store M[1,C,1,1] })");
    ASSERT_FALSE(r.errors.empty());
    EXPECT_NE(all_errors(r).find("over N,Q: each dim of the set must be a dim of X[N,C,H,W], "
                                 "named once"),
              std::string::npos)
        << all_errors(r);
    r = check_text(kBnStats, R"(program p for "bn_stats"
kernel k0 = rowwise mean(X[N,C,H,W]) over N,N { store M[1,C,1,1] })");
    EXPECT_NE(all_errors(r).find("named once"), std::string::npos) << all_errors(r);
    r = check_text(kBnStats, R"(program p for "bn_stats"
kernel k0 = rowwise softmax(X[N,C,H,W]) over N,H,W { store M[1,C,1,1] })");
    EXPECT_NE(all_errors(r).find("a set of dims is reduced by sum, mean, max and min only, not "
                                 "softmax"),
              std::string::npos)
        << all_errors(r);
}

}  // namespace
}  // namespace kforge::dsl::testing
