// The moves table (diagnosis/moves.h): every move names a knob of its kernel kind with a value
// the language has, and the views by kind are the table filtered.
#include <algorithm>

#include <gtest/gtest.h>

#include "diagnosis/moves.h"
#include "dsl/knobs.h"

namespace kforge {
namespace {

const Bottleneck kClasses[] = {
    Bottleneck::kDramBound, Bottleneck::kL2Bound, Bottleneck::kTensorComputeBound,
    Bottleneck::kSimtComputeBound, Bottleneck::kLatencyBoundLowOccupancy,
    Bottleneck::kLaunchTailBound, Bottleneck::kSharedMemoryBound, Bottleneck::kSpillBound,
    Bottleneck::kUncoalescedMemory, Bottleneck::kUnknown};

void expect_a_knob_move_of_the_language(const DirectedMove& m) {
    SCOPED_TRACE(std::string(dsl::to_string(m.kind)) + " " + move_text(m));
    EXPECT_FALSE(m.reason.empty());
    if (!m.is_knob_move()) return;  // advice: text only
    const dsl::KnobSpec* spec = dsl::find_knob(m.kind, m.knob);
    ASSERT_NE(spec, nullptr) << "no knob " << m.knob;
    if (!m.word.empty()) {
        EXPECT_EQ(m.direction, 0);
        const bool auto_int = spec->kind == dsl::KnobValueKind::kIntOrAuto && m.word == "auto";
        EXPECT_TRUE(auto_int || std::find(spec->words.begin(), spec->words.end(), m.word) !=
                                    spec->words.end())
            << m.word << " is not a value of " << m.knob;
    } else {
        EXPECT_TRUE(m.direction == 1 || m.direction == -1);
        EXPECT_TRUE(spec->kind == dsl::KnobValueKind::kInts ||
                    spec->kind == dsl::KnobValueKind::kIntOrAuto ||
                    spec->kind == dsl::KnobValueKind::kFlag)
            << m.knob << " cannot be stepped";
    }
}

TEST(MovesTable, EveryMoveIsAKnobOfItsKindOrAdvice) {
    for (Bottleneck b : kClasses)
        for (const DirectedMove& m : moves_for(b)) expect_a_knob_move_of_the_language(m);
    for (BoundKind k : {BoundKind::kMemory, BoundKind::kCompute})
        for (const DirectedMove& m : roofline_moves(k)) expect_a_knob_move_of_the_language(m);
}

TEST(MovesTable, TheViewOfOneKindIsTheTableFiltered) {
    for (Bottleneck b : kClasses)
        for (dsl::KernelKind kind : {dsl::KernelKind::kGemm, dsl::KernelKind::kRowwise,
                                     dsl::KernelKind::kMap, dsl::KernelKind::kConv2d}) {
            std::vector<std::string> want;
            for (const DirectedMove& m : moves_for(b))
                if (m.kind == kind) want.push_back(move_text(m));
            std::vector<std::string> got;
            for (const DirectedMove& m : moves_for(b, kind)) got.push_back(move_text(m));
            EXPECT_EQ(got, want) << to_string(b);
        }
    EXPECT_TRUE(moves_for(Bottleneck::kUnknown).empty());
}

// The table's answer to the disagreement of issue 22: a DRAM-bound GEMM moves its tile up and
// its raster swizzle wider (and is advised to fuse its consumers), where the search's own table
// had moved no GEMM knob.
TEST(MovesTable, ADramBoundGemmMovesTileAndSwizzle) {
    std::vector<std::string> knobs;
    for (const DirectedMove& m : moves_for(Bottleneck::kDramBound, dsl::KernelKind::kGemm))
        if (m.is_knob_move()) knobs.push_back(m.knob + (m.direction > 0 ? " up" : " down"));
    EXPECT_EQ(knobs, (std::vector<std::string>{"tile up", "swizzle up"}));
}

// A GEMM runs one CTA per SM by design: low occupancy deepens its pipeline, never thins it.
TEST(MovesTable, LowOccupancyGemmGetsMoreStages) {
    for (const DirectedMove& m :
         moves_for(Bottleneck::kLatencyBoundLowOccupancy, dsl::KernelKind::kGemm))
        if (m.knob == "stages") EXPECT_EQ(m.direction, 1);
}

// kforge's WMMA attention (5% of the tensor peak measured on the H100) moves to CUTLASS's FMHA
// where it is bound by shared memory, the tensor pipe or latency (the checker refuses the move
// where the FMHA does not apply).
TEST(MovesTable, AttentionMovesToCutlassFmha) {
    for (Bottleneck b : {Bottleneck::kSharedMemoryBound, Bottleneck::kTensorComputeBound,
                         Bottleneck::kLatencyBoundLowOccupancy}) {
        bool fmha = false;
        for (const DirectedMove& m : moves_for(b, dsl::KernelKind::kAttention))
            fmha |= m.knob == "impl" && m.word == "cutlass_fmha";
        EXPECT_TRUE(fmha) << to_string(b);
    }
}

TEST(MovesTable, Text) {
    EXPECT_EQ(move_text({dsl::KernelKind::kRowwise, "vec", 1, "", "wider"}), "vec up (wider)");
    EXPECT_EQ(move_text({dsl::KernelKind::kGemm, "tile", -1, "", ""}), "tile down");
    EXPECT_EQ(move_text({dsl::KernelKind::kMap, "grid_stride", 1, "", "r"}), "grid_stride on (r)");
    EXPECT_EQ(move_text({dsl::KernelKind::kGemm, "schedule", 0, "stream_k", "r"}),
              "schedule stream_k (r)");
    EXPECT_EQ(move_text({dsl::KernelKind::kGemm, "", 0, "", "fuse it"}), "fuse it");
}

}  // namespace
}  // namespace kforge
