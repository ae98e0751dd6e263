// The run comparison (report/compare.h, report/compare_render.h): the model's step curves
// from a store with three runs of one problem, the SVG charts (one curve per run, the legend,
// the axis values), runs of two stores, and the errors: runs of different problems, an unknown
// run.
#include <gtest/gtest.h>

#include <memory>
#include <regex>
#include <set>

#include "compare_fixture.h"
#include "report/compare.h"
#include "report/compare_render.h"
#include "report/svg.h"

namespace kforge {
namespace {

// The texts of <text class="CLS"> elements, in order.
std::vector<std::string> texts(const std::string& svg, const std::string& cls) {
    std::vector<std::string> out;
    std::regex re("<text class=\"" + cls + "\"[^>]*>([^<]*)</text>");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
         ++it)
        out.push_back((*it)[1]);
    return out;
}

class ReportCompare : public ::testing::Test {
protected:
    void SetUp() override {
        s_ = test::build_compare_stores();
        auto store = Store::open(s_.db_path);
        ASSERT_TRUE(store.ok());
        store_ = std::make_unique<Store>(std::move(*store));
    }
    Expected<report::Comparison> compare(std::vector<int64_t> runs) {
        std::vector<report::CompareInput> in;
        for (int64_t r : runs) in.push_back({store_.get(), r});
        return report::build_comparison(in);
    }
    test::CompareStores s_;
    std::unique_ptr<Store> store_;
};

TEST_F(ReportCompare, StepCurvesOfThreeRuns) {
    auto c = compare({s_.builtin_run, s_.random_run, s_.param_run});
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    EXPECT_EQ(c->problem, "softmax_short_rows_f32");
    EXPECT_FALSE(c->simulated);
    ASSERT_EQ(c->runs.size(), 3u);
    const report::CompareRun& b = c->runs[0];
    EXPECT_EQ(b.label, "#1 diagnosis,parameter");
    EXPECT_EQ(b.start_source, "start program");
    EXPECT_EQ(b.tier, "full");
    ASSERT_EQ(b.steps.size(), 3u);  // 1000, 800, 500 (900 is no improvement and not the last)
    EXPECT_DOUBLE_EQ(b.steps[1].speedup, 1.25);
    EXPECT_DOUBLE_EQ(b.steps[2].speedup, 2.0);
    EXPECT_DOUBLE_EQ(b.steps[0].wall_s, 60.0);   // the run's first timing, 1 min after its start
    EXPECT_DOUBLE_EQ(b.steps[0].search_s, 0.0);  // ... where the search's clock starts
    EXPECT_DOUBLE_EQ(b.steps[2].search_s, 90.0);
    EXPECT_NEAR(b.steps[2].gpu_s, 4.0 + 3e-6 * (1 + 0.8 + 0.9 + 0.5), 1e-12);
    const report::CompareRun& r = c->runs[1];
    EXPECT_EQ(r.label, "#2 random");
    ASSERT_EQ(r.steps.size(), 3u);  // the last evaluation (1100) ends the curve at 950
    EXPECT_DOUBLE_EQ(r.steps[2].best_ns, 950.0);
    EXPECT_DOUBLE_EQ(r.steps[2].search_s, 60.0);
    const report::CompareRun& p = c->runs[2];
    ASSERT_EQ(p.steps.size(), 2u);  // the quick timing at 100 ns is not the run's tier
    EXPECT_DOUBLE_EQ(*p.best_ns, 1000.0);
    EXPECT_DOUBLE_EQ(p.steps[1].speedup, 1.0);
    auto j = report::comparison_to_json(*c);
    EXPECT_EQ(j["runs"].size(), 3u);
    EXPECT_EQ(j["runs"][0]["steps"][2]["speedup"], 2.0);
}

TEST_F(ReportCompare, SvgHasACurvePerRunALegendAndAxisValues) {
    auto c = compare({s_.builtin_run, s_.random_run, s_.param_run});
    ASSERT_TRUE(c.ok());
    std::string gpu = report::svg_step_chart(
        report::comparison_chart(*c, report::CompareAxis::kGpuSeconds));
    EXPECT_EQ(test::count_of(gpu, "<polyline class=\"curve\""), 3u);
    EXPECT_EQ(texts(gpu, "legend"),
              (std::vector<std::string>{"#1 diagnosis,parameter", "#2 random", "#3 parameter"}));
    // y: speedups 1 to 2 padded to [0.5, 2.5] in steps of 0.5; x: GPU-seconds to just over 4
    EXPECT_EQ(texts(gpu, "tick"), (std::vector<std::string>{"0.5", "1.0", "1.5", "2.0", "2.5",
                                                           "0", "1", "2", "3", "4", "5"}));
    EXPECT_NE(gpu.find("cumulative GPU-seconds"), std::string::npos);
    EXPECT_EQ(test::count_of(gpu, "<line class=\"ref\""), 1u);  // speedup 1
    // three distinct colors
    std::set<std::string> colors;
    std::regex re("<polyline class=\"curve\" fill=\"none\" stroke=\"(#[0-9a-f]{6})\"");
    for (auto it = std::sregex_iterator(gpu.begin(), gpu.end(), re); it != std::sregex_iterator();
         ++it)
        colors.insert((*it)[1]);
    EXPECT_EQ(colors.size(), 3u);
    std::string wall = report::svg_step_chart(
        report::comparison_chart(*c, report::CompareAxis::kSearchWall));
    auto wall_ticks = texts(wall, "tick");
    ASSERT_FALSE(wall_ticks.empty());
    EXPECT_EQ(wall_ticks.back(), "100");  // search seconds up to 90, ticks of 20
    // A file of its own: the SVG namespace, balanced.
    std::string doc = report::svg_document(gpu);
    EXPECT_NE(doc.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
    EXPECT_EQ(test::count_of(doc, "<svg"), test::count_of(doc, "</svg>"));
}

TEST_F(ReportCompare, WritesChartsAndTablesOfThePoints) {
    auto c = compare({s_.builtin_run, s_.random_run});
    ASSERT_TRUE(c.ok());
    auto formats = report::parse_report_formats("md,html,json");
    ASSERT_TRUE(formats.ok());
    auto written = report::write_comparison(*c, (s_.dir / "out").string(), *formats);
    ASSERT_TRUE(written.ok()) << written.error().to_string();
    EXPECT_EQ(written->size(), 5u);
    for (const char* f : {"compare-wall.svg", "compare-gpu.svg", "compare.md", "compare.html",
                          "compare.json"})
        EXPECT_TRUE(std::filesystem::exists(s_.dir / "out" / f)) << f;
    std::string md = report::render_comparison_markdown(*c);
    EXPECT_NE(md.find("](compare-gpu.svg)"), std::string::npos);
    EXPECT_NE(md.find("| #1 diagnosis,parameter | 4 | 90.0 | 150.0 |"), std::string::npos) << md;
    EXPECT_NE(md.find("| 2.000x |"), std::string::npos);
    std::string html = report::render_comparison_html(*c);
    EXPECT_EQ(test::count_of(html, "<polyline class=\"curve\""), 4u);  // two runs, two charts
    EXPECT_EQ(html.find("http"), std::string::npos);          // inline: no namespace URL
}

TEST_F(ReportCompare, RunsOfTwoStoresAreLabelledByStore) {
    auto other = Store::open(s_.other_db_path);
    ASSERT_TRUE(other.ok());
    auto c = report::build_comparison({{store_.get(), s_.builtin_run},
                                       {&*other, s_.other_store_run}});
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    EXPECT_EQ(c->runs[0].label, "search.db #1 diagnosis,parameter");
    EXPECT_EQ(c->runs[1].label, "random.db #1 random");
    EXPECT_TRUE(c->notes.empty());  // the same spec in both stores
}

TEST_F(ReportCompare, RunsOfDifferentProblemsAreAUserError) {
    auto c = compare({s_.builtin_run, s_.other_problem_run});
    ASSERT_FALSE(c.ok());
    std::string m = c.error().to_string();
    EXPECT_NE(m.find("different problems"), std::string::npos) << m;
    EXPECT_NE(m.find("softmax_short_rows_f32"), std::string::npos) << m;
    EXPECT_NE(m.find("row_sum_f32"), std::string::npos) << m;
    auto unknown = compare({s_.builtin_run, 99});
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().to_string().find("run 99"), std::string::npos);
    EXPECT_FALSE(report::build_comparison({}).ok());
}

TEST(ReportSvg, AxisTicksAreRoundNumbers) {
    auto near = [](const std::vector<double>& got, const std::vector<double>& want) {
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
    };
    near(report::axis_ticks(0, 1, 5), {0, 0.2, 0.4, 0.6, 0.8, 1.0});
    near(report::axis_ticks(0, 100, 6), {0, 20, 40, 60, 80, 100});
    EXPECT_EQ(report::axis_ticks(0.95, 2.05, 5).size(), 3u);  // 1.0 1.5 2.0 (0.5 apart)
    EXPECT_TRUE(report::axis_ticks(1, 0, 5).empty());
}

}  // namespace
}  // namespace kforge
