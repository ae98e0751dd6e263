// Writing reports and the SOL share they show (issue 31, items 5 and 9): report.{md,html,json}
// land atomically and a symlink planted at report.html is replaced, its target untouched; a
// folder at a report name is refused; a best time under the SOL bound is shown as 100%,
// flagged, in every format and never as more.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "report/html.h"
#include "report/json.h"
#include "report/markdown.h"
#include "report/model.h"
#include "report/model_internal.h"
#include "report/write.h"
#include "report_fixture.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

report::Report build(const test::Synthetic& s, std::vector<int64_t> runs) {
    auto store = Store::open(s.db_path);
    EXPECT_TRUE(store.ok());
    report::ReportOptions o;
    o.run_ids = std::move(runs);
    auto r = report::build_report(*store, o);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
    return *r;
}

std::string read(const fs::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST(ReportWrite, ASymlinkAtReportHtmlIsReplacedNotFollowed) {
    test::Synthetic s = test::build_synthetic();
    const fs::path out = s.dir / "out", victim = s.dir / "victim.html";
    fs::create_directories(out);
    std::ofstream(victim) << "untouched";
    fs::create_symlink(victim, out / "report.html");
    fs::create_symlink(s.dir / "no_such_file", out / "report.md");  // dangling: not created
    auto formats = report::parse_report_formats("md,html,json");
    ASSERT_TRUE(formats.ok());
    auto written = report::write_report(build(s, {s.run_id}), out.string(), *formats);
    ASSERT_TRUE(written.ok()) << written.error().to_string();
    EXPECT_EQ(read(victim), "untouched");
    EXPECT_FALSE(fs::exists(s.dir / "no_such_file"));
    for (const char* name : {"report.md", "report.html", "report.json"}) {
        EXPECT_FALSE(fs::is_symlink(out / name)) << name;
        EXPECT_TRUE(fs::is_regular_file(out / name)) << name;
        struct stat st {};
        ASSERT_EQ(::stat((out / name).c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0644u) << name;
    }
    EXPECT_NE(read(out / "report.html").find("<html"), std::string::npos);
    for (const auto& e : fs::directory_iterator(out))  // no temporary file left behind
        EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

TEST(ReportWrite, AFolderAtAReportNameIsAnError) {
    test::Synthetic s = test::build_synthetic();
    const fs::path out = s.dir / "out";
    fs::create_directories(out / "report.md");
    auto written = report::write_report(build(s, {s.run_id}), out.string(),
                                        {report::ReportFormat::kMarkdown});
    ASSERT_FALSE(written.ok());
    EXPECT_NE(written.error().to_string().find("report.md"), std::string::npos);
    EXPECT_TRUE(fs::is_directory(out / "report.md"));
}

// A best median 0.82 x T_sol: 121.7% before, now 100% and flagged in Markdown, HTML and JSON.
TEST(ReportWrite, ATimeUnderTheBoundIsShownAsOneHundredPercentFlagged) {
    test::Synthetic s = test::build_synthetic();
    report::Report r = build(s, {s.run_id});
    ASSERT_TRUE(r.problems[0].best);
    const Problem p = test::load_suite_problem("softmax_short_rows_f32");
    auto bounds = compute_bounds(p, effective_ceilings(*find_device("h200"), std::nullopt));
    ASSERT_TRUE(bounds.ok());
    r.problems[0].best->stats.median_ns = 0.82 * bounds->time_fused_s * 1e9;
    r.problems[0].sol = report::sol_figures(*bounds, r.problems[0]);
    const report::SolFigures& f = r.problems[0].sol;
    ASSERT_TRUE(f.percent_sol);
    EXPECT_DOUBLE_EQ(*f.percent_sol, 100.0);
    EXPECT_TRUE(f.under_sol_bound);
    EXPECT_NE(report::sol_text(f).find("100.0% (flagged: under the SOL bound"), std::string::npos)
        << report::sol_text(f);
    const std::string md = report::render_markdown(r), html = report::render_html(r);
    EXPECT_NE(md.find("flagged: under the SOL bound"), std::string::npos);
    EXPECT_NE(html.find("flagged: under the SOL bound"), std::string::npos);
    EXPECT_EQ(md.find("121."), std::string::npos);
    const auto j = report::report_to_json(r)["problems"][0]["sol"];
    EXPECT_DOUBLE_EQ(j["percent_sol"].get<double>(), 100.0);
    EXPECT_EQ(j["under_sol_bound"], true);
}

}  // namespace
}  // namespace kforge
