// The per-kernel breakdown (report/kernel_breakdown.h) from an evaluation's per-kernel times and
// stored "kernels": shares, each kernel's own bound and its side, and when nothing is shown.
#include <gtest/gtest.h>

#include "report/kernel_breakdown.h"
#include "report_fixture.h"
#include "sol/kernel_bounds.h"

namespace kforge::report {
namespace {

using json = nlohmann::ordered_json;

// problems/linear_softmax_bf16 as planned: k0 gemm (linear, scale -> S), k1 softmax (S -> Y)
json evidence() {
    return json::parse(R"({"kernels":[
        {"name":"k0","kind":"gemm","ops":[0,1],"stores":["S"]},
        {"name":"k1","kind":"rowwise","ops":[2],"stores":["Y"]}]})");
}

Ceilings h200() { return effective_ceilings(*find_device("h200"), std::nullopt); }

TEST(KernelBreakdown, SharesBoundsAndTheRooflineSide) {
    Problem p = test::load_suite_problem("linear_softmax_bf16");
    KernelBreakdown b = kernel_breakdown({600e3, 200e3}, evidence(), &p, h200());
    ASSERT_EQ(b.rows.size(), 2u);
    EXPECT_TRUE(b.note.empty());
    EXPECT_EQ(b.rows[0].name, "k0");
    EXPECT_EQ(b.rows[0].ops, "linear, scale");
    EXPECT_DOUBLE_EQ(b.rows[0].share, 0.75);
    EXPECT_DOUBLE_EQ(b.rows[1].share, 0.25);
    auto bound0 = kernel_bounds(p, {0, 1}, {"S"}, h200());
    ASSERT_TRUE(bound0.ok());
    ASSERT_TRUE(b.rows[0].time_sol_ns);
    EXPECT_DOUBLE_EQ(*b.rows[0].time_sol_ns, bound0->time_fused_s * 1e9);
    EXPECT_NEAR(sol_percent(b.rows[0].sol), 100.0 * bound0->time_fused_s * 1e9 / 600e3, 1e-9);
    EXPECT_EQ(b.rows[0].bottleneck.rfind("compute", 0), 0u) << b.rows[0].bottleneck;
    EXPECT_EQ(b.rows[1].bottleneck, "memory");
    std::vector<std::string> cells = kernel_table_cells(b.rows[1]);
    ASSERT_EQ(cells.size(), kernel_table_header().size());
    EXPECT_EQ(cells[2], "softmax");
    EXPECT_EQ(cells[4], "25.0%");
    std::string svg = svg_kernel_chart(b.rows);
    EXPECT_EQ(svg.find("<svg"), 0u);
    EXPECT_NE(svg.find("k1 rowwise"), std::string::npos);
    EXPECT_NE(svg.find("600.00 us"), std::string::npos);
}

TEST(KernelBreakdown, NothingForOneKernelAndANoteWhenTimesAreMissingOrMismatched) {
    Problem p = test::load_suite_problem("linear_softmax_bf16");
    json one = json::parse(R"({"kernels":[{"name":"k0","kind":"gemm","ops":[0,1,2]}]})");
    KernelBreakdown b = kernel_breakdown({5e3}, one, &p, h200());
    EXPECT_TRUE(b.rows.empty());
    EXPECT_TRUE(b.note.empty());
    b = kernel_breakdown({}, evidence(), &p, h200());
    EXPECT_TRUE(b.rows.empty());
    EXPECT_NE(b.note.find("no per-kernel times"), std::string::npos);
    b = kernel_breakdown({1, 2, 3}, evidence(), &p, h200());
    EXPECT_TRUE(b.rows.empty());
    EXPECT_NE(b.note.find("3 per-kernel times for 2 kernels"), std::string::npos);
    // no spec or no ceilings: times and shares, no bound
    b = kernel_breakdown({1e3, 3e3}, evidence(), nullptr, std::nullopt);
    ASSERT_EQ(b.rows.size(), 2u);
    EXPECT_FALSE(b.rows[0].time_sol_ns);
    EXPECT_EQ(b.rows[0].bottleneck, "-");
    EXPECT_EQ(kernel_table_cells(b.rows[0])[5], "-");
    EXPECT_EQ(b.rows[0].ops, "op 0, op 1");
}

}  // namespace
}  // namespace kforge::report
