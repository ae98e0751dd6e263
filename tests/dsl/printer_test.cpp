// Canonical printer, content hash and reference card.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "dsl/knobs.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "dsl/reference_card.h"

namespace kforge::dsl {
namespace {

Program parse_ok(std::string_view text) {
    auto p = parse_program(text, "t.kf");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Program{};
}

constexpr std::string_view kProgram = R"(program fused for "fused_f32"
kernel k0 = gemm(X[M,K], W[N,K])
    tile 128x256x64 cluster 2x1 schedule cooperative math bf16 raster along_n swizzle 8
    { add b[N]; gelu tanh; clamp -1.5 2e3; leaky_relu 0.1; cast bf16; store T[M,N];
      reduce sum over N -> S[M] }
kernel k1 = rowwise layer_norm(T[M,N], g[N], be[N]) eps 1e-5 threads 128 online { store Y[M,N] }
kernel k2 = map(Y[M,N]) block 128 grid_stride { mul 0.1; softplus 2 10; store Z[M,N] }
)";

// Equality up to source locations: parse(print(p)) == p.
void expect_round_trip(const Program& p) {
    std::string text = print_canonical(p);
    Program again = parse_ok(text);
    EXPECT_EQ(strip_locations(again), strip_locations(p)) << text;
    EXPECT_EQ(print_canonical(again), text);
}

TEST(Printer, CanonicalTextIsExact) {
    EXPECT_EQ(print_canonical(parse_ok(kProgram)),
              "program fused for \"fused_f32\"\n"
              "kernel k0 = gemm(X[M,K], W[N,K]) tile 128x256x64 cluster 2x1 stages auto schedule "
              "cooperative math bf16 acc f32 raster along_n swizzle 8 splitk 1\n"
              "    { add b[N]; gelu tanh; clamp -1.5 2000; leaky_relu 0.1; cast bf16; store T[M,N]; "
              "reduce sum over N -> S[M] }\n"
              "kernel k1 = rowwise layer_norm(T[M,N], g[N], be[N]) eps 1e-05 rows_per_block 1 "
              "threads 128 vec 4 passes 1 online split 1\n"
              "    { store Y[M,N] }\n"
              "kernel k2 = map(Y[M,N]) block 128 vec 4 items 1 grid_stride\n"
              "    { mul 0.1; softplus 2 10; store Z[M,N] }\n");
}

TEST(Printer, RoundTrip) {
    expect_round_trip(parse_ok(kProgram));
    expect_round_trip(parse_ok("program p for \"q\" kernel a = rowwise group_norm(X[B,C,H]) over C "
                               "groups 8 eps 0.001 passes 2 { sub mu[]; store Y[B,C,H] }"));
    expect_round_trip(parse_ok("program p for \"q\" kernel a = rowwise l2_normalize(X[M,N]) eps 1e-12 "
                               "rows_per_block 2 threads 512 vec 8 passes 2 split 2 smem_stage "
                               "{ cast bf16; store Y[M,N] } kernel b = rowwise l1_normalize(X[M,N]) "
                               "{ store Z[M,N] }"));
    const Program p = parse_ok("program p for \"q\" kernel a = rowwise l1_normalize(X[M,N]) eps 1e-6 "
                               "{ store Z[M,N] }");
    EXPECT_EQ(p.kernels[0].row_op, RowOp::kL1Normalize);
    EXPECT_EQ(p.kernels[0].eps, 1e-6);
    EXPECT_NE(print_canonical(p).find("rowwise l1_normalize(X[M,N]) eps 1e-06 "), std::string::npos)
        << print_canonical(p);
}

TEST(Printer, ProdRoundTrips) {
    const Program p = parse_ok("program p for \"q\" kernel a = rowwise prod(X[B,R,C]) over R "
                               "threads 256 vec 4 { store Y[B,C] }");
    EXPECT_EQ(p.kernels[0].row_op, RowOp::kProd);
    EXPECT_NE(print_canonical(p).find("rowwise prod(X[B,R,C]) over R "), std::string::npos)
        << print_canonical(p);
    expect_round_trip(p);
}

TEST(Printer, ElementwiseMathAndTwoValueBoundsRoundTrip) {
    const Program p = parse_ok("program p for \"q\" kernel a = map(X[M,N]) { let x; erf; log1p; "
                               "expm1; sin; cos; sign; reciprocal; max G[M,N]; min x; max 0.5; "
                               "store Y[M,N] }");
    const std::string text = print_canonical(p);
    EXPECT_NE(text.find("{ let x; erf; log1p; expm1; sin; cos; sign; reciprocal; max G[M,N]; "
                        "min x; max 0.5; store Y[M,N] }"),
              std::string::npos)
        << text;
    const auto& chain = p.kernels[0].chain;
    EXPECT_EQ(chain[8].kind, ChainOpKind::kMax);
    ASSERT_TRUE(chain[8].tensor.has_value());
    EXPECT_EQ(chain[9].name, "x");
    EXPECT_EQ(chain[10].numbers, std::vector<double>{0.5});
    expect_round_trip(p);
}

TEST(Printer, ScanFlagsRoundTrip) {
    expect_round_trip(parse_ok("program p for \"q\" kernel a = rowwise cumsum(X[M,N]) reverse "
                               "exclusive threads 1024 vec 4 { store Y[M,N] } kernel b = rowwise "
                               "cumprod(X[M,N]) rows_per_block 8 threads 256 { store Z[M,N] }"));
    const Program p = parse_ok("program p for \"q\" kernel a = rowwise cumsum(X[M,N]) reverse "
                               "{ store Y[M,N] }");
    EXPECT_EQ(p.kernels[0].row_op, RowOp::kCumsum);
    EXPECT_TRUE(p.kernels[0].rowwise.reverse);
    EXPECT_FALSE(p.kernels[0].rowwise.exclusive);
    EXPECT_NE(print_canonical(p).find("rowwise cumsum(X[M,N]) "), std::string::npos);
    EXPECT_NE(print_canonical(p).find(" reverse"), std::string::npos) << print_canonical(p);
}

TEST(Printer, NumbersRoundTripExactly) {
    for (double v : {0.1, 1.0 / 3.0, 1e-300, 1.7976931348623157e308, -2.5e-7, 123456789.123, -0.0}) {
        std::string text = format_number(v);
        Program p = parse_ok("program p for \"q\" kernel k = map(X[R]) { mul " + text +
                             "; store Y[R] }");
        ASSERT_EQ(p.kernels.size(), 1u) << text;
        double back = p.kernels[0].chain[0].numbers.at(0);
        EXPECT_EQ(std::memcmp(&back, &v, sizeof v), 0) << text;  // bit-exact, including -0
        expect_round_trip(p);
    }
    EXPECT_EQ(format_number(0.01), "0.01");
    EXPECT_EQ(format_number(20), "20");
}

TEST(Printer, HashIgnoresFormattingCommentsAndKnobOrder) {
    Program a = parse_ok(kProgram);
    Program b = parse_ok(R"(# the same program, reformatted
program   fused   for "fused_f32"   kernel k0=gemm( X[ M , K ] ,W[N,K] ) swizzle 8 raster along_n
  math bf16 schedule cooperative cluster 2x1 tile 128x256x64 stages auto acc f32 splitk 1 {
  add b[N] ; gelu tanh ; clamp -1.50 +2000.0 ; leaky_relu 1e-1 ; cast bf16 ; store T[M,N] ;
  reduce sum over N -> S[M] ; }
kernel k1 = rowwise layer_norm(T[M,N], g[N], be[N]) online threads 128 eps 0.00001 { store Y[M,N] }
kernel k2 = map(Y[M,N]) grid_stride block 128 { mul 0.1; softplus 2 10; store Z[M,N]; }
)");
    EXPECT_EQ(print_canonical(a), print_canonical(b));
    EXPECT_EQ(program_hash(a), program_hash(b));
    EXPECT_EQ(program_hash(a).size(), 64u);
}

TEST(Printer, HashChangesWithAnyKnobOrValue) {
    std::string base(kProgram);
    std::string h = program_hash(parse_ok(base));
    auto changed = [&](std::string_view from, std::string_view to) {
        std::string text = base;
        size_t at = text.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        text.replace(at, from.size(), to);
        return program_hash(parse_ok(text));
    };
    EXPECT_NE(changed("swizzle 8", "swizzle 4"), h);
    EXPECT_NE(changed("tile 128x256x64", "tile 128x128x64"), h);
    EXPECT_NE(changed("swizzle 8", "swizzle 8 splitk 2"), h);
    EXPECT_NE(changed("eps 1e-5", "eps 1e-6"), h);
    EXPECT_NE(changed("eps 1e-5", ""), h);
    EXPECT_NE(changed(" online", ""), h);
    EXPECT_NE(changed("gelu tanh", "gelu erf"), h);
    EXPECT_NE(changed("mul 0.1", "mul 0.10000000000000002"), h);
    EXPECT_EQ(changed("swizzle 8", "swizzle 8 splitk 1"), h);  // the default, written out
}

// The knob tables' defaults are the AST's defaults: printing a default kernel shows them.
TEST(Printer, KnobTableDefaultsMatchAst) {
    for (KernelKind kind : {KernelKind::kGemm, KernelKind::kRowwise, KernelKind::kMap}) {
        Kernel k;
        k.kind = kind;
        for (const KnobSpec& spec : knob_table(kind)) {
            std::optional<KnobValue> v = spec.read(k);
            if (!v) continue;  // optional knobs and flags: not written by default
            std::string shown = v->word;
            for (size_t i = 0; i < v->ints.size(); ++i) shown += (i ? "x" : "") + std::to_string(v->ints[i]);
            EXPECT_EQ(shown, spec.default_text) << spec.name;
            for (size_t i = 0; i < v->ints.size(); ++i) {
                EXPECT_TRUE(spec.domains[i].contains(v->ints[i])) << spec.name;
            }
        }
    }
}

TEST(ReferenceCard, ListsEveryKnobChainOpAndRowOpInFewLines) {
    std::string card = reference_card();
    for (KernelKind kind : {KernelKind::kGemm, KernelKind::kRowwise, KernelKind::kMap,
                            KernelKind::kConv2d, KernelKind::kPool}) {
        for (const KnobSpec& spec : knob_table(kind)) {
            EXPECT_NE(card.find("`" + std::string(spec.name)), std::string::npos) << spec.name;
        }
    }
    for (std::string_view s : {"leaky_relu [slope]", "`mish`", "reduce sum|max|min|mean",
                               "`log_softmax`", "16..256, a multiple of 16", "one of 1, 2, 4, 8",
                               "`tma_ws`, `cooperative`", "32..1024, a multiple of 32"}) {
        EXPECT_NE(card.find(s), std::string::npos) << s;
    }
    // eight kernel kinds (pool joined in session 15; attention, copy and rnn in session 17: 178
    // lines; pool's rows and vec in session 23, attention's mea_tile in session 24) and the
    // index/mask row ops: still about one screen pair for an LLM's context
    EXPECT_LE(std::count(card.begin(), card.end(), '\n'), 188);
}

// The examples in the card are valid programs.
TEST(ReferenceCard, ExamplesParse) {
    std::string card = reference_card();
    size_t at = 0;
    int examples = 0;
    while ((at = card.find("```\nprogram", at)) != std::string::npos) {
        size_t end = card.find("```", at + 3);
        std::string text = card.substr(at + 4, end - at - 4);
        at = end;
        if (text.find(":=") != std::string::npos) continue;  // the grammar block
        auto p = parse_program(text, "card.kf");
        EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
        ++examples;
    }
    EXPECT_EQ(examples, 5);
}

}  // namespace
}  // namespace kforge::dsl
