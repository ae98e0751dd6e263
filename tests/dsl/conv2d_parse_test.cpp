// The conv2d kernel (docs/language.md): head, knobs (the multistage gemm knobs into
// Kernel::gemm), chain, canonical printer and hash, parse errors.
#include <gtest/gtest.h>

#include "dsl/knobs.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "dsl/reference_card.h"

namespace kforge::dsl {
namespace {

constexpr std::string_view kConv = R"(program conv for "conv_relu"
kernel k0 = conv2d(X[N,C,H,W], Wt[K,C,R,S]) tile 128x64x32 stages 4 math tf32x3 swizzle 2
    { add b[K]; relu; store Y[N,K,P,Q] }
)";

Program parse_ok(std::string_view text) {
    auto p = parse_program(text, "t.kf");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Program{};
}

Error parse_fail(std::string_view text) {
    auto p = parse_program(text, "t.kf");
    EXPECT_FALSE(p.ok()) << "expected a parse error";
    return p.ok() ? Error{} : p.error();
}

std::string conv_with(std::string_view knobs, std::string_view head = "X[N,C,H,W], Wt[K,C,R,S]") {
    return "program p for \"x\"\nkernel k = conv2d(" + std::string(head) + ") " + std::string(knobs) +
           " { store Y[N,K,P,Q] }";
}

TEST(Conv2dParse, HeadKnobsAndChain) {
    Program p = parse_ok(kConv);
    ASSERT_EQ(p.kernels.size(), 1u);
    const Kernel& k = p.kernels[0];
    EXPECT_EQ(k.kind, KernelKind::kConv2d);
    ASSERT_EQ(k.args.size(), 2u);
    EXPECT_EQ(k.args[0].name, "X");
    EXPECT_EQ(k.args[0].dims, (std::vector<std::string>{"N", "C", "H", "W"}));
    EXPECT_EQ(k.args[1].name, "Wt");
    EXPECT_EQ(k.args[1].dims, (std::vector<std::string>{"K", "C", "R", "S"}));
    EXPECT_EQ(k.gemm.tile_m, 128);
    EXPECT_EQ(k.gemm.tile_n, 64);
    EXPECT_EQ(k.gemm.tile_k, 32);
    EXPECT_EQ(k.gemm.stages, 4);
    EXPECT_EQ(k.gemm.math, MathMode::kTf32x3);
    EXPECT_EQ(k.gemm.swizzle, 2);
    EXPECT_EQ(k.gemm.schedule, Schedule::kMultistage);
    ASSERT_EQ(k.chain.size(), 3u);
    EXPECT_EQ(k.chain[0].kind, ChainOpKind::kAdd);
    EXPECT_EQ(k.chain[0].tensor->dims, (std::vector<std::string>{"K"}));
    EXPECT_EQ(k.chain[2].kind, ChainOpKind::kStore);
}

TEST(Conv2dParse, DefaultsAreTheMultistageConfig) {
    Program p = parse_ok(conv_with(""));
    ASSERT_EQ(p.kernels.size(), 1u);
    EXPECT_EQ(p.kernels[0].gemm, conv2d_default_config());
    EXPECT_EQ(p.kernels[0].gemm.schedule, Schedule::kMultistage);
    EXPECT_EQ(p.kernels[0].gemm.stages, 3);
    // `schedule auto` and `schedule multistage` are the same kernel
    EXPECT_EQ(strip_locations(parse_ok(conv_with("schedule auto"))),
              strip_locations(parse_ok(conv_with("schedule multistage"))));
}

TEST(Conv2dParse, CanonicalTextRoundTripAndHash) {
    const Program p = parse_ok(kConv);
    const std::string text = print_canonical(p);
    EXPECT_EQ(text,
              "program conv for \"conv_relu\"\n"
              "kernel k0 = conv2d(X[N,C,H,W], Wt[K,C,R,S]) tile 128x64x32 stages 4 schedule "
              "multistage math tf32x3 acc f32 swizzle 2\n"
              "    { add b[K]; relu; store Y[N,K,P,Q] }\n");
    const Program again = parse_ok(text);
    EXPECT_EQ(strip_locations(again), strip_locations(p));
    EXPECT_EQ(print_canonical(again), text);
    // knob order and defaults do not change the identity; a knob value does
    EXPECT_EQ(program_hash(parse_ok(conv_with("math tf32 tile 128x64x32"))),
              program_hash(parse_ok(conv_with("tile 128x64x32 stages 3 math tf32 schedule auto"))));
    EXPECT_NE(program_hash(parse_ok(conv_with("stages 3"))),
              program_hash(parse_ok(conv_with("stages 4"))));
    // a conv2d and a gemm with the same text otherwise differ
    EXPECT_NE(program_hash(parse_ok(conv_with(""))),
              program_hash(parse_ok("program p for \"x\"\nkernel k = gemm(X[N,C,H,W], Wt[K,C,R,S]) "
                                    "{ store Y[N,K,P,Q] }")));
}

// `iterator`: written only where set (auto prints nothing), round-trips, and is part of the
// identity; an unknown walk is refused with the legal words.
TEST(Conv2dParse, IteratorKnob) {
    const Program p = parse_ok(conv_with("iterator few_channels"));
    EXPECT_EQ(p.kernels[0].gemm.iterator, ConvIterator::kFewChannels);
    const std::string text = print_canonical(p);
    EXPECT_NE(text.find("swizzle 1 iterator few_channels"), std::string::npos) << text;
    EXPECT_EQ(print_canonical(parse_ok(text)), text);
    EXPECT_EQ(print_canonical(parse_ok(conv_with("iterator auto"))),
              print_canonical(parse_ok(conv_with(""))));
    EXPECT_NE(program_hash(parse_ok(conv_with("iterator few_channels"))),
              program_hash(parse_ok(conv_with("iterator optimized"))));
    EXPECT_EQ(parse_fail(conv_with("iterator analytic")).message,
              "iterator analytic: expected one of auto, optimized, few_channels");
}

TEST(Conv2dParse, OnlyTheConvKnobs) {
    Error e = parse_fail(conv_with("schedule cooperative"));
    EXPECT_EQ(e.message, "schedule cooperative: expected one of auto, multistage, tma_ws, direct");
    // the direct convolution too
    const Program direct = parse_ok(conv_with("tile 128x8x4 stages 1 schedule direct math f32_simt"));
    EXPECT_EQ(direct.kernels[0].gemm.schedule, Schedule::kDirect);
    EXPECT_EQ(direct.kernels[0].gemm.tile_n, 8);
    EXPECT_EQ(direct.kernels[0].gemm.stages, 1);
    EXPECT_EQ(strip_locations(parse_ok(print_canonical(direct))), strip_locations(direct));
    // the Hopper convolution reads back from its canonical text
    const Program sm90 = parse_ok(conv_with("tile 128x128x32 schedule tma_ws"));
    EXPECT_EQ(sm90.kernels[0].gemm.schedule, Schedule::kTmaWarpSpecialized);
    EXPECT_NE(print_canonical(sm90).find("schedule tma_ws"), std::string::npos);
    EXPECT_EQ(strip_locations(parse_ok(print_canonical(sm90))), strip_locations(sm90));
    e = parse_fail(conv_with("cluster 2x1"));
    EXPECT_EQ(e.message, "expected a knob (tile, stages, schedule, ...) or '{', got 'cluster'");
    EXPECT_EQ(parse_fail(conv_with("splitk 2")).message,
              "expected a knob (tile, stages, schedule, ...) or '{', got 'splitk'");
    EXPECT_EQ(parse_fail(conv_with("stages 7")).message, "stages 7: expected 1..6");
    EXPECT_EQ(parse_fail(conv_with("stages auto")).message,
              "stages: expected an integer (e.g. 3), got 'auto'");
    EXPECT_EQ(parse_fail(conv_with("tile 128x64x48")).message,
              "tile 128x64x48: K expected one of 4, 8, 16, 32, 64, 128");
}

TEST(Conv2dParse, HeadErrors) {
    Error e = parse_fail(conv_with("", "X[N,C,H,W]"));
    EXPECT_EQ(e.where, "t.kf:2:29");
    EXPECT_EQ(e.message, "expected ',' and the weight: conv2d takes 2 tensors (X[N,C,H,W], "
                         "Wt[K,C,R,S]), got ')'");
    e = parse_fail(conv_with("", "X[N,C,H,W], Wt[K,C,R,S], b[K]"));
    EXPECT_EQ(e.message, "expected ')': conv2d takes 2 tensors, got ','");
    e = parse_fail(conv_with("", "X[N,C,H], Wt[K,C,R,S]"));
    EXPECT_EQ(e.where, "t.kf:2:19");
    EXPECT_EQ(e.message, "conv2d input 'X' has 3 dims; conv2d takes X[N,C,H,W] (NCHW)");
    EXPECT_EQ(e.detail.substr(e.detail.find('\n') + 1), std::string(4 + 18, ' ') + "^");
    e = parse_fail(conv_with("", "X[N,C,H,W], Wt[K,C]"));
    EXPECT_EQ(e.where, "t.kf:2:31");
    EXPECT_EQ(e.message, "conv2d weight 'Wt' has 2 dims; conv2d takes Wt[K,C,R,S] (KCRS)");
    EXPECT_EQ(e.detail.substr(e.detail.find('\n') + 1), std::string(4 + 30, ' ') + "^^");
    e = parse_fail("program p for \"x\"\nkernel k = conv(X[N,C,H,W], Wt[K,C,R,S]) { store Y[N,K,P,Q] }");
    EXPECT_EQ(e.message, "expected a kernel kind (gemm, rowwise, map, conv2d, pool, attention, copy, rnn), got 'conv'; did you mean "
                         "'conv2d'?");
}

TEST(Conv2dParse, ReferenceCardDocumentsConv2d) {
    const std::string card = reference_card();
    EXPECT_NE(card.find("'conv2d' '(' X[N,C,H,W] ',' Wt[K,C,R,S] ')'"), std::string::npos) << card;
    EXPECT_NE(card.find("### conv2d knobs"), std::string::npos);
    EXPECT_NE(card.find("| `stages` | 1..6 | 3 |"), std::string::npos);
    EXPECT_NE(card.find("`schedule direct math f32_simt`"), std::string::npos);
}

}  // namespace
}  // namespace kforge::dsl
