// The element-wise prologue of a rowwise reduction, `rowwise sum(A[M,K]) pre { mul B[K,1] }`:
// parse/print round trip, the checker's proof that it computes the problem (a matvec's
// contraction, a map -> mean chain), and the user errors for prologues that cannot be.
#include <gtest/gtest.h>

#include "check_test_util.h"
#include "dsl/printer.h"
#include "dsl/reference_card.h"

namespace kforge::dsl::testing {
namespace {

// C = A @ B with B a column: a contraction over K.
constexpr const char* kMatvec = R"({"name": "matvec", "dims": {"M": 64, "K": 1024},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"},
               "B": {"shape": ["K", 1], "dtype": "f32"}},
    "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C"}],
    "outputs": ["C"], "precision": {"policy": "fp32_strict"}})";

// mean((P - T)^2) over the last dim, then scaled: a map -> reduction chain.
constexpr const char* kMse = R"({"name": "mse_rows", "dims": {"R": 64, "C": 1024},
    "inputs": {"P": {"shape": ["R", "C"], "dtype": "f32"},
               "T": {"shape": ["R", "C"], "dtype": "f32"},
               "w": {"shape": ["C"], "dtype": "f32"}},
    "graph": [{"op": "sub", "inputs": ["P", "T"], "output": "D"},
              {"op": "square", "inputs": ["D"], "output": "S"},
              {"op": "mul", "inputs": ["S", "w"], "output": "Q"},
              {"op": "mean", "inputs": ["Q"], "output": "Y", "axis": -1},
              {"op": "scale", "inputs": ["Y"], "output": "Z", "value": 0.5}],
    "outputs": ["Z"], "precision": {"policy": "fp32_strict"}})";

Program parse_ok(std::string_view text) {
    auto p = parse_program(text, "t.kf");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Program{};
}

TEST(RowPrologue, ParsesAndPrintsBack) {
    Program p = parse_ok(R"(program p for "mse_rows"
kernel k0 = rowwise mean(P[R,C]) pre { sub T[R,C]; square; mul w[C] } threads 128 vec 4
    { mul 0.5; store Z[R] })");
    ASSERT_EQ(p.kernels.size(), 1u);
    const Kernel& k = p.kernels[0];
    ASSERT_EQ(k.pre.size(), 3u);
    EXPECT_EQ(k.pre[0].kind, ChainOpKind::kSub);
    ASSERT_TRUE(k.pre[0].tensor.has_value());
    EXPECT_EQ(k.pre[0].tensor->name, "T");
    EXPECT_EQ(k.pre[0].loc, (SourceLoc{2, 40}));
    EXPECT_EQ(k.pre[1].kind, ChainOpKind::kSquare);
    EXPECT_EQ(k.rowwise.threads, 128);
    ASSERT_EQ(k.chain.size(), 2u);
    const std::string text = print_canonical(p);
    EXPECT_NE(text.find("rowwise mean(P[R,C]) pre { sub T[R,C]; square; mul w[C] } rows_per_block"),
              std::string::npos)
        << text;
    Program again = parse_ok(text);
    EXPECT_EQ(strip_locations(again), strip_locations(p));
    EXPECT_EQ(print_canonical(again), text);
    // No prologue prints as before, and hashes apart.
    Program plain = parse_ok(R"(program p for "mse_rows"
kernel k0 = rowwise mean(P[R,C]) threads 128 vec 4 { mul 0.5; store Z[R] })");
    EXPECT_EQ(print_canonical(plain).find("pre"), std::string::npos);
    EXPECT_NE(program_hash(plain), program_hash(p));
}

TEST(RowPrologue, ReferenceCardTeachesThePrologue) {
    const std::string card = reference_card();
    EXPECT_NE(card.find("['pre' '{' stmt (';' stmt)* '}']"), std::string::npos) << card;
    EXPECT_NE(card.find("rowwise sum(A[M,K]) pre { mul B[K,N] }"), std::string::npos) << card;
}

TEST(RowPrologue, ParseErrors) {
    auto p = parse_program(R"(program p for "x"
kernel k0 = map(X[R,C]) pre { relu } { store Y[R,C] })", "t.kf");
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find("belongs to a rowwise sum, mean, max or min kernel"),
              std::string::npos)
        << p.error().to_string();
    p = parse_program(R"(program p for "x"
kernel k0 = rowwise sum(X[R,C]) threads 128 pre { relu } { store Y[R] })", "t.kf");
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find("right after the head, before the knobs"), std::string::npos)
        << p.error().to_string();
    p = parse_program(R"(program p for "x"
kernel k0 = rowwise sum(X[R,C]) pre relu { store Y[R] })", "t.kf");
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find("'{' to open the prologue after 'pre'"), std::string::npos)
        << p.error().to_string();
}

