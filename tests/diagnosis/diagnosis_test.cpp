// The diagnosis as data (diagnosis/diagnosis.h): class names, the text logs and the LLM prompt
// read, and the JSON of `kforge profile --json`.
#include <gtest/gtest.h>

#include "diagnosis/diagnosis.h"

namespace kforge {
namespace {

TEST(Diagnosis, ClassNamesRoundTrip) {
    for (Bottleneck b : {Bottleneck::kDramBound, Bottleneck::kL2Bound,
                         Bottleneck::kTensorComputeBound, Bottleneck::kSimtComputeBound,
                         Bottleneck::kLatencyBoundLowOccupancy, Bottleneck::kLaunchTailBound,
                         Bottleneck::kSharedMemoryBound, Bottleneck::kSpillBound,
                         Bottleneck::kUncoalescedMemory, Bottleneck::kUnknown})
        EXPECT_EQ(bottleneck_from_string(to_string(b)), b);
    EXPECT_FALSE(bottleneck_from_string("memory_bound"));
}

KernelDiagnosis dram_rowwise() {
    KernelDiagnosis k;
    k.kernel = "kforge_k0";
    k.kind = dsl::KernelKind::kRowwise;
    k.bottleneck = Bottleneck::kDramBound;
    k.evidence.push_back({"dram__throughput.avg.pct_of_peak_sustained_elapsed", 91.2, ">=", 60, ""});
    k.moves = {moves_for(Bottleneck::kDramBound, dsl::KernelKind::kRowwise)[0],
               moves_for(Bottleneck::kDramBound, dsl::KernelKind::kRowwise)[1]};
    k.summary = "kforge_k0: dram_bound (dram__throughput.avg.pct_of_peak_sustained_elapsed 91.2 >= 60)";
    return k;
}

TEST(Diagnosis, TextIsOneLinePerKernelThenThePtxasSummary) {
    Diagnosis d;
    EXPECT_TRUE(d.empty());
    d.kernels.push_back(dram_rowwise());
    KernelDiagnosis near = dram_rowwise();
    near.kernel = "kforge_k1";
    near.summary = "kforge_k1: dram_bound (SOL bound kind memory: the roofline says DRAM)";
    near.from_profile = false;
    near.moves.clear();
    near.stop = true;
    d.kernels.push_back(near);
    d.ptxas_summary = "kforge_k0 sm_90a: 32 registers, 0 B smem, 0 B stack, no spills";
    EXPECT_FALSE(d.empty());
    EXPECT_TRUE(d.has(Bottleneck::kDramBound));
    EXPECT_FALSE(d.has(Bottleneck::kSpillBound));
    EXPECT_EQ(diagnosis_text(d),
              "kforge_k0: dram_bound (dram__throughput.avg.pct_of_peak_sustained_elapsed 91.2 >= "
              "60) -> moves: vec up (wider vector accesses); rows_per_block up (more rows per "
              "block)\n"
              "kforge_k1: dram_bound (SOL bound kind memory: the roofline says DRAM) [ptxas + SOL "
              "only, no profiler] -> moves: stop: within 80% of SOL on the limiting unit\n"
              "kforge_k0 sm_90a: 32 registers, 0 B smem, 0 B stack, no spills");
}

TEST(Diagnosis, Json) {
    auto j = to_json(dram_rowwise());
    EXPECT_EQ(j["bottleneck"], "dram_bound");
    EXPECT_EQ(j["source"], "ncu");
    EXPECT_EQ(j["moves"].size(), 2u);
    EXPECT_EQ(j["moves"][0], "vec up (wider vector accesses)");
    EXPECT_DOUBLE_EQ(j["evidence"][0]["value"].get<double>(), 91.2);
}

}  // namespace
}  // namespace kforge
