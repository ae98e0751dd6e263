// The diagnosis crosses from profile/ to search/ as a typed value (diagnosis/diagnosis.h): the
// classifier's diagnosis of a profile is what the diagnosis proposer reads, and both views of
// the one moves table (diagnosis/moves.h) agree - the moves a kernel's diagnosis advises are the
// knob moves the proposer makes on kernels of that kind.
#include <gtest/gtest.h>

#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "profile/diagnose.h"
#include "search/proposers.h"

namespace kforge::search {
namespace {

profile::KernelProfile dram_busy_kernel() {
    profile::KernelProfile k;
    k.name = "kforge_k0";
    k.grid = {1024, 1, 1};
    k.block = {256, 1, 1};
    k.metrics["launch__grid_size"] = 1024;
    k.metrics["sm__warps_active.avg.pct_of_peak_sustained_active"] = 80;
    k.metrics["dram__throughput.avg.pct_of_peak_sustained_elapsed"] = 85;
    return k;
}

// (kind knob direction word) of the knob moves, reasons aside.
std::vector<std::string> knob_moves(const std::vector<DirectedMove>& moves, dsl::KernelKind kind) {
    std::vector<std::string> out;
    for (const DirectedMove& m : moves)
        if (m.is_knob_move() && m.kind == kind)
            out.push_back(std::string(dsl::to_string(m.kind)) + " " + m.knob + " " +
                          std::to_string(m.direction) + " " + m.word);
    return out;
}

// The example: profile/ advised tile and swizzle moves for a DRAM-bound GEMM while the
// search's own table moved no GEMM knob. Now the proposer makes exactly what the diagnosis says.
TEST(DiagnosisRoundTrip, ADramBoundGemmGetsTheSameMovesFromBothViews) {
    KernelDiagnosis k = profile::diagnose_kernel(dram_busy_kernel(),
                                                 {dsl::KernelKind::kGemm, 0.4, 132});
    ASSERT_EQ(k.bottleneck, Bottleneck::kDramBound);
    ASSERT_FALSE(k.stop);
    CandidateView v;
    v.diagnosis.kernels = {k};
    const std::vector<DirectedMove> search = diagnosis_moves(v, nullptr);
    const auto advised = knob_moves(k.moves, dsl::KernelKind::kGemm);
    EXPECT_EQ(advised, (std::vector<std::string>{"gemm tile 1 ", "gemm swizzle 1 "}));
    EXPECT_EQ(knob_moves(search, dsl::KernelKind::kGemm), advised);
    for (const DirectedMove& m : search)
        EXPECT_EQ(m.reason.rfind("dram_bound: ", 0), 0u) << m.reason;
}

// Every class and kind: the diagnosis's advice for a kernel of that kind and the proposer's
// moves on kernels of that kind are the same knob moves, in the same order.
TEST(DiagnosisRoundTrip, BothViewsAgreeForEveryClassAndKind) {
    for (Bottleneck b : {Bottleneck::kDramBound, Bottleneck::kL2Bound,
                         Bottleneck::kTensorComputeBound, Bottleneck::kSimtComputeBound,
                         Bottleneck::kLatencyBoundLowOccupancy, Bottleneck::kLaunchTailBound,
                         Bottleneck::kSharedMemoryBound, Bottleneck::kSpillBound,
                         Bottleneck::kUncoalescedMemory})
        for (dsl::KernelKind kind : {dsl::KernelKind::kGemm, dsl::KernelKind::kRowwise,
                                     dsl::KernelKind::kMap}) {
            SCOPED_TRACE(std::string(to_string(b)) + " " + std::string(dsl::to_string(kind)));
            profile::DiagnoseContext ctx{kind, 0.4, 132};
            KernelDiagnosis k;
            k.bottleneck = b;
            k.kind = kind;
            k.moves = profile::advise_moves(b, ctx).moves;
            CandidateView v;
            v.diagnosis.kernels = {k};
            EXPECT_EQ(knob_moves(diagnosis_moves(v, nullptr), kind), knob_moves(k.moves, kind));
        }
}

// End to end on a GEMM: the proposer, given the profile's diagnosis, proposes the tile and the
// swizzle moves, each program legal.
TEST(DiagnosisRoundTrip, TheProposerMovesTheGemmTheDiagnosisNames) {
    auto problem = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/gemm_bf16_4096.json");
    ASSERT_TRUE(problem) << problem.error().to_string();
    auto start = dsl::parse_program(
        "program p for \"gemm_bf16_4096\"\nkernel k0 = gemm(A[M,K], B[K,N]) tile 128x128x64 "
        "cluster 1x1 schedule cooperative math bf16 swizzle 1\n    { cast bf16; store C[M,N] }\n",
        "start");
    ASSERT_TRUE(start) << start.error().to_string();
    ProposalContext ctx;
    ctx.problem = &*problem;
    ctx.count = 8;
    CandidateView v;
    v.program_text = dsl::print_canonical(*start);
    v.program_hash = dsl::program_hash(*start);
    v.median_ns = 1e6;
    v.diagnosis.kernels = {
        profile::diagnose_kernel(dram_busy_kernel(), {dsl::KernelKind::kGemm, 0.4, 132})};
    ctx.best = {v};
    ctx.seen_hashes = {v.program_hash};
    auto props = make_diagnosis_proposer()->propose(ctx);
    bool tile = false, swizzle = false;
    for (const Proposal& p : props) {
        tile = tile || p.move.find("tile 128x128x64 -> ") != std::string::npos;
        swizzle = swizzle || p.move.find("swizzle 1 -> 2") != std::string::npos;
        EXPECT_NE(p.move.find("dram_bound: "), std::string::npos) << p.move;
    }
    EXPECT_TRUE(tile);
    EXPECT_TRUE(swizzle);
}

}  // namespace
}  // namespace kforge::search
