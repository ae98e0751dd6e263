// Named values in chains (`let t`, `use t`, binary statements reading `t`, `rsub`/`rdiv`):
// parse/print round trip, the checker's proof that the chain computes the problem's DAG, and
// the user errors for names used before binding, bound twice or clashing with tensors.
#include <gtest/gtest.h>

#include "check_test_util.h"
#include "dsl/printer.h"
#include "dsl/reference_card.h"

namespace kforge::dsl::testing {
namespace {

// y = x * 0.5 + x with x = X W^T + b (KernelBench level 2: x.clone(); x * s; x + original).
constexpr const char* kSelfResidual = R"({"name": "self_residual", "dims": {"M": 256, "N": 128, "K": 64},
    "inputs": {"X": {"shape": ["M", "K"], "dtype": "bf16"},
               "W": {"shape": ["N", "K"], "dtype": "bf16", "param": true},
               "b": {"shape": ["N"], "dtype": "bf16", "param": true}},
    "graph": [{"op": "linear", "inputs": ["X", "W", "b"], "output": "H"},
              {"op": "scale", "inputs": ["H"], "output": "S", "value": 0.5},
              {"op": "add", "inputs": ["S", "H"], "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "bf16"}})";

// softsign: y = x / (1 + |x|).
constexpr const char* kSoftsign = R"({"name": "softsign", "dims": {"R": 64, "C": 128},
    "inputs": {"X": {"shape": ["R", "C"], "dtype": "f32"}},
    "graph": [{"op": "abs", "inputs": ["X"], "output": "A"},
              {"op": "add_scalar", "inputs": ["A"], "output": "D", "value": 1.0},
              {"op": "div", "inputs": ["X", "D"], "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";

// elu as the importer writes it: relu(x) + min(0, alpha * (exp(x) - 1)).
constexpr const char* kElu = R"({"name": "elu", "dims": {"R": 64, "C": 128},
    "inputs": {"X": {"shape": ["R", "C"], "dtype": "f32"}},
    "graph": [{"op": "relu", "inputs": ["X"], "output": "P"},
              {"op": "exp", "inputs": ["X"], "output": "E"},
              {"op": "add_scalar", "inputs": ["E"], "output": "E1", "value": -1.0},
              {"op": "scale", "inputs": ["E1"], "output": "E2", "value": 1.5},
              {"op": "min_scalar", "inputs": ["E2"], "output": "Q", "value": 0.0},
              {"op": "add", "inputs": ["P", "Q"], "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";

Program parse_ok(std::string_view text) {
    auto p = parse_program(text, "t.kf");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Program{};
}

TEST(LetValue, ParsesNamesAndPrintsThemBack) {
    Program p = parse_ok(R"(program p for "softsign"
kernel k0 = map(X[R,C]) { let x; abs; add 1; rdiv x; let d; use x; rsub 2.5; mul d; sub x;
    div x; rsub X[R,C]; rdiv 3; store Y[R,C] })");
    ASSERT_EQ(p.kernels.size(), 1u);
    const auto& c = p.kernels[0].chain;
    ASSERT_EQ(c.size(), 13u);
    EXPECT_EQ(c[0].kind, ChainOpKind::kLet);
    EXPECT_EQ(c[0].name, "x");
    EXPECT_EQ(c[0].name_loc, (SourceLoc{2, 31}));
    EXPECT_EQ(c[3].kind, ChainOpKind::kRdiv);
    EXPECT_EQ(c[3].name, "x");
    EXPECT_FALSE(c[3].tensor.has_value());
    EXPECT_EQ(c[5].kind, ChainOpKind::kUse);
    EXPECT_EQ(c[6].kind, ChainOpKind::kRsub);
    EXPECT_EQ(c[6].numbers, std::vector<double>{2.5});
    EXPECT_TRUE(c[6].name.empty());
    EXPECT_EQ(c[10].kind, ChainOpKind::kRsub);
    ASSERT_TRUE(c[10].tensor.has_value());
    EXPECT_EQ(c[10].tensor->name, "X");
    const std::string text = print_canonical(p);
    EXPECT_NE(text.find("{ let x; abs; add 1; rdiv x; let d; use x; rsub 2.5; mul d; sub x; div x; "
                        "rsub X[R,C]; rdiv 3; store Y[R,C] }"),
              std::string::npos)
        << text;
    Program again = parse_ok(text);
    EXPECT_EQ(strip_locations(again), strip_locations(p));
    EXPECT_EQ(print_canonical(again), text);
    EXPECT_NE(program_hash(p), program_hash(parse_ok(R"(program p for "softsign"
kernel k0 = map(X[R,C]) { let x; abs; add 1; div x; store Y[R,C] })")));
}

TEST(LetValue, ParseErrorWithoutName) {
    auto p = parse_program("program p for \"x\"\nkernel k = map(X[R]) { let; store Y[R] }", "t.kf");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().message, "expected let: a name (e.g. let x), got ';'");
    EXPECT_EQ(p.error().where, "t.kf:2:27");
}

TEST(LetValue, CheckerAcceptsReusedValues) {
    auto r = check_text(kSelfResidual, R"(program p for "self_residual"
kernel k0 = gemm(X[M,K], W[N,K]) { add b[N]; let x; mul 0.5; add x; cast bf16; store Y[M,N] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    r = check_text(kSoftsign, R"(program p for "softsign"
kernel k0 = map(X[R,C]) { let x; abs; add 1; rdiv x; store Y[R,C] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    r = check_text(kElu, R"(program p for "elu"
kernel k0 = map(X[R,C]) { let x; relu; let p; use x; exp; sub 1; mul 1.5; min 0; add p; store Y[R,C] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    // the same DAG with the branches in the other order, and `rsub`: 0 - (-x) ...
    r = check_text(kElu, R"(program p for "elu"
kernel k0 = map(X[R,C]) { let x; exp; add -1; mul 1.5; min 0; let q; use x; relu; add q; store Y[R,C] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
}

TEST(LetValue, CheckerRejectsAWrongDag) {
    // x / (1 + |x|) is not (1 + |x|) / x: rdiv and div differ.
    auto r = check_text(kSoftsign, R"(program p for "softsign"
kernel k0 = map(X[R,C]) { let x; abs; add 1; div x; store Y[R,C] })");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("Y is not what the problem computes"), std::string::npos)
        << all_errors(r);
    // x*0.5 + x is not x*0.5 + x*0.5 (the name read after the value changed is not the value)
    r = check_text(kSelfResidual, R"(program p for "self_residual"
kernel k0 = gemm(X[M,K], W[N,K]) { add b[N]; mul 0.5; let x; add x; cast bf16; store Y[M,N] })");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
}

TEST(LetValue, UseBeforeLetSaysWhereTheLetIs) {
    auto r = check_text(kSoftsign, R"(program p for "softsign"
kernel k0 = map(X[R,C]) { abs; add 1; rdiv x; let x; store Y[R,C] })");
    expect_one_error(r, "t.kf:2:44", {"rdiv x: x is bound by `let x` at 2:51, after this use"});
}

TEST(LetValue, UnboundNameAndTensorWithoutDims) {
    auto r = check_text(kSoftsign, R"(program p for "softsign"
kernel k0 = map(X[R,C]) { abs; use z; store Y[R,C] })");
    expect_one_error(r, "t.kf:2:36", {"use z: no value is named z in kernel k0",
                                      "bind it with `let z`"});
    r = check_text(kSoftsign, R"(program p for "softsign"
kernel k0 = map(X[R,C]) { abs; add 1; rdiv X; store Y[R,C] })");
    expect_one_error(r, "t.kf:2:44", {"no value is named X", "write its dims (X[..])"});
}

TEST(LetValue, NamesAreLocalToTheirKernel) {
    auto r = check_text(kSoftsign, R"(program p for "softsign"
kernel k0 = map(X[R,C]) { let x; abs; add 1; store D[R,C] }
kernel k1 = map(D[R,C]) { rdiv x; store Y[R,C] })");
    expect_one_error(r, "t.kf:3:32", {"no value is named x in kernel k1", "local to a kernel"});
    // each kernel may bind its own x
    r = check_text(kSoftsign, R"(program p for "softsign"
kernel k0 = map(X[R,C]) { let x; abs; add 1; store D[R,C] }
kernel k1 = map(X[R,C]) { let x; use x; div D[R,C]; store Y[R,C] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
}

TEST(LetValue, NoShadowingAndNoTensorNames) {
    auto r = check_text(kSoftsign, R"(program p for "softsign"
kernel k0 = map(X[R,C]) { let x; abs; let x; add 1; rdiv x; store Y[R,C] })");
    expect_one_error(r, "t.kf:2:43", {"let x: x is already bound at 2:31", "no shadowing"});
    r = check_text(kSoftsign, R"(program p for "softsign"
kernel k0 = map(X[R,C]) { let A; abs; add 1; rdiv A; store Y[R,C] })");
    ASSERT_GE(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].where, "t.kf:2:31") << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("A is a tensor of the problem"), std::string::npos)
        << all_errors(r);
    r = check_text(kSoftsign, R"(program p for "softsign"
kernel k0 = map(X[R,C]) { let T; abs; add 1; store T[R,C] }
kernel k1 = map(X[R,C]) { div T[R,C]; store Y[R,C] })");
    ASSERT_GE(r.errors.size(), 1u);
    EXPECT_NE(r.errors[0].message.find("T is a tensor of the program"), std::string::npos)
        << all_errors(r);
}

TEST(LetValue, UseRestoresTheNamedDtype) {
    // x is bound in f32; after `cast bf16` the value is bf16, `use x` is f32 again: storing it
    // into the bf16 output needs its own cast.
    auto r = check_text(kSelfResidual, R"(program p for "self_residual"
kernel k0 = gemm(X[M,K], W[N,K]) { add b[N]; let x; mul 0.5; cast bf16; let h; use x; add h; store Y[M,N] })");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("writes f32 but the problem's output Y is bf16"),
              std::string::npos)
        << all_errors(r);
}

TEST(LetValue, ReferenceCardTeachesNames) {
    const std::string card = reference_card();
    EXPECT_NE(card.find("`let t`"), std::string::npos);
    EXPECT_NE(card.find("`use t`"), std::string::npos);
    EXPECT_NE(card.find("rdiv"), std::string::npos);
    EXPECT_NE(card.find("let x; abs; add 1; rdiv x"), std::string::npos);
}

}  // namespace
}  // namespace kforge::dsl::testing
