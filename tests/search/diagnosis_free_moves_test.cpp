// The diagnosis proposer prefers free moves (issue 27): where the diagnosis (or a GEMM's shape)
// points at what a launch knob fixes - a tail, too few CTAs for the SMs, L2 locality - the
// launch-knob variants come first, marked as costing no compile; the rest follow.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "codegen/launch_knobs.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "search/knob_space.h"
#include "search/launch_moves.h"
#include "search/proposers.h"
#include "sol/device.h"

namespace kforge::search {
namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

Diagnosis one_kernel(Bottleneck b) {
    Diagnosis d;
    KernelDiagnosis k;
    k.kernel = "kforge_k0";
    k.kind = dsl::KernelKind::kGemm;
    k.bottleneck = b;
    d.kernels.push_back(k);
    return d;
}

// gemm_large_k_bf16 (M = N = 1024, K = 131072: 64 output tiles of 128x128) as the one timed
// candidate of a context, with `split_k` and the diagnosis `d`.
struct LargeK {
    Problem problem;
    dsl::Program start;
    Bounds bounds;
    CandidateView view;
    ProposalContext ctx;

    LargeK(int split_k, Diagnosis d) {
        const std::string base = std::string(KFORGE_SOURCE_DIR) + "/problems/gemm_large_k_bf16";
        auto p = load_problem(base + ".json");
        EXPECT_TRUE(p) << p.error().to_string();
        problem = *p;
        auto s = dsl::parse_program(slurp(base + ".kf"), "start");
        EXPECT_TRUE(s) << s.error().to_string();
        start = *s;
        start.kernels[0].gemm.split_k = split_k;
        bounds.kind = BoundKind::kCompute;
        bounds.device = "h200";
        view.program_text = dsl::print_canonical(start);
        view.program_hash = dsl::program_hash(start);
        view.median_ns = 800e3;
        view.fraction_of_sol = 0.5;
        view.diagnosis = std::move(d);
        ctx.problem = &problem;
        ctx.bounds = &bounds;
        ctx.device_key = "h200";
        ctx.count = 10;
        ctx.best = {view};
        ctx.seen_hashes = {view.program_hash};
    }
    bool is_free(const Proposal& p) const {
        auto prog = dsl::parse_program(p.program_text, "proposal");
        EXPECT_TRUE(prog) << p.move;
        return prog && is_free_move(start, *prog);
    }
};

// The index of the first proposal that needs a compile (props.size() when none does), after
// checking that every proposal before it is free and marked so, and none after it is free.
size_t free_prefix(const LargeK& f, const std::vector<Proposal>& props) {
    size_t i = 0;
    while (i < props.size() && f.is_free(props[i])) {
        EXPECT_EQ(props[i].move.rfind("free: ", 0), 0u) << props[i].move;
        EXPECT_NE(props[i].move.find("no compile"), std::string::npos) << props[i].move;
        ++i;
    }
    for (size_t j = i; j < props.size(); ++j) {
        EXPECT_FALSE(f.is_free(props[j])) << "a free move after a costly one: " << props[j].move;
        EXPECT_NE(props[j].move.rfind("free: ", 0), 0u) << props[j].move;
    }
    return i;
}

TEST(DiagnosisFreeMoves, ATailDiagnosisGivesLaunchKnobVariantsFirst) {
    // splitk 2: compiled with the stream-K scheduler, so split factors and stream-K are free
    LargeK f(2, one_kernel(Bottleneck::kLaunchTailBound));
    auto props = make_diagnosis_proposer()->propose(f.ctx);
    ASSERT_GE(props.size(), 4u);
    const size_t n_free = free_prefix(f, props);
    ASSERT_GE(n_free, 2u) << props[0].move;
    EXPECT_LT(n_free, props.size()) << "moves that need a compile follow (tile down, ...)";
    bool tail_reason = false, split = false;
    for (size_t i = 0; i < n_free; ++i) {
        tail_reason = tail_reason || props[i].move.find("launch_tail_bound") != std::string::npos;
        split = split || props[i].move.find("splitk 2 -> ") != std::string::npos;
    }
    EXPECT_TRUE(tail_reason) << props[0].move;
    EXPECT_TRUE(split) << props[0].move;

    // launch knobs baked into the source (the old build): nothing is free, nothing marked
    codegen::set_launch_knobs_baked(true);
    auto baked = make_diagnosis_proposer()->propose(f.ctx);
    codegen::set_launch_knobs_baked(false);
    ASSERT_FALSE(baked.empty());
    for (const Proposal& p : baked) EXPECT_NE(p.move.rfind("free: ", 0), 0u) << p.move;
}

TEST(DiagnosisFreeMoves, AnL2DiagnosisGivesRasterAndSwizzleFirst) {
    // splitk 1: the persistent scheduler; raster and swizzle are still launch knobs
    LargeK f(1, one_kernel(Bottleneck::kL2Bound));
    auto props = make_diagnosis_proposer()->propose(f.ctx);
    const size_t n_free = free_prefix(f, props);
    ASSERT_GE(n_free, 2u);
    for (size_t i = 0; i < n_free; ++i)
        EXPECT_TRUE(props[i].move.find("swizzle") != std::string::npos ||
                    props[i].move.find("raster") != std::string::npos)
            << props[i].move;
    // the cluster, the first move of the l2 class's table, costs a compile: it comes after
    bool cluster_after = false;
    for (size_t i = n_free; i < props.size(); ++i)
        cluster_after = cluster_after || props[i].move.find("cluster") != std::string::npos;
    EXPECT_TRUE(cluster_after);
}

TEST(DiagnosisFreeMoves, TheShapeAsksForSplitKWithoutAProfile) {
    LargeK f(1, Diagnosis{});
    const int sms = find_device("h200")->sm_count;
    auto w = gemm_waves(f.start.kernels[0], f.problem, sms);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->tiles, 64);
    EXPECT_EQ(w->k, 131072);
    std::vector<DirectedMove> moves = gemm_shape_moves(f.start, f.problem, sms);
    bool splitk = false, stream_k = false;
    for (const DirectedMove& m : moves) {
        splitk = splitk || (m.knob == "splitk" && m.direction > 0);
        stream_k = stream_k || m.word == "stream_k";
        EXPECT_NE(m.reason.find("64 output tiles for " + std::to_string(sms) + " SMs"),
                  std::string::npos) << m.reason;
    }
    EXPECT_TRUE(splitk);
    EXPECT_TRUE(stream_k);
    // the proposer makes them with no diagnosis at all; from splitk 2 they are free and first
    LargeK g(2, Diagnosis{});
    g.view.fraction_of_sol.reset();
    g.ctx.best = {g.view};
    auto props = make_diagnosis_proposer()->propose(g.ctx);
    ASSERT_FALSE(props.empty());
    EXPECT_GE(free_prefix(g, props), 1u);
    EXPECT_NE(props[0].move.find("output tiles"), std::string::npos) << props[0].move;

    // a square 4096 GEMM fills its waves: nothing to ask
    auto sq = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/gemm_bf16_4096.json");
    auto sq_prog = dsl::parse_program(
        slurp(std::string(KFORGE_SOURCE_DIR) + "/problems/gemm_bf16_4096.kf"), "sq");
    ASSERT_TRUE(sq && sq_prog);
    EXPECT_TRUE(gemm_shape_moves(*sq_prog, *sq, sms).empty());
}

}  // namespace
}  // namespace kforge::search
