// Named values (`let`) in the lowering: row-wise and map chains hold them in registers; gemm
// epilogues (CUTLASS EVT, sm90 and sm80) repeat the named value's subtree where it is read;
// rsub/rdiv put the operand first. Source text only (the compile tests build it).
#include <gtest/gtest.h>

#include "codegen/chain.h"
#include "codegen/evt_emit.h"
#include "codegen/gemm_spec.h"
#include "tests/codegen/let_value_fixtures.h"
#include "tests/codegen/rowwise_fixtures.h"

namespace kforge::codegen {
namespace {

using namespace let_testing;
using K = dsl::ChainOpKind;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

dsl::ChainOp named(K kind, std::string name) {
    dsl::ChainOp o;
    o.kind = kind;
    o.name = std::move(name);
    return o;
}

TEST(LetValueCodegen, ChainHoldsNamedValuesInRegisters) {
    testing::Tensors t;
    t.add("X", {"R", "C"}, {8, 64}).add("Y", {"R", "C"}, {8, 64});
    const ChainSpace space{{"R", "C"}, {8, 64}};
    auto c = emit_chain("Ch",
                        {named(K::kLet, "x"), testing::op(K::kAbs), testing::op(K::kAdd, {1.0}),
                         named(K::kRdiv, "x"), named(K::kLet, "d"), named(K::kUse, "x"),
                         testing::op(K::kRsub, {2.0}), named(K::kSub, "d"),
                         testing::with(K::kRdiv, "X", {"R", "C"}),
                         testing::store("Y", {"R", "C"})},
                        space, testing::ref("X", {"R", "C"}), t.ctx);
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    const std::string& d = c->definition;
    EXPECT_TRUE(has(d, "float n_x[V];\n        for (int j = 0; j < V; ++j) n_x[j] = v[j];")) << d;
    EXPECT_TRUE(has(d, "v[j] = n_x[j] / v[j];")) << d;
    EXPECT_TRUE(has(d, "for (int j = 0; j < V; ++j) v[j] = n_x[j];")) << d;  // use x
    EXPECT_TRUE(has(d, "v[j] = 2.0f - v[j];")) << d;
    EXPECT_TRUE(has(d, "v[j] = v[j] - n_d[j];")) << d;
    EXPECT_TRUE(has(d, "v[j] = s[1][j] / v[j];")) << d;  // rdiv X[R,C]: a loaded operand
    EXPECT_TRUE(has(d, "static constexpr int kSlots = 2;")) << d;  // names take no slot
}

TEST(LetValueCodegenError, UnboundNameInAChain) {
    testing::Tensors t;
    t.add("Y", {"N"}, {64});
    auto c = emit_chain("Ch", {named(K::kAdd, "q"), testing::store("Y", {"N"})},
                        ChainSpace{{"N"}, {64}}, std::nullopt, t.ctx);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().message.find("q is not bound by an earlier `let`"), std::string::npos);
}

TEST(LetValueCodegen, MapAndRowwiseProgramsLower) {
    auto map = lower(checked(kSoftsignSpec, R"(program p for "softsign"
kernel k0 = map(X[R,C]) { let x; abs; add 1; rdiv x; store Y[R,C] })"));
    ASSERT_TRUE(map.ok()) << map.error().to_string();
    EXPECT_TRUE(has(map->cuda_source, "v[j] = n_x[j] / v[j];")) << map->cuda_source;
    EXPECT_EQ(map->plan.kernels.size(), 1u);
    auto row = lower(checked(kSoftmaxSquareSpec, R"(program p for "softmax_square"
kernel k0 = rowwise softmax(X[R,C]) { let s; square; add s; cast bf16; store Y[R,C] })"));
    ASSERT_TRUE(row.ok()) << row.error().to_string();
    EXPECT_TRUE(has(row->cuda_source, "v[j] = v[j] + n_s[j];")) << row->cuda_source;
}

// The EVT of `{ add b[N]; let x; mul 0.5; add x; ... }`: the subtree of x (acc + b) is the
// first child of the multiply and again the second child of the add.
TEST(LetValueCodegen, EvtRepeatsTheNamedSubtree) {
    Checked c = checked(kSelfResidualSpec, R"(program p for "self_residual"
kernel k0 = gemm(X[M,K], W[N,K]) { add b[N]; let x; mul 0.5; add x; cast bf16; store Y[M,N] })");
    auto spec = first_gemm_spec(c);
    ASSERT_TRUE(spec.ok()) << spec.error().to_string();
    for (EvtFamily fam : {EvtFamily::kSm90, EvtFamily::kSm80}) {
        auto evt = emit_evt(*spec, fam);
        ASSERT_TRUE(evt.ok()) << evt.error().to_string();
        const std::string& ty = evt->types;
        EXPECT_TRUE(has(ty, "cutlass::plus, ElementCompute, ElementCompute, RoundStyle>,\n    Evt1,\n    Evt0>;"))
            << ty;
        // Evt0 (acc + b) appears as a child twice: under Evt1 (mul) and under Evt2 (add).
        size_t uses = 0;
        for (size_t at = ty.find("    Evt0"); at != std::string::npos; at = ty.find("    Evt0", at + 1))
            ++uses;
        EXPECT_EQ(uses, 2u) << ty;
        // its arguments likewise: the bias pointer twice
        size_t ptrs = 0;
        for (size_t at = evt->arguments.find("tensors[3]"); at != std::string::npos;
             at = evt->arguments.find("tensors[3]", at + 1))
            ++ptrs;
        EXPECT_EQ(ptrs, 2u) << evt->arguments;
    }
}

TEST(LetValueCodegen, EvtReversedOperandsAndUse) {
    Checked c = checked(kGemmSoftsignSpec, R"(program p for "gemm_softsign"
kernel k0 = gemm(X[M,K], W[N,K]) { let x; abs; add 1; rdiv R[M,N]; add x; cast f16; store Y[M,N] })");
    auto spec = first_gemm_spec(c);
    ASSERT_TRUE(spec.ok()) << spec.error().to_string();
    EXPECT_EQ(spec->source, std::optional<std::string>("R"));
    auto evt = emit_evt(*spec, EvtFamily::kSm90);
    ASSERT_TRUE(evt.ok()) << evt.error().to_string();
    // rdiv R: divides(R, value): the residual fetch is the first child
    EXPECT_TRUE(has(evt->types, "cutlass::divides, ElementCompute, ElementCompute, RoundStyle>,\n"
                                "    cutlass::epilogue::fusion::Sm90SrcFetch<cutlass::half_t>,\n"
                                "    Evt1>;"))
        << evt->types;
    // add x: x is the accumulator itself
    EXPECT_TRUE(has(evt->types, "    Evt2,\n    cutlass::epilogue::fusion::Sm90AccFetch>;"))
        << evt->types;
    // a `use` as the last step: the root converts to ElementD before the store
    Checked u = checked(kSelfResidualSpec, R"(program p for "self_residual"
kernel k0 = gemm(X[M,K], W[N,K]) { add b[N]; let x; mul 0.5; add x; cast bf16; let y; use y; store Y[M,N] })");
    auto spec2 = first_gemm_spec(u);
    ASSERT_TRUE(spec2.ok()) << spec2.error().to_string();
    auto evt2 = emit_evt(*spec2, EvtFamily::kSm90);
    ASSERT_TRUE(evt2.ok());
    EXPECT_TRUE(has(evt2->types, "Sm90Compute<cutlass::epilogue::thread::Identity, ElementD, "
                                 "ElementCompute, RoundStyle>,\n    Evt3>;"))
        << evt2->types;
}

// A gemm epilogue with erf and the maximum of the accumulator and a residual (and of a named
// value): CUTLASS's maximum_with_nan_propagation node with the residual's fetch as its second
// child, erff as a scalar functor; no separate kernel needed.
TEST(LetValueCodegen, EvtMaximumWithTensorAndNameAndErf) {
    Checked c = checked(R"({"name": "gemm_max", "dims": {"M": 512, "N": 256, "K": 128},
    "inputs": {"X": {"shape": ["M", "K"], "dtype": "f16"},
               "W": {"shape": ["N", "K"], "dtype": "f16", "param": true},
               "R": {"shape": ["M", "N"], "dtype": "f16"}},
    "graph": [{"op": "linear", "inputs": ["X", "W"], "output": "H"},
              {"op": "maximum", "inputs": ["R", "H"], "output": "Mx"},
              {"op": "erf", "inputs": ["Mx"], "output": "E"},
              {"op": "minimum", "inputs": ["E", "H"], "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "fp16"}})",
                        R"(program p for "gemm_max"
kernel k0 = gemm(X[M,K], W[N,K]) { let h; max R[M,N]; erf; min h; cast f16; store Y[M,N] })");
    auto spec = first_gemm_spec(c);
    ASSERT_TRUE(spec.ok()) << spec.error().to_string();
    for (EvtFamily fam : {EvtFamily::kSm90, EvtFamily::kSm80}) {
        auto evt = emit_evt(*spec, fam);
        ASSERT_TRUE(evt.ok()) << evt.error().to_string();
        const std::string& ty = evt->types;
        EXPECT_TRUE(has(ty, "<cutlass::maximum_with_nan_propagation, ElementCompute, "
                            "ElementCompute, RoundStyle>"))
            << ty;
        EXPECT_TRUE(has(ty, "<cutlass::minimum_with_nan_propagation, ")) << ty;
        EXPECT_TRUE(has(ty, "{ return erff(x); }")) << ty;
    }
}

}  // namespace
}  // namespace kforge::codegen