TEST(RowPrologue, MatvecAsRowSumWithMulChecks) {
    auto r = check_text(kMatvec, R"(program p for "matvec"
kernel k0 = rowwise sum(A[M,K]) pre { mul B[K,1] } { store C[M,1] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    // The gemm it replaces checks too; a max of the products does not.
    r = check_text(kMatvec, R"(program p for "matvec"
kernel k0 = gemm(A[M,K], B[K,1]) tile 64x16x32 schedule multistage { store C[M,1] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    r = check_text(kMatvec, R"(program p for "matvec"
kernel k0 = rowwise max(A[M,K]) pre { mul B[K,1] } { store C[M,1] })");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("C is not what the problem computes"), std::string::npos)
        << all_errors(r);
    // Without the prologue the sum is of A alone.
    r = check_text(kMatvec, R"(program p for "matvec"
kernel k0 = rowwise sum(A[M,K]) { store C[M,1] })");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
}

TEST(RowPrologue, MatvecWithANamedUnitDimChecks) {
    // As the importer names it: B[K,N] with N = 1; the output C[M,N].
    constexpr const char* kNamed = R"({"name": "matvec_n", "dims": {"M": 64, "K": 1024, "N": 1},
        "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"},
                   "B": {"shape": ["K", "N"], "dtype": "f32"}},
        "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C"}],
        "outputs": ["C"], "precision": {"policy": "fp32_strict"}})";
    auto r = check_text(kNamed, R"(program p for "matvec_n"
kernel k0 = rowwise sum(A[M,K]) pre { mul B[K,N] } { store C[M,N] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    r = check_text(kNamed, R"(program p for "matvec_n"
kernel k0 = rowwise sum(A[M,K]) pre { add B[K,N] } { store C[M,N] })");
    EXPECT_FALSE(r.errors.empty()) << all_errors(r);
}

TEST(RowPrologue, MapChainFoldedIntoTheReductionChecks) {
    auto r = check_text(kMse, R"(program p for "mse_rows"
kernel k0 = rowwise mean(P[R,C]) pre { sub T[R,C]; square; mul w[C] } { mul 0.5; store Z[R] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    // Named values inside the prologue.
    r = check_text(kMse, R"(program p for "mse_rows"
kernel k0 = rowwise mean(P[R,C]) pre { sub T[R,C]; let d; exp; use d; square; mul w[C] }
    { mul 0.5; store Z[R] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    // The two-kernel form it replaces.
    r = check_text(kMse, R"(program p for "mse_rows"
kernel k0 = map(P[R,C]) { sub T[R,C]; square; mul w[C]; store Q[R,C] }
kernel k1 = rowwise mean(Q[R,C]) { mul 0.5; store Z[R] })");
    EXPECT_TRUE(r.errors.empty()) << all_errors(r);
    // A wrong prologue is caught.
    r = check_text(kMse, R"(program p for "mse_rows"
kernel k0 = rowwise mean(P[R,C]) pre { sub T[R,C]; abs; mul w[C] } { mul 0.5; store Z[R] })");
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("Z is not what the problem computes"), std::string::npos)
        << all_errors(r);
}

TEST(RowPrologue, OnlyReductionsTakeAPrologue) {
    auto r = check_text(kMse, R"(program p for "mse_rows"
kernel k0 = rowwise softmax(P[R,C]) pre { square } { store Z[R,C] })");
    ASSERT_GE(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].where, "t.kf:2:43") << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("only rowwise sum, mean, max and min take an element-wise "
                                       "prologue, not softmax"),
              std::string::npos)
        << all_errors(r);
}

TEST(RowPrologue, StoreAndCastAreNotPrologueStatements) {
    auto r = check_text(kMse, R"(program p for "mse_rows"
kernel k0 = rowwise mean(P[R,C]) pre { sub T[R,C]; store Q[R,C] } { store Z[R] })");
    ASSERT_GE(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].where, "t.kf:2:52") << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("store is not allowed in the prologue"), std::string::npos)
        << all_errors(r);
    r = check_text(kMse, R"(program p for "mse_rows"
kernel k0 = rowwise mean(P[R,C]) pre { cast bf16 } { store Z[R] })");
    ASSERT_GE(r.errors.size(), 1u);
    EXPECT_NE(r.errors[0].message.find("cast is not allowed in the prologue"), std::string::npos)
        << all_errors(r);
}

TEST(RowPrologue, OperandThatDoesNotBroadcastIntoTheRow) {
    // B[K,1] against rows of P[R,C]: the operand's dims are not the input's.
    auto r = check_text(kMatvec, R"(program p for "matvec"
kernel k0 = rowwise sum(A[M,K]) pre { mul A[M,K]; mul C[M,1] } { store C[M,1] })");
    ASSERT_GE(r.errors.size(), 1u) << all_errors(r);
    r = check_text(kMse, R"(program p for "mse_rows"
kernel k0 = rowwise mean(P[R,C]) pre { mul T[C,R] } { store Z[R] })");
    ASSERT_GE(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(all_errors(r).find("T is [R,C] in the problem"), std::string::npos) << all_errors(r);
}

TEST(RowPrologue, ColumnReductionHasNoPrologue) {
    auto r = check_text(kMse, R"(program p for "mse_rows"
kernel k0 = rowwise mean(P[R,C]) pre { square } over R { store Z[C] })");
    bool said = false;
    for (const auto& e : r.errors)
        said = said || e.message.find("a prologue is lowered for reductions over the last dim "
                                      "or a set of dims only") != std::string::npos;
    EXPECT_TRUE(said) << all_errors(r);
}

}  // namespace
}  // namespace kforge::dsl::testing
