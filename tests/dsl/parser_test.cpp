// Parser unit tests: every construct of docs/language.md, every knob, chain op and row op.
#include <gtest/gtest.h>

#include "dsl/chain_ops.h"
#include "dsl/knobs.h"
#include "dsl/lexer.h"
#include "dsl/parser.h"

namespace kforge::dsl {
namespace {

Program parse_ok(std::string_view text) {
    auto p = parse_program(text, "t.kf");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Program{};
}

Kernel gemm_with(const std::string& knobs) {
    Program p = parse_ok("program p for \"x\"\nkernel k = gemm(A[M,K], B[N,K]) " + knobs +
                         " { store C[M,N] }");
    return p.kernels.empty() ? Kernel{} : p.kernels[0];
}

Kernel rowwise_with(const std::string& op_and_args, const std::string& knobs) {
    Program p = parse_ok("program p for \"x\"\nkernel k = rowwise " + op_and_args + " " + knobs +
                         " { store Y[M,N] }");
    return p.kernels.empty() ? Kernel{} : p.kernels[0];
}

Kernel map_with(const std::string& knobs, const std::string& chain = "store Y[R,C]") {
    Program p = parse_ok("program p for \"x\"\nkernel k = map(X[R,C]) " + knobs + " { " + chain + " }");
    return p.kernels.empty() ? Kernel{} : p.kernels[0];
}

TEST(Lexer, TileShapeLexesAsIntsAndTimes) {
    auto toks = lex("tile 128x256x64 x2 -1.5e-3 +7 -> \"s\"", "t.kf");
    ASSERT_TRUE(toks.ok());
    std::vector<TokenKind> kinds;
    for (const Token& t : *toks) kinds.push_back(t.kind);
    using K = TokenKind;
    EXPECT_EQ(kinds, (std::vector<K>{K::kIdent, K::kInt, K::kTimes, K::kInt, K::kTimes, K::kInt,
                                     K::kIdent, K::kFloat, K::kInt, K::kArrow, K::kString, K::kEnd}));
    EXPECT_EQ((*toks)[5].text, "64");
    EXPECT_EQ((*toks)[6].text, "x2");
    EXPECT_EQ((*toks)[10].text, "s");
    EXPECT_EQ((*toks)[7].loc.col, 20);
}

TEST(Lexer, CommentsAndLinesTracked) {
    auto toks = lex("# head\n  a # tail ü\n\tb", "t.kf");
    ASSERT_TRUE(toks.ok());
    ASSERT_EQ(toks->size(), 3u);
    EXPECT_EQ((*toks)[0].loc, (SourceLoc{2, 3}));
    EXPECT_EQ((*toks)[1].loc, (SourceLoc{3, 2}));
}

TEST(Parser, ProgramHeaderAndGemmDefaults) {
    Program p = parse_ok("program gemm_bias for \"gemm_bf16_4096\"\n"
                         "kernel k0 = gemm(X[M,K], W[N,K]) { store Y[M,N] }");
    EXPECT_EQ(p.name, "gemm_bias");
    EXPECT_EQ(p.problem, "gemm_bf16_4096");
    ASSERT_EQ(p.kernels.size(), 1u);
    const Kernel& k = p.kernels[0];
    EXPECT_EQ(k.kind, KernelKind::kGemm);
    EXPECT_EQ(k.loc, (SourceLoc{2, 1}));
    ASSERT_EQ(k.args.size(), 2u);
    EXPECT_EQ(k.args[0].name, "X");
    EXPECT_EQ(k.args[1].dims, (std::vector<std::string>{"N", "K"}));
    EXPECT_EQ(k.args[1].loc, (SourceLoc{2, 26}));
    EXPECT_EQ(k.gemm, GemmConfig{});
    EXPECT_TRUE(k.knob_locs.empty());
}

TEST(Parser, EveryGemmKnob) {
    Kernel k = gemm_with("tile 256x240x128 cluster 2x1 stages 5 schedule pingpong math tf32x3 "
                         "acc f16 raster along_m swizzle 8 splitk 16");
    EXPECT_EQ(k.gemm.tile_m, 256);
    EXPECT_EQ(k.gemm.tile_n, 240);
    EXPECT_EQ(k.gemm.tile_k, 128);
    EXPECT_EQ(k.gemm.cluster_m, 2);
    EXPECT_EQ(k.gemm.cluster_n, 1);
    EXPECT_EQ(k.gemm.stages, 5);
    EXPECT_EQ(k.gemm.schedule, Schedule::kPingpong);
    EXPECT_EQ(k.gemm.math, MathMode::kTf32x3);
    EXPECT_EQ(k.gemm.acc, DType::kF16);
    EXPECT_EQ(k.gemm.raster, Raster::kAlongM);
    EXPECT_EQ(k.gemm.swizzle, 8);
    EXPECT_EQ(k.gemm.split_k, 16);
    ASSERT_EQ(k.knob_locs.size(), 9u);
    EXPECT_EQ(k.knob_locs[0].first, "tile");
    EXPECT_EQ(k.knob_locs[0].second, (SourceLoc{2, 33}));
    EXPECT_EQ(k.knob_locs[8].first, "splitk");
    EXPECT_EQ(gemm_with("stages auto").gemm.stages, 0);
}

TEST(Parser, EveryGemmWordKnobValue) {
    int words = 0;
    for (const KnobSpec& spec : knob_table(KernelKind::kGemm)) {
        for (std::string_view w : spec.words) {
            Kernel k = gemm_with(std::string(spec.name) + " " + std::string(w));
            auto v = spec.read(k);
            ASSERT_TRUE(v.has_value());
            EXPECT_EQ(v->word, w) << spec.name;
            ++words;
        }
    }
    EXPECT_EQ(words, 5 + 6 + 2 + 3);  // schedule, math, acc, raster
}

TEST(Parser, EveryRowwiseKnob) {
    Kernel k = rowwise_with("group_norm(X[M,N], g[N], b[N])",
                            "over N eps 1e-6 groups 32 rows_per_block 4 threads 512 vec 8 "
                            "passes 2 online split 4");
    EXPECT_EQ(k.kind, KernelKind::kRowwise);
    EXPECT_EQ(k.row_op, RowOp::kGroupNorm);
    EXPECT_EQ(k.args.size(), 3u);
    EXPECT_EQ(k.over, "N");
    EXPECT_EQ(k.eps, 1e-6);
    EXPECT_EQ(k.groups, 32);
    EXPECT_EQ(k.rowwise.rows_per_block, 4);
    EXPECT_EQ(k.rowwise.threads, 512);
    EXPECT_EQ(k.rowwise.vec, 8);
    EXPECT_EQ(k.rowwise.passes, 2);
    EXPECT_TRUE(k.rowwise.online);
    EXPECT_EQ(k.rowwise.split, 4);
    // a dim the tensor writes as its extent is named by it (an imported view's X[B,100,K])
    EXPECT_EQ(rowwise_with("sum(X[B,100,K])", "over 100").over, "100");
    Kernel d = rowwise_with("softmax(X[M,N])", "");
    EXPECT_EQ(d.rowwise, RowwiseConfig{});
    EXPECT_TRUE(d.over.empty());
    EXPECT_FALSE(d.eps.has_value());
    EXPECT_FALSE(d.groups.has_value());
}

TEST(Parser, EveryRowOp) {
    for (const RowOpSpec& r : row_op_table()) {
        std::string args = "X[M,N]";
        if (r.max_args >= 2) args += ", w[N]";
        if (r.max_args >= 3) args += ", b[N]";
        Kernel k = rowwise_with(std::string(r.name) + "(" + args + ")", "");
        EXPECT_EQ(k.row_op, r.op) << r.name;
        EXPECT_EQ(to_string(k.row_op), r.name);
        EXPECT_EQ(k.args.size(), static_cast<size_t>(r.max_args));
    }
}

TEST(Parser, EveryMapKnob) {
    Kernel k = map_with("block 1024 vec 2 items 16 grid_stride");
    EXPECT_EQ(k.kind, KernelKind::kMap);
    EXPECT_EQ(k.map.block, 1024);
    EXPECT_EQ(k.map.vec, 2);
    EXPECT_EQ(k.map.items_per_thread, 16);
    EXPECT_TRUE(k.map.grid_stride);
    EXPECT_EQ(map_with("").map, MapConfig{});
}

TEST(Parser, EveryChainOp) {
    for (const ChainOpSpec& s : chain_op_table()) {
        std::string stmt(s.name);
        switch (s.args) {
            case ChainArgs::kTensorOrNumber: stmt += " b[C]"; break;
            case ChainArgs::kTwoNumbers: stmt += " -1 2.5"; break;
            case ChainArgs::kOneNumber: stmt += " 0.5"; break;
            case ChainArgs::kDType: stmt += " bf16"; break;
            case ChainArgs::kTensor: stmt += " T[R,C]"; break;
            case ChainArgs::kReduce: stmt += " mean over C -> S[R]"; break;
            case ChainArgs::kName: stmt += " t"; break;
            case ChainArgs::kMaskThenOperand: stmt += " M[R,C] -inf"; break;
            default: break;
        }
        Kernel k = map_with("", stmt + "; store Y[R,C]");
        ASSERT_EQ(k.chain.size(), 2u) << stmt;
        EXPECT_EQ(k.chain[0].kind, s.kind) << stmt;
        EXPECT_EQ(to_string(k.chain[0].kind), s.name);
        EXPECT_EQ(k.chain[0].loc, (SourceLoc{2, 27}));
    }
}

TEST(Parser, ChainOpArguments) {
    Kernel k = map_with("", "add 1.5; mul alpha[]; sub c[R]; div 2; leaky_relu; leaky_relu 0.2; "
                            "gelu; gelu tanh; softplus; softplus 2 10; clamp -1 1; min 0; max -3e2; "
                            "cast f16; reduce max over C -> S[R]; store Y[R,C];");
    ASSERT_EQ(k.chain.size(), 16u);
    EXPECT_EQ(k.chain[0].numbers, (std::vector<double>{1.5}));
    EXPECT_FALSE(k.chain[0].tensor.has_value());
    EXPECT_EQ(k.chain[1].tensor->name, "alpha");
    EXPECT_TRUE(k.chain[1].tensor->dims.empty());
    EXPECT_EQ(k.chain[2].tensor->dims, (std::vector<std::string>{"R"}));
    EXPECT_EQ(k.chain[3].numbers, (std::vector<double>{2}));
    EXPECT_EQ(k.chain[4].numbers, (std::vector<double>{0.01}));
    EXPECT_EQ(k.chain[5].numbers, (std::vector<double>{0.2}));
    EXPECT_EQ(k.chain[6].gelu, GeluApprox::kErf);
    EXPECT_EQ(k.chain[7].gelu, GeluApprox::kTanh);
    EXPECT_EQ(k.chain[8].numbers, (std::vector<double>{1, 20}));
    EXPECT_EQ(k.chain[9].numbers, (std::vector<double>{2, 10}));
    EXPECT_EQ(k.chain[10].numbers, (std::vector<double>{-1, 1}));
    EXPECT_EQ(k.chain[12].numbers, (std::vector<double>{-300}));
    EXPECT_EQ(k.chain[13].cast_to, DType::kF16);
    EXPECT_EQ(k.chain[14].reduce, ReduceKind::kMax);
    EXPECT_EQ(k.chain[14].reduce_over, "C");
    EXPECT_EQ(k.chain[14].tensor->name, "S");
    EXPECT_EQ(k.chain[15].kind, ChainOpKind::kStore);
}

TEST(Parser, MultiKernelProgramWithIntermediate) {
    Program p = parse_ok(R"(program linear_logsumexp for "linear_logsumexp_f32"

kernel k0 = gemm(X[M,K], W[N,K]) tile 128x128x32 schedule cooperative math tf32x3
    { add b[N]; store T[M,N] }                       # T: an intermediate, f32
kernel k1 = rowwise logsumexp(T[M,N]) threads 256 vec 4 online
    { store Y[M] }
)");
    ASSERT_EQ(p.kernels.size(), 2u);
    EXPECT_EQ(p.kernels[0].chain[1].tensor->name, "T");
    EXPECT_EQ(p.kernels[1].args[0].name, "T");
    EXPECT_EQ(p.kernels[1].row_op, RowOp::kLogsumexp);
    EXPECT_EQ(p.kernels[1].loc, (SourceLoc{5, 1}));
}

TEST(Parser, BatchedGemmAndIntegerDims) {
    Program p = parse_ok("program bmm for \"bmm_bf16\"\n"
                         "kernel k0 = gemm(A[B,M,K], Bm[B,K,N]) { store C[B,M,N]; store D[1,007] }");
    const Kernel& k = p.kernels[0];
    EXPECT_EQ(k.args[0].dims, (std::vector<std::string>{"B", "M", "K"}));
    EXPECT_EQ(k.args[1].dims, (std::vector<std::string>{"B", "K", "N"}));
    EXPECT_EQ(k.chain[1].tensor->dims, (std::vector<std::string>{"1", "7"}));  // normalized
}

TEST(Parser, KnobsInAnyOrderSameMeaning) {
    Kernel a = gemm_with("swizzle 4 tile 64x64x32 splitk 2");
    Kernel b = gemm_with("splitk 2 tile 64x64x32 swizzle 4");
    EXPECT_EQ(a.gemm, b.gemm);
}

}  // namespace
}  // namespace kforge::dsl
