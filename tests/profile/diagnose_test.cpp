// The classifier, table-driven over fixtures/expected_classes.txt (the flawed-kernel set as ncu
// recorded it on the H200, plus synthetic cases), plus the fallback and the text/JSON forms.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "profile/diagnose.h"

namespace kforge::profile {
namespace {

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(Diagnose, EveryFixtureKernelGetsItsExpectedClass) {
    const std::string dir = std::string(KFORGE_TEST_DATA_DIR) + "/fixtures/";
    std::istringstream table(read(dir + "expected_classes.txt"));
    int checked = 0;
    for (std::string line; std::getline(table, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream row(line);
        std::string file, kernel, expected;
        row >> file >> kernel >> expected;
        SCOPED_TRACE(line);
        ASSERT_TRUE(bottleneck_from_string(expected)) << "unknown class " << expected;
        auto ks = parse_ncu_csv(read(dir + file));
        ASSERT_TRUE(ks.ok()) << file << ": " << ks.error().to_string();
        const std::vector<KernelProfile> reps = representative_launches(*ks);
        const KernelProfile* k = nullptr;
        for (const KernelProfile& p : reps)
            if (p.name.find(kernel) != std::string::npos) k = &p;
        ASSERT_NE(k, nullptr) << "no kernel " << kernel << " in " << file;
        KernelDiagnosis d = diagnose_kernel(*k, {});
        EXPECT_EQ(to_string(d.bottleneck), expected) << d.summary;
        EXPECT_FALSE(d.evidence.empty());
        EXPECT_FALSE(d.moves.empty()) << d.summary;
        ++checked;
    }
    EXPECT_GE(checked, 13);
}

TEST(Diagnose, NamesRoundTrip) {
    for (Bottleneck b : {Bottleneck::kDramBound, Bottleneck::kL2Bound,
                         Bottleneck::kTensorComputeBound, Bottleneck::kSimtComputeBound,
                         Bottleneck::kLatencyBoundLowOccupancy, Bottleneck::kLaunchTailBound,
                         Bottleneck::kSharedMemoryBound, Bottleneck::kSpillBound,
                         Bottleneck::kUncoalescedMemory, Bottleneck::kUnknown})
        EXPECT_EQ(bottleneck_from_string(to_string(b)), b);
    EXPECT_FALSE(bottleneck_from_string("memory_bound"));
}

KernelProfile busy(const std::string& metric, double pct) {
    KernelProfile k;
    k.name = "kforge_k0";
    k.grid = {1024, 1, 1};
    k.block = {256, 1, 1};
    k.metrics["launch__grid_size"] = 1024;
    k.metrics["sm__warps_active.avg.pct_of_peak_sustained_active"] = 80;
    k.metrics[metric] = pct;
    return k;
}

TEST(Diagnose, UnitsAboveThresholdDecideAndMovesFollowTheKind) {
    DiagnoseContext rowwise{dsl::KernelKind::kRowwise, 0.4, 132};
    auto l2 = diagnose_kernel(busy("lts__throughput.avg.pct_of_peak_sustained_elapsed", 75), rowwise);
    EXPECT_EQ(l2.bottleneck, Bottleneck::kL2Bound);
    auto simt = diagnose_kernel(busy("sm__throughput.avg.pct_of_peak_sustained_elapsed", 88),
                                {dsl::KernelKind::kGemm, 0.3, 132});
    EXPECT_EQ(simt.bottleneck, Bottleneck::kSimtComputeBound);
    EXPECT_EQ(simt.moves.front().knob, "math");
    EXPECT_EQ(simt.moves.front().word, "tf32x3");
    auto dram = diagnose_kernel(busy("dram__throughput.avg.pct_of_peak_sustained_elapsed", 70),
                                rowwise);
    EXPECT_EQ(move_text(dram.moves.front()), "vec up (wider vector accesses)");
    for (const DirectedMove& m : dram.moves) EXPECT_EQ(m.kind, dsl::KernelKind::kRowwise);
    auto near = diagnose_kernel(busy("dram__throughput.avg.pct_of_peak_sustained_elapsed", 92),
                                {dsl::KernelKind::kRowwise, 0.93, 132});
    EXPECT_TRUE(near.stop);
    EXPECT_TRUE(near.moves.empty());
    ASSERT_EQ(move_lines(near).size(), 1u);
    EXPECT_EQ(move_lines(near).front().rfind("stop", 0), 0u);
    auto idle = diagnose_kernel(busy("dram__throughput.avg.pct_of_peak_sustained_elapsed", 10), {});
    EXPECT_EQ(idle.bottleneck, Bottleneck::kUnknown);
}

TEST(Diagnose, FractionalLastWaveIsATail) {
    KernelProfile k = busy("dram__throughput.avg.pct_of_peak_sustained_elapsed", 70);
    k.metrics["launch__waves_per_multiprocessor"] = 1.1;
    EXPECT_EQ(diagnose_kernel(k, {}).bottleneck, Bottleneck::kLaunchTailBound);
    k.metrics["launch__waves_per_multiprocessor"] = 1.9;
    EXPECT_EQ(diagnose_kernel(k, {}).bottleneck, Bottleneck::kDramBound);
}

TEST(Diagnose, FallbackFromPtxasAndSol) {
    FallbackInput in;
    in.resources.name = "kforge_k0";
    in.resources.registers = 255;
    in.resources.spill_stores_bytes = 64;
    in.block_threads = 256;
    in.grid_blocks = 4096;
    DiagnoseContext ctx{dsl::KernelKind::kRowwise, 0.5, 132};
    KernelDiagnosis spill = diagnose_fallback(in, ctx);
    EXPECT_EQ(spill.bottleneck, Bottleneck::kSpillBound);
    EXPECT_FALSE(spill.from_profile);
    EXPECT_EQ(spill.kind, dsl::KernelKind::kRowwise);
    EXPECT_EQ(move_text(spill.moves.front()), "rows_per_block down (fewer rows per block)");

    in.resources.spill_stores_bytes = 0;
    in.resources.registers = 32;
    in.grid_blocks = 16;
    EXPECT_EQ(diagnose_fallback(in, ctx).bottleneck, Bottleneck::kLaunchTailBound);
    in.grid_blocks = 4096;
    in.block_threads = 64;
    in.resources.registers = 255;  // 64 threads x 255 regs: 4 blocks -> 8 of 64 warps
    EXPECT_EQ(diagnose_fallback(in, ctx).bottleneck, Bottleneck::kLatencyBoundLowOccupancy);
    in.resources.registers = 32;
    in.block_threads = 256;
    EXPECT_EQ(diagnose_fallback(in, ctx).bottleneck, Bottleneck::kDramBound);
    in.memory_bound_sol = false;
    in.matrix_on_tensor_cores = true;
    KernelDiagnosis tensor = diagnose_fallback(in, {dsl::KernelKind::kGemm, 0.95, 132});
    EXPECT_EQ(tensor.bottleneck, Bottleneck::kTensorComputeBound);
    EXPECT_TRUE(tensor.stop);
    EXPECT_EQ(move_lines(tensor).front().rfind("stop", 0), 0u);
}

// A measured time under the SOL bound (T_sol / T = 1.2) shows as 1 in the evidence, flagged,
// never as more (sol/sol_share.h; issue 31, item 5).
TEST(Diagnose, FallbackShowsATimeUnderTheBoundAsAtSolFlagged) {
    FallbackInput in;
    in.resources.name = "kforge_k0";
    in.resources.registers = 32;
    in.block_threads = 256;
    in.grid_blocks = 4096;
    KernelDiagnosis d = diagnose_fallback(in, {dsl::KernelKind::kMap, 1.2, 132});
    bool found = false;
    for (const BottleneckEvidence& e : d.evidence) {
        if (e.metric != "T_sol / T") continue;
        found = true;
        EXPECT_DOUBLE_EQ(e.value, 1.0);
        EXPECT_NE(e.note.find("flagged: the measured time is under the SOL bound"),
                  std::string::npos) << e.note;
    }
    EXPECT_TRUE(found);
}

TEST(Diagnose, TextAndJsonCarryClassEvidenceAndMoves) {
    auto ks = parse_ncu_csv(read(std::string(KFORGE_TEST_DATA_DIR) + "/fixtures/synthetic_flawed.csv"));
    ASSERT_TRUE(ks.ok());
    KernelDiagnosis d = diagnose_kernel(ks->at(3), {dsl::KernelKind::kRowwise, 0.2, 132});
    std::string text = diagnosis_text(std::vector<KernelDiagnosis>{d});
    EXPECT_NE(text.find("spill_bound"), std::string::npos);
    EXPECT_NE(text.find("moves: rows_per_block down (fewer rows per block); threads up"),
              std::string::npos) << text;
    auto j = to_json(d);
    EXPECT_EQ(j["bottleneck"], "spill_bound");
    EXPECT_EQ(j["source"], "ncu");
    EXPECT_GE(j["evidence"].size(), 2u);
    EXPECT_DOUBLE_EQ(j["evidence"][0]["threshold"].get<double>(), kSpillLocalFraction);
    EXPECT_EQ(j["moves"][0], "rows_per_block down (fewer rows per block)");
}

}  // namespace
}  // namespace kforge::profile
