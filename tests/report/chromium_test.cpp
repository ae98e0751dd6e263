// The HTML report in a real browser: Chromium (headless) must parse it into a DOM holding the
// SVG charts, and render a non-trivial screenshot. Skips visibly when chromium is not on PATH.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "report/model.h"
#include "report/write.h"
#include "report_fixture.h"

namespace kforge {
namespace {

TEST(ReportChromium, DumpDomAndScreenshot) {
    if (std::system("command -v chromium >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "SKIP: chromium is not on PATH (scripts/setup.sh installs it)";
    test::Synthetic s = test::build_synthetic();
    auto store = Store::open(s.db_path);
    report::ReportOptions o;
    o.run_ids = {s.run_id, s.sim_run_id};
    auto r = report::build_report(*store, o);
    ASSERT_TRUE(r.ok());
    std::string out = (s.dir / "out").string();
    ASSERT_TRUE(report::write_report(*r, out, {report::ReportFormat::kHtml}).ok());
    std::string html = out + "/report.html", dom = out + "/dom.html", png = out + "/shot.png";
    std::string flags = "chromium --headless --no-sandbox --disable-gpu ";
    ASSERT_EQ(std::system((flags + "--dump-dom file://" + html + " > " + dom +
                           " 2>/dev/null").c_str()), 0);
    std::ifstream in(dom);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    EXPECT_NE(text.find("<polyline class=\"progress\""), std::string::npos);
    EXPECT_NE(text.find("<rect class=\"bar\""), std::string::npos);
    EXPECT_NE(text.find("</svg>"), std::string::npos);
    ASSERT_EQ(std::system((flags + "--window-size=1200,2000 --screenshot=" + png + " file://" +
                           html + " >/dev/null 2>&1").c_str()), 0);
    ASSERT_TRUE(std::filesystem::exists(png));
    EXPECT_GT(std::filesystem::file_size(png), 5u * 1024);
    std::ifstream pf(png, std::ios::binary);
    char sig[8] = {};
    pf.read(sig, 8);
    EXPECT_EQ(std::string(sig + 1, 3), "PNG");
}

}  // namespace
}  // namespace kforge
