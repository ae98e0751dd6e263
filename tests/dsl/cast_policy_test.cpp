// `cast` under the precision policy (issue 31, item 6): the checker's expressions treat a cast
// as the identity, so it checks the rounding apart. A cast to a dtype below the policy's (f16 or
// bf16 under fp32_strict / tf32, f16 under bf16, bf16 under fp16) is legal right before storing a
// tensor the problem declares in that dtype (an f16 / bf16 output, or an intermediate of the
// problem's graph); a rounded value that is computed on, or stored where the problem has no such
// dtype, and reaches an output is refused at the cast statement.
#include <gtest/gtest.h>

#include "check_test_util.h"

namespace kforge::dsl::testing {
namespace {

// Y = exp(X) + X over f32 tensors, or with `out` the output's dtype.
std::string exp_spec(const std::string& policy, const std::string& out = "f32") {
    return R"({"name": "e", "dims": {"M": 64, "N": 128},
        "inputs": {"X": {"shape": ["M", "N"], "dtype": ")" + out + R"("}},
        "graph": [{"op": "exp", "inputs": ["X"], "output": "E"},
                  {"op": "add", "inputs": ["E", "X"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": ")" + policy + R"("}})";
}

std::string program(const std::string& kernels) { return "program p for \"e\"\n" + kernels; }

// Where `needle` starts on line 2 of a one-kernel program ("t.kf:2:C").
std::string at(const std::string& text, const std::string& needle) {
    const size_t line = text.find('\n') + 1;
    return "t.kf:2:" + std::to_string(text.find(needle) - line + 1);
}

TEST(CastPolicy, AnFp32StrictProgramThatCastsThroughBf16IsRefusedAtTheCast) {
    const std::string p = program(
        "kernel k0 = map(X[M,N]) { let x; exp; cast bf16; cast f32; add x; store Y[M,N] }\n");
    expect_one_error(check_text(exp_spec("fp32_strict"), p), at(p, "cast bf16"),
                     {"cast bf16 rounds the value below precision policy fp32_strict",
                      "reaches the output Y", "keep the value in f32"});
    // tf32 computes intermediates in f32 too; f16 is as narrow.
    const std::string h = program(
        "kernel k0 = map(X[M,N]) { let x; exp; cast f16; add x; cast f32; store Y[M,N] }\n");
    expect_one_error(check_text(exp_spec("tf32"), h), at(h, "cast f16"),
                     {"cast f16 rounds the value below precision policy tf32"});
}

// The rounded value travels through a named value, or an intermediate the problem has no dtype
// for, into the output: the cast is named where it is, also in an earlier kernel.
TEST(CastPolicy, ARoundedValueIsFollowedThroughNamesAndIntermediates) {
    const std::string named = program(
        "kernel k0 = map(X[M,N]) { let x; exp; cast bf16; let e; use x; add e; store Y[M,N] }\n");
    expect_one_error(check_text(exp_spec("fp32_strict"), named), at(named, "cast bf16"),
                     {"reaches the output Y"});
    const std::string through = program(
        "kernel k0 = map(X[M,N]) { exp; cast bf16; store S[M,N] }\n"
        "kernel k1 = map(S[M,N]) { add X[M,N]; store Y[M,N] }\n");
    expect_one_error(check_text(exp_spec("fp32_strict"), through), at(through, "cast bf16"),
                     {"reaches the output Y (stored at 3:"});
}

TEST(CastPolicy, TheFinalRoundingToAnOutputsDtypeIsLegal) {
    CheckResult r = check_text(exp_spec("fp32_strict", "bf16"), program(
        "kernel k0 = map(X[M,N]) { let x; exp; add x; cast bf16; store Y[M,N] }\n"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
    // ... but not a rounding before the last op, nor a reduction of rounded values.
    const std::string early = program(
        "kernel k0 = map(X[M,N]) { let x; exp; cast bf16; add x; cast bf16; store Y[M,N] }\n");
    expect_one_error(check_text(exp_spec("fp32_strict", "bf16"), early), at(early, "cast bf16"),
                     {"reaches the output Y"});
    const std::string sum_spec = R"({"name": "e", "dims": {"M": 64, "N": 128},
        "inputs": {"X": {"shape": ["M", "N"], "dtype": "f32"}},
        "graph": [{"op": "exp", "inputs": ["X"], "output": "E"},
                  {"op": "sum", "inputs": ["E"], "output": "Y", "axis": 1}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";
    const std::string reduced = program(
        "kernel k0 = map(X[M,N]) { exp; cast bf16; store S[M,N] }\n"
        "kernel k1 = rowwise sum(S[M,N]) { store Y[M] }\n");
    expect_one_error(check_text(sum_spec, reduced), at(reduced, "cast bf16"),
                     {"reaches the output Y"});
}

// Under bf16 and fp16 policies intermediates may be of the policy's dtype; the other half
// dtype is below it.
TEST(CastPolicy, IntermediatesOfThePolicysDtypeAreLegal) {
    const std::string bf16 = program(
        "kernel k0 = map(X[M,N]) { exp; cast bf16; store S[M,N] }\n"
        "kernel k1 = map(S[M,N]) { add X[M,N]; cast bf16; store Y[M,N] }\n");
    CheckResult r = check_text(exp_spec("bf16", "bf16"), bf16);
    EXPECT_TRUE(r.ok()) << all_errors(r);
    const std::string f16 = program(
        "kernel k0 = map(X[M,N]) { exp; cast f16; store S[M,N] }\n"
        "kernel k1 = map(S[M,N]) { add X[M,N]; cast bf16; store Y[M,N] }\n");
    expect_one_error(check_text(exp_spec("bf16", "bf16"), f16), at(f16, "cast f16"),
                     {"cast f16 rounds the value below precision policy bf16",
                      "intermediates in bf16 or f32"});
    const std::string fp16 = program(
        "kernel k0 = map(X[M,N]) { exp; cast f16; store S[M,N] }\n"
        "kernel k1 = map(S[M,N]) { add X[M,N]; cast f16; store Y[M,N] }\n");
    r = check_text(exp_spec("fp16", "f16"), fp16);
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

// An intermediate the problem declares bf16 (its op's input is bf16) is stored in its dtype
// even under fp32_strict, as the planner stores a gemm's operand: the problem's own rounding.
// The value decides, not the name: R computes what the problem's H does.
TEST(CastPolicy, AnIntermediateOfTheProblemsDtypeIsLegal) {
    const std::string spec = R"({"name": "e", "dims": {"M": 128, "N": 128, "K": 64},
        "inputs": {"X": {"shape": ["M", "K"], "dtype": "bf16"},
                   "W": {"shape": ["N", "K"], "dtype": "bf16", "param": true}},
        "graph": [{"op": "relu", "inputs": ["X"], "output": "H"},
                  {"op": "linear", "inputs": ["H", "W"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";
    CheckResult r = check_text(spec, program(
        "kernel k0 = map(X[M,K]) { relu; cast bf16; store H[M,K] }\n"
        "kernel k1 = gemm(H[M,K], W[N,K]) { cast bf16; store Y[M,N] }\n"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
    r = check_text(spec, program(
        "kernel k0 = map(X[M,K]) { relu; cast bf16; store R[M,K] }\n"
        "kernel k1 = gemm(R[M,K], W[N,K]) { cast bf16; store Y[M,N] }\n"));
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

}  // namespace
}  // namespace kforge::dsl::testing
