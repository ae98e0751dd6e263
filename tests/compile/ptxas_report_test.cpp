// The ptxas report parser on text captured from nvcc 13.0 (`-Xptxas -v`).
#include <gtest/gtest.h>

#include "compile/ptxas_report.h"

namespace kforge::compile {
namespace {

// nvcc 13.0, CUTLASS sm90 cooperative bf16 gemm (properties block after the "Used" line).
constexpr const char* kCutlassLog = R"(ptxas info    : 4127 bytes gmem
ptxas info    : Compiling entry function 'kforge_k0' for 'sm_90a'
ptxas info    : Function properties for kforge_k0
ptxas info    : Used 168 registers, used 2 barriers
ptxas info    : Compile time = 358.697 ms
ptxas info    : Function properties for kforge_k0
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
)";

// Two plain kernels, one spilling, older layout with smem and cmem on the "Used" line and a
// non-entry device function in between.
constexpr const char* kPlainLog = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z6scale1Pf' for 'sm_80'
ptxas info    : Function properties for _Z6scale1Pf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, 360 bytes cmem[0]
ptxas info    : Function properties for helper
    24 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'kforge_k1' for 'sm_80'
ptxas info    : Function properties for kforge_k1
    40 bytes stack frame, 36 bytes spill stores, 28 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 380 bytes cmem[0]
)";

TEST(PtxasReport, CutlassKernel) {
    auto k = parse_ptxas_report(kCutlassLog);
    ASSERT_EQ(k.size(), 1u);
    EXPECT_EQ(k[0].name, "kforge_k0");
    EXPECT_EQ(k[0].arch, "sm_90a");
    EXPECT_EQ(k[0].registers, 168);
    EXPECT_EQ(k[0].barriers, 2);
    EXPECT_EQ(k[0].stack_bytes, 0);
    EXPECT_FALSE(k[0].spills());
}

TEST(PtxasReport, SpillsStackSmemAndCmem) {
    auto k = parse_ptxas_report(kPlainLog);
    ASSERT_EQ(k.size(), 2u);
    EXPECT_EQ(k[0].name, "_Z6scale1Pf");
    EXPECT_EQ(k[0].registers, 8);
    EXPECT_EQ(k[0].cmem_bytes, 360);
    EXPECT_EQ(k[0].stack_bytes, 0);  // helper's 24 bytes are not k0's
    EXPECT_EQ(k[1].name, "kforge_k1");
    EXPECT_EQ(k[1].registers, 255);
    EXPECT_EQ(k[1].barriers, 1);
    EXPECT_EQ(k[1].smem_bytes, 4096);
    EXPECT_EQ(k[1].stack_bytes, 40);
    EXPECT_EQ(k[1].spill_stores_bytes, 36);
    EXPECT_EQ(k[1].spill_loads_bytes, 28);
    EXPECT_TRUE(k[1].spills());
    std::string text = format_ptxas_report(k);
    EXPECT_NE(text.find("kforge_k1 sm_80: 255 registers"), std::string::npos) << text;
    EXPECT_NE(text.find("SPILLS 36 B stores / 28 B loads"), std::string::npos) << text;
}

TEST(PtxasReport, UnrelatedTextGivesNothing) {
    EXPECT_TRUE(parse_ptxas_report("").empty());
    EXPECT_TRUE(parse_ptxas_report("kernels.cu(3): error: identifier \"x\" is undefined\n").empty());
}

}  // namespace
}  // namespace kforge::compile
