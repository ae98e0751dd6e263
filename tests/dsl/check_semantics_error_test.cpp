// Programs that do not compute their problem are rejected with the op and both locations.
#include "check_test_util.h"

namespace kforge::dsl::testing {
namespace {

constexpr const char* kHead = "program p for \"linear_bias_relu_bf16\"\n";

TEST(CheckSemanticsError, MissingOp) {
    auto r = check_suite("linear_bias_relu_bf16", std::string(kHead) +
        "kernel k0 = gemm(X[M,K], W[N,K]) { add b[N]; cast bf16; store Y[M,N] }\n");
    expect_one_error(r, "t.kf:2:63", {"the problem applies relu to H at graph[1]", "skips it"});
}

TEST(CheckSemanticsError, ChangedOp) {
    auto r = check_suite("linear_bias_gelu_tanh_bf16", R"(program p for "linear_bias_gelu_tanh_bf16"
kernel k0 = gemm(X[M,K], W[N,K])
    { add b[N]; relu; cast bf16; store Y[M,N] })");
    expect_one_error(r, "t.kf:3:40", {"the problem applies gelu (tanh) to H at graph[1]",
                                      "the program's chain for Y has relu at 3:17"});
}

TEST(CheckSemanticsError, WrongActivationVariant) {
    auto r = check_suite("linear_bias_gelu_tanh_bf16", R"(program p for "linear_bias_gelu_tanh_bf16"
kernel k0 = gemm(X[M,K], W[N,K])
    { add b[N]; gelu erf; cast bf16; store Y[M,N] })");
    expect_one_error(r, "t.kf:3:44", {"gelu (tanh)", "has gelu (erf) at 3:17"});
}

TEST(CheckSemanticsError, WrongBias) {
    auto r = check_text(R"({"name": "lin2", "dims": {"M": 256, "N": 128, "K": 64},
        "inputs": {"X": {"shape": ["M", "K"], "dtype": "f32"},
                   "W": {"shape": ["N", "K"], "dtype": "f32", "param": true},
                   "b": {"shape": ["N"], "dtype": "f32", "param": true},
                   "c": {"shape": ["N"], "dtype": "f32", "param": true}},
        "graph": [{"op": "linear", "inputs": ["X", "W", "b"], "output": "H"},
                  {"op": "mul", "inputs": ["H", "c"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "tf32"}})",
                        R"(program p for "lin2"
kernel k0 = gemm(X[M,K], W[N,K]) tile 128x128x32 math tf32 { add c[N]; mul c[N]; store Y[M,N] })");
    expect_one_error(r, "t.kf:2:88", {"the problem's linear at graph[0] adds b",
                                      "the program's chain for Y adds c at 2:66"});
}

TEST(CheckSemanticsError, MissingBias) {
    auto r = check_suite("linear_bias_relu_bf16", std::string(kHead) +
        "kernel k0 = gemm(X[M,K], W[N,K]) { relu; cast bf16; store Y[M,N] }\n");
    expect_one_error(r, "t.kf:2:59", {"the problem adds b at graph[0] (linear)", "does not"});
}

TEST(CheckSemanticsError, WrongOutputDtype) {
    auto r = check_suite("linear_bias_relu_bf16", std::string(kHead) +
        "kernel k0 = gemm(X[M,K], W[N,K]) { add b[N]; relu; store Y[M,N] }\n");
    expect_one_error(r, "t.kf:2:58", {"writes f32 but the problem's output Y is bf16",
                                      "add `cast bf16`"});
}

TEST(CheckSemanticsError, UnstoredOutput) {
    auto r = check_suite("linear_bias_relu_bf16", std::string(kHead) +
        "kernel k0 = gemm(X[M,K], W[N,K]) { add b[N]; relu; cast bf16; store Z[M,N] }\n");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].where, "t.kf:1:1");
    EXPECT_NE(r.errors[0].message.find("output Y (relu at graph[1]) is never stored; add `store "
                                       "Y[M,N]`"), std::string::npos) << all_errors(r);
    ASSERT_EQ(r.warnings.size(), 1u);  // Z: stored, never read
}

TEST(CheckSemanticsError, ReadBeforeStore) {
    auto r = check_suite("linear_logsumexp_bf16", R"(program p for "linear_logsumexp_bf16"
kernel k1 = rowwise logsumexp(T[M,N]) { cast bf16; store Y[M] }
kernel k0 = gemm(X[M,K], W[N,K]) { add b[N]; store T[M,N] })");
    ASSERT_GE(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].where, "t.kf:2:31");
    EXPECT_NE(r.errors[0].message.find("T is read by kernel k1 before it is stored: kernel k0 "
                                       "stores it at 3:52"), std::string::npos) << all_errors(r);
}

TEST(CheckSemanticsError, UnknownTensor) {
    auto r = check_suite("linear_bias_relu_bf16", std::string(kHead) +
        "kernel k0 = gemm(X[M,K], Wt[N,K]) { add b[N]; relu; cast bf16; store Y[M,N] }\n");
    expect_one_error(r, "t.kf:2:26", {"unknown tensor Wt", "(X, W, b)"});
}

TEST(CheckSemanticsError, WrongDims) {
    auto r = check_suite("linear_bias_relu_bf16", std::string(kHead) +
        "kernel k0 = gemm(X[M,K], W[K,N]) { add b[N]; relu; cast bf16; store Y[M,N] }\n");
    expect_one_error(r, "t.kf:2:26", {"W is [N,K] in the problem; the program writes W[K,N]"});
}

TEST(CheckSemanticsError, UnknownDim) {
    auto r = check_suite("linear_bias_relu_bf16", std::string(kHead) +
        "kernel k0 = gemm(X[M,K], W[N,K]) { add b[Q]; relu; cast bf16; store Y[M,N] }\n");
    expect_one_error(r, "t.kf:2:40", {"unknown dim Q", "the problem's dims are K, M, N"});
}

TEST(CheckSemanticsError, WrongRowwiseAxis) {
    auto r = check_suite("softmax_short_rows_f32", R"(program p for "softmax_short_rows_f32"
kernel k0 = rowwise softmax(X[R,C]) over R vec 1 passes 2 { store Y[R,C] })");
    expect_one_error(r, "t.kf:2:67", {"softmax over C to X at graph[0]",
                                      "has softmax over R at 2:1"});
}

TEST(CheckSemanticsError, OutputStoredTwice) {
    auto r = check_suite("bias_gelu_mul_f32", R"(program p for "bias_gelu_mul_f32"
kernel k0 = map(X[R,C]) { add b[C]; gelu erf; mul G[R,C]; store Y[R,C]; store Y[R,C] })");
    expect_one_error(r, "t.kf:2:79", {"Y is stored twice (first at 2:65)", "exactly once"});
}

}  // namespace
}  // namespace kforge::dsl::testing
