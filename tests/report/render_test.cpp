// Renderings: Markdown and JSON carry the model's numbers, the HTML is self-contained and
// balanced, and text from the store is escaped.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "report/html.h"
#include "report/json.h"
#include "report/markdown.h"
#include "report/model.h"
#include "report/write.h"
#include "report_fixture.h"

namespace kforge {
namespace {

report::Report build(const test::Synthetic& s, std::vector<int64_t> runs) {
    auto store = Store::open(s.db_path);
    report::ReportOptions o;
    o.run_ids = std::move(runs);
    auto r = report::build_report(*store, o);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
    return *r;
}

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
        ++n;
    return n;
}

TEST(ReportRender, HtmlIsBalancedSelfContainedAndEscaped) {
    test::Synthetic s = test::build_synthetic("<script>alert('x')</script> & co");
    std::string html = report::render_html(build(s, {s.run_id, s.sim_run_id}));
    for (const char* tag : {"html", "body", "svg", "table", "section"}) {
        std::string open = std::string("<") + tag;
        EXPECT_EQ(count(html, open + ">") + count(html, open + " "),
                  count(html, std::string("</") + tag + ">")) << tag;
    }
    EXPECT_GE(count(html, "<svg"), 3u);  // two bar charts and progress curves
    EXPECT_GE(count(html, "<polyline class=\"progress\""), 2u);
    EXPECT_EQ(html.find("http"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co"),
              std::string::npos);
    EXPECT_NE(html.find("simulated"), std::string::npos);
}

TEST(ReportRender, MarkdownAndJsonCarryTheNumbers) {
    test::Synthetic s = test::build_synthetic();
    report::Report r = build(s, {s.run_id});
    std::string md = report::render_markdown(r);
    EXPECT_NE(md.find("| eager | 3 | 1.48x (2) |"), std::string::npos) << md;
    EXPECT_NE(md.find("baseline:compile_default"), std::string::npos);
    EXPECT_NE(md.find("T_base = baseline:eager"), std::string::npos);
    EXPECT_EQ(md.find("simulated"), std::string::npos);
    auto j = report::report_to_json(r);
    EXPECT_EQ(j["simulated"], false);
    EXPECT_NEAR(j["problems"][0]["best"]["time"]["median_ns"].get<double>(),
                1.10 * s.tsol_ns[0], 1e-6 * s.tsol_ns[0]);
    EXPECT_NEAR(j["suite"]["baselines"][0]["fast_p"][1]["fraction"].get<double>(), 1.0 / 3,
                1e-12);
    EXPECT_TRUE(j["problems"][2]["best"].is_null());

    report::Report sim = build(s, {s.sim_run_id});
    std::string smd = report::render_markdown(sim);
    EXPECT_NE(smd.find("(simulated device)"), std::string::npos);
    EXPECT_NE(smd.find("no baseline measured"), std::string::npos);
    EXPECT_EQ(report::report_to_json(sim)["problems"][0]["simulated"], true);
}

TEST(ReportRender, WritesRequestedFormats) {
    test::Synthetic s = test::build_synthetic();
    auto formats = report::parse_report_formats("md,json");
    ASSERT_TRUE(formats.ok());
    auto written = report::write_report(build(s, {s.run_id}), (s.dir / "out").string(), *formats);
    ASSERT_TRUE(written.ok());
    EXPECT_EQ(written->size(), 2u);
    EXPECT_TRUE(std::filesystem::exists(s.dir / "out" / "report.md"));
    EXPECT_FALSE(std::filesystem::exists(s.dir / "out" / "report.html"));
    EXPECT_FALSE(report::parse_report_formats("md,pdf").ok());
}

}  // namespace
}  // namespace kforge
