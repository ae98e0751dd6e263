// One test per class of parse error: where (file:line:col), message, and the caret line.
#include <gtest/gtest.h>

#include "dsl/parser.h"

namespace kforge::dsl {
namespace {

struct Failure {
    std::string where, message, source_line, caret_line;
};

Failure parse_fail(std::string_view text) {
    auto p = parse_program(text, "t.kf");
    EXPECT_FALSE(p.ok()) << "expected a parse error";
    if (p.ok()) return {};
    const Error& e = p.error();
    size_t nl = e.detail.find('\n');
    EXPECT_NE(nl, std::string::npos) << "detail needs a source line and a caret line";
    return {e.where, e.message, e.detail.substr(0, nl), e.detail.substr(nl + 1)};
}

constexpr std::string_view kHead = "program p for \"x\"\n";

std::string gemm(std::string_view knobs, std::string_view chain = "store Y[M,N]") {
    return std::string(kHead) + "kernel k = gemm(X[M,K], W[N,K]) " + std::string(knobs) + " { " +
           std::string(chain) + " }";
}

TEST(ParseError, UnknownKnobSuggestsClosest) {
    Failure f = parse_fail(gemm("tile 128x128x64\n    tyle 64x64x64"));
    EXPECT_EQ(f.where, "t.kf:3:5");
    EXPECT_EQ(f.message, "expected a knob (tile, cluster, stages, ...) or '{', got 'tyle'; "
                         "did you mean 'tile'?");
    EXPECT_EQ(f.source_line, "        tyle 64x64x64 { store Y[M,N] }");
    EXPECT_EQ(f.caret_line, "        ^^^^");
}

TEST(ParseError, KnobValueNotInSet) {
    Failure f = parse_fail(gemm("swizzle 3"));
    EXPECT_EQ(f.where, "t.kf:2:41");
    EXPECT_EQ(f.message, "swizzle 3: expected one of 1, 2, 4, 8");
    EXPECT_EQ(f.caret_line, std::string(4 + 40, ' ') + "^");
}

TEST(ParseError, TileComponentOutOfRange) {
    Failure f = parse_fail(gemm("tile 128x250x64"));
    EXPECT_EQ(f.where, "t.kf:2:42");  // at the N component
    EXPECT_EQ(f.message, "tile 128x250x64: N expected 16..256, a multiple of 16");
    EXPECT_EQ(f.caret_line, std::string(4 + 41, ' ') + "^^^");
}

TEST(ParseError, KnobValueRangeAndStep) {
    EXPECT_EQ(parse_fail(gemm("splitk 17")).message, "splitk 17: expected 1..16");
    auto f = parse_fail(std::string(kHead) + "kernel k = map(X[R]) block 100 { store Y[R] }");
    EXPECT_EQ(f.message, "block 100: expected 32..1024, a multiple of 32");
    EXPECT_EQ(parse_fail(gemm("stages 9")).message, "stages 9: expected 2..8");
}

TEST(ParseError, KnobValueWrongShape) {
    Failure f = parse_fail(gemm("tile 128x128"));
    EXPECT_EQ(f.where, "t.kf:2:46");
    EXPECT_EQ(f.message, "tile: expected MxNxK (e.g. 128x128x64), got '{'");
    EXPECT_EQ(parse_fail(gemm("cluster 2x1x1")).message,
              "cluster: expected MxN (e.g. 1x1), got 'x'");
    EXPECT_EQ(parse_fail(gemm("stages many")).message,
              "expected stages: 'auto' or 2..8, got 'many'");
}

TEST(ParseError, KnobWordSuggestsClosest) {
    Failure f = parse_fail(gemm("schedule coperative"));
    EXPECT_EQ(f.where, "t.kf:2:42");
    EXPECT_EQ(f.message, "schedule coperative: expected one of tma_ws, cooperative, pingpong, "
                         "stream_k, multistage; did you mean 'cooperative'?");
}

TEST(ParseError, DuplicateKnob) {
    Failure f = parse_fail(gemm("swizzle 2 tile 64x64x64 swizzle 2"));
    EXPECT_EQ(f.where, "t.kf:2:57");
    EXPECT_EQ(f.message, "duplicate knob 'swizzle' (first written at 2:33)");
    EXPECT_EQ(f.caret_line, std::string(4 + 56, ' ') + "^^^^^^^");
}

TEST(ParseError, KnobOfAnotherKernelKind) {
    Failure f = parse_fail(gemm("threads 256"));
    EXPECT_EQ(f.message, "expected a knob (tile, cluster, stages, ...) or '{', got 'threads'");
    f = parse_fail(std::string(kHead) + "kernel k = rowwise softmax(X[M,N]) eps 1e-5 { store Y[M,N] }");
    EXPECT_EQ(f.message, "eps applies to layer_norm, rms_norm, group_norm, l1_normalize, l2_normalize only");
    EXPECT_EQ(f.where, "t.kf:2:36");
}

TEST(ParseError, IntegerOverflow) {
    Failure f = parse_fail(gemm("splitk 99999999999999999999999"));
    EXPECT_EQ(f.message, "integer '99999999999999999999999' is out of range");
    EXPECT_EQ(f.where, "t.kf:2:40");
    f = parse_fail(gemm("splitk 4294967297"));  // fits int64, would wrap an int
    EXPECT_EQ(f.message, "splitk 4294967297: expected 1..16");
    EXPECT_EQ(parse_fail(gemm("", "mul 1e999; store Y[M,N]")).message, "number '1e999' is out of range");
}

TEST(ParseError, UnknownChainStatement) {
    Failure f = parse_fail(gemm("", "add b[N]; rleu; store Y[M,N]"));
    EXPECT_EQ(f.where, "t.kf:2:46");
    EXPECT_EQ(f.message, "expected a chain statement (add, relu, cast, store, ...), got 'rleu'; "
                         "did you mean 'relu'?");
    EXPECT_EQ(f.caret_line, std::string(4 + 45, ' ') + "^^^^");
}

TEST(ParseError, ChainStatementArguments) {
    EXPECT_EQ(parse_fail(gemm("", "clamp 1; store Y[M,N]")).message,
              "expected clamp: two numbers (lo hi), got ';'");
    EXPECT_EQ(parse_fail(gemm("", "cast bf61; store Y[M,N]")).message,
              "expected cast: f32, f16 or bf16, got 'bf61'; did you mean 'bf16'?");
    EXPECT_EQ(parse_fail(gemm("", "gelu tahn; store Y[M,N]")).message,
              "expected gelu: erf or tanh, got 'tahn'; did you mean 'tanh'?");
    EXPECT_EQ(parse_fail(gemm("", "softplus 1; store Y[M,N]")).message,
              "expected softplus: beta and threshold, or neither (defaults 1 20), got ';'");
    EXPECT_EQ(parse_fail(gemm("", "reduce sum N -> S[M]")).message,
              "expected reduce: 'over' and a dim (reduce sum over N -> S[M]), got 'N'");
    EXPECT_EQ(parse_fail(gemm("", "add ; store Y[M,N]")).message,
              "expected add: a tensor (e.g. b[N]), a number or a named value, got ';'");
}

TEST(ParseError, MissingSeparatorOrBrace) {
    Failure f = parse_fail(gemm("", "relu store Y[M,N]"));
    EXPECT_EQ(f.message, "expected ';' or '}' after the statement, got 'store'");
    EXPECT_EQ(f.where, "t.kf:2:41");
    f = parse_fail(std::string(kHead) + "kernel k = map(X[R]) { store Y[R]");
    EXPECT_EQ(f.message, "expected ';' or '}' after the statement, got end of input");
    EXPECT_EQ(f.where, "t.kf:2:34");
    EXPECT_EQ(parse_fail(gemm("", "")).message,
              "expected a chain statement (add, relu, cast, store, ...), got '}'");
}

TEST(ParseError, TensorSyntax) {
    Failure f = parse_fail(std::string(kHead) + "kernel k = map(X) { store Y[R] }");
    EXPECT_EQ(f.message, "expected '[' after tensor name 'X' (a tensor is written with its dims: "
                         "X[M,K], or X[] for a scalar), got ')'");
    EXPECT_EQ(f.where, "t.kf:2:17");
    EXPECT_EQ(parse_fail(std::string(kHead) + "kernel k = map(X[R C]) { store Y[R] }").message,
              "expected ',' or ']' in the dims of tensor 'X', got 'C'");
    EXPECT_EQ(parse_fail(std::string(kHead) + "kernel k = map(X[R,-1]) { store Y[R] }").message,
              "expected an unsigned integer, got '-1'");
}

TEST(ParseError, HeadArity) {
    EXPECT_EQ(parse_fail(std::string(kHead) + "kernel k = gemm(X[M,K]) { store Y[M] }").message,
              "expected ',' and the B operand: gemm takes 2 tensors (A, B), got ')'");
    EXPECT_EQ(parse_fail(std::string(kHead) + "kernel k = gemm(A[M,K], B[N,K], C[M]) { store Y[M] }")
                  .message,
              "expected ')': gemm takes 2 tensors, got ','");
    EXPECT_EQ(parse_fail(std::string(kHead) + "kernel k = rowwise softmax(X[M,N], w[N]) { store Y[M] }")
                  .message,
              "expected ')': rowwise takes 1 tensor, got ','");
}

TEST(ParseError, UnknownKernelKindAndRowOp) {
    Failure f = parse_fail(std::string(kHead) + "kernel k = gem(X[M,K], W[N,K]) { store Y[M,N] }");
    EXPECT_EQ(f.message, "expected a kernel kind (gemm, rowwise, map, conv2d, pool, attention, copy, rnn), got 'gem'; did you mean 'gemm'?");
    EXPECT_EQ(f.where, "t.kf:2:12");
    f = parse_fail(std::string(kHead) + "kernel k = rowwise sofmax(X[M,N]) { store Y[M,N] }");
    EXPECT_EQ(f.message.substr(0, 14), "expected a row");
    EXPECT_NE(f.message.find("got 'sofmax'; did you mean 'softmax'?"), std::string::npos);
}

TEST(ParseError, ProgramHeader) {
    EXPECT_EQ(parse_fail("progam p for \"x\"").message,
              "expected 'program' at the start of the program, got 'progam'");
    Failure f = parse_fail("program p for x");
    EXPECT_EQ(f.message, "expected the problem name as a string (\"...\") after 'for', got 'x'");
    EXPECT_EQ(f.where, "t.kf:1:15");
    EXPECT_EQ(parse_fail("program p for \"x\"").message, "expected 'kernel', got end of input");
    EXPECT_EQ(parse_fail("").where, "t.kf:1:1");
}

TEST(ParseError, TrailingInputAndDuplicateKernel) {
    EXPECT_EQ(parse_fail(gemm("") + "\nkernal k2").message,
              "expected 'kernel' or end of input, got 'kernal'; did you mean 'kernel'?");
    Failure f = parse_fail(gemm("") + "\nkernel k = map(X[R]) { store Z[R] }");
    EXPECT_EQ(f.message, "kernel 'k' is already defined at 2:1");
    EXPECT_EQ(f.where, "t.kf:3:8");
}

TEST(ParseError, LexicalErrors) {
    Failure f = parse_fail("program p for \"unterminated\nkernel");
    EXPECT_EQ(f.message, "unterminated string (it ends at the line end)");
    EXPECT_EQ(f.where, "t.kf:1:15");
    EXPECT_EQ(parse_fail("program p for \"x\" @").message, "unexpected character '@'");
    f = parse_fail(std::string("program p\xc3\xa9 for"));
    EXPECT_EQ(f.message, "unexpected byte 0xc3 (non-ASCII; only comments may hold it)");
    EXPECT_EQ(f.where, "t.kf:1:10");
    EXPECT_EQ(f.source_line, "    program p?? for");
    f = parse_fail(std::string("program\0p", 9));
    EXPECT_EQ(f.message, "unexpected byte 0x00 (a control character)");
    EXPECT_EQ(parse_fail(gemm("tile 128x128x64abc")).message,
              "malformed number '64abc': expected a space or punctuation after the number");
    EXPECT_EQ(parse_fail(gemm("", "mul 1.; store Y[M,N]")).message,
              "malformed number '1.': expected a digit after '.'");
    EXPECT_EQ(parse_fail(gemm("", "mul 1e; store Y[M,N]")).message,
              "malformed number '1e': expected a digit in the exponent");
}

TEST(ParseError, CaretKeepsTabs) {
    Failure f = parse_fail(std::string(kHead) + "kernel k = map(X[R])\n\tblok 256 { store Y[R] }");
    EXPECT_EQ(f.where, "t.kf:3:2");
    EXPECT_EQ(f.caret_line, "    \t^^^^");
    EXPECT_NE(f.message.find("did you mean 'block'?"), std::string::npos);
}

TEST(ParseError, HugeInputsGiveShortMessagesQuickly) {
    std::string long_name(1 << 20, 'a');
    Failure f = parse_fail(std::string(kHead) + "kernel k = map(X[R]) " + long_name + " { store Y[R] }");
    EXPECT_EQ(f.message, "expected a knob (block, vec, items, ...) or '{', got '" +
                             std::string(40, 'a') + "...'");
    EXPECT_LT(f.source_line.size(), 200u);
    f = parse_fail(std::string(kHead) + "kernel k = map(X[R]) " + std::string(5000, ' ') + "@");
    EXPECT_EQ(f.where, "t.kf:2:5022");
    EXPECT_LT(f.source_line.size(), 200u);
    EXPECT_EQ(f.caret_line.find('^'), f.source_line.find('@'));
    // many statements and brackets: bounded, iterative
    std::string many = std::string(kHead) + "kernel k = map(X[R]) {";
    for (int i = 0; i < 300; ++i) many += " relu;";
    EXPECT_EQ(parse_fail(many + " store Y[R] }").message, "more than 256 chain statements");
    EXPECT_EQ(parse_fail(std::string(kHead) + "kernel k = map(X" + std::string(100000, '[')).message,
              "expected a dim (a name such as M, or an integer) in tensor 'X', got '['");
    EXPECT_EQ(parse_fail(std::string(kHead) + "kernel k = map(X[A,B,C,D,E,F,G,H,I]) { store Y[R] }")
                  .message,
              "tensor 'X' has more than 8 dims");
}

}  // namespace
}  // namespace kforge::dsl
