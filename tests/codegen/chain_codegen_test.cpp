// Element-wise chain emission: broadcast offsets by dim name, contiguity, literals, casts and
// the errors an invalid chain must give.
#include <gtest/gtest.h>

#include "codegen/chain.h"
#include "tests/codegen/rowwise_fixtures.h"

namespace kforge::codegen {
namespace {

using namespace testing;
using K = dsl::ChainOpKind;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(ChainCodegen, BroadcastOffsetsByDimName) {
    Tensors t;
    t.add("b", {"N"}, {64}).add("c", {"M"}, {32}).add("a", {}, {}).add("Y", {"B", "M", "N"}, {4, 32, 64});
    t.add("p", {"B", "1", "N"}, {4, 1, 64}, DType::kBF16);
    const ChainSpace space{{"B", "M", "N"}, {4, 32, 64}};
    auto c = emit_chain("Ch", {with(K::kAdd, "b", {"N"}), with(K::kMul, "c", {"M"}),
                               with(K::kDiv, "a", {}), with(K::kSub, "p", {"B", "1", "N"}),
                               store("Y", {"B", "M", "N"})},
                        space, std::nullopt, t.ctx);
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    const std::string& d = c->definition;
    EXPECT_TRUE(has(d, "load_bcast<V, (V == 1 || 64 % V == 0)>(s[1], t_b, i, [](int64_t e) -> int64_t { return (e % 64); })")) << d;
    EXPECT_TRUE(has(d, "load_bcast<V, (V == 1)>(s[2], t_c, i, [](int64_t e) -> int64_t { return ((e / 64) % 32); })")) << d;
    EXPECT_TRUE(has(d, "load_bcast<V, (V == 1)>(s[3], t_a, i, [](int64_t e) -> int64_t { return int64_t(0); })")) << d;
    EXPECT_TRUE(has(d, "return (e % 64) + (e / 2048) * 64; })")) << d;
    EXPECT_TRUE(has(d, "const __nv_bfloat16* __restrict__ t_p;")) << d;
    EXPECT_TRUE(has(d, "static constexpr int kSlots = 5;")) << d;
    ASSERT_EQ(c->params.size(), 5u);
    EXPECT_TRUE(c->params[4].written);
}

// A literal 1 broadcasts and is never matched by name: s[K,1,1] over y[1,K,P,Q] (a batch of 1
// written as the literal) reads s along K. Matched by name, its last 1 took the batch's place and
// K had no dim left ("does not broadcast").
TEST(ChainCodegen, LiteralOneBroadcastsOverALiteralBatch) {
    Tensors t;
    t.add("s", {"K", "1", "1"}, {16, 1, 1}).add("y", {"1", "K", "P", "Q"}, {1, 16, 5, 7});
    const ChainSpace space{{"1", "K", "P", "Q"}, {1, 16, 5, 7}};
    auto c = emit_chain("Ch", {with(K::kAdd, "s", {"K", "1", "1"}), store("y", {"1", "K", "P", "Q"})},
                        space, std::nullopt, t.ctx);
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    EXPECT_TRUE(has(c->definition, "return ((e / 35) % 16); })")) << c->definition;
}

TEST(ChainCodegen, UnaryOpsLiteralsAndCast) {
    Tensors t;
    t.add("Y", {"N"}, {256}, DType::kF16);
    dsl::ChainOp sp = op(K::kSoftplus, {2.0, 10.0});
    auto c = emit_chain("Ch", {op(K::kLeakyRelu, {0.2}), sp, op(K::kClamp, {-3, 3}), op(K::kAdd, {1}),
                               cast(DType::kBF16), store("Y", {"N"})},
                        ChainSpace{{"N"}, {256}}, std::nullopt, t.ctx);
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    EXPECT_TRUE(has(c->definition, "act_leaky_relu(v[j], 0.2f)")) << c->definition;
    EXPECT_TRUE(has(c->definition, "act_softplus(v[j], 2.0f, 10.0f)"));
    EXPECT_TRUE(has(c->definition, "act_clamp(v[j], -3.0f, 3.0f)"));
    EXPECT_TRUE(has(c->definition, "v[j] = v[j] + 1.0f;"));
    EXPECT_TRUE(has(c->definition, "round_to<__nv_bfloat16>(v[j])"));
    EXPECT_TRUE(has(c->definition, "kforge::store_vec<V>(t_Y + i, v);"));
    EXPECT_EQ(cuda_float_literal(-1.0 / 0.0), "-INFINITY");
    EXPECT_EQ(cuda_float_literal(1e-5), "1e-05f");
}

// erf ... reciprocal as f32 libdevice calls (accurate sinf / cosf, not __sinf); max / min with a
// tensor operand are max_nan / min_nan of two values, with a number the same call (as before).
TEST(ChainCodegen, ElementwiseMathAndTwoValueBounds) {
    Tensors t;
    t.add("G", {"M", "N"}, {8, 64}, DType::kBF16).add("b", {"N"}, {64}).add("Y", {"M", "N"}, {8, 64});
    const ChainSpace space{{"M", "N"}, {8, 64}};
    auto c = emit_chain("Ch", {op(K::kErf), op(K::kLog1p), op(K::kExpm1), op(K::kSin), op(K::kCos),
                               op(K::kSign), op(K::kReciprocal), with(K::kMax, "G", {"M", "N"}),
                               with(K::kMin, "b", {"N"}), op(K::kMax, {0.25}), store("Y", {"M", "N"})},
                        space, std::nullopt, t.ctx);
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    const std::string& d = c->definition;
    for (const char* e : {"v[j] = erff(v[j]);", "v[j] = log1pf(v[j]);", "v[j] = expm1f(v[j]);",
                          "v[j] = sinf(v[j]);", "v[j] = cosf(v[j]);",
                          "v[j] = kforge::act_sign(v[j]);", "v[j] = 1.0f / v[j];",
                          "v[j] = kforge::max_nan(v[j], s[1][j]);",
                          "v[j] = kforge::min_nan(v[j], s[2][j]);",
                          "v[j] = kforge::max_nan(v[j], 0.25f);"}) {
        EXPECT_TRUE(has(d, e)) << e << "\n" << d;
    }
    EXPECT_FALSE(has(d, "__sinf")) << d;
    EXPECT_TRUE(has(d, "const __nv_bfloat16* __restrict__ t_G;")) << d;
}

TEST(ChainCodegenError, BadChains) {
    Tensors t;
    t.add("Y", {"M", "N"}, {8, 16}).add("b", {"K"}, {16}).add("w", {"N"}, {15});
    t.add("I", {"M", "N"}, {8, 16}, DType::kI32);
    const ChainSpace space{{"M", "N"}, {8, 16}};
    auto nodim = emit_chain("Ch", {with(K::kAdd, "b", {"K"}), store("Y", {"M", "N"})}, space,
                            std::nullopt, t.ctx);
    ASSERT_FALSE(nodim.ok());
    EXPECT_TRUE(has(nodim.error().message, "does not broadcast")) << nodim.error().message;
    auto size = emit_chain("Ch", {with(K::kAdd, "w", {"N"}), store("Y", {"M", "N"})}, space,
                           std::nullopt, t.ctx);
    ASSERT_FALSE(size.ok());
    EXPECT_TRUE(has(size.error().message, "has size 15"));
    dsl::ChainOp red = op(K::kReduce);
    red.tensor = ref("Y", {"M"});
    EXPECT_FALSE(emit_chain("Ch", {red}, space, std::nullopt, t.ctx).ok());
    EXPECT_FALSE(emit_chain("Ch", {op(K::kRelu)}, space, std::nullopt, t.ctx).ok());
    auto i32 = emit_chain("Ch", {store("I", {"M", "N"})}, space, std::nullopt, t.ctx);
    ASSERT_FALSE(i32.ok());
    EXPECT_TRUE(has(i32.error().message, "f32, bf16 or f16"));
}

}  // namespace
}  // namespace kforge::codegen
