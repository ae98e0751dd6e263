// `kforge report --compare` through the built binary: runs of one store and of two, the files
// it writes, and its user errors (runs of different problems, STORE:ID without --compare) with
// exit code 2, in words and in JSON.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/cli_run.h"
#include "compare_fixture.h"

namespace kforge {
namespace {

using test::run_cli;
using test::run_cli_stdout;

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(ReportCompareCli, OneStoreAndTwoStores) {
    test::CompareStores s = test::build_compare_stores();
    std::string out = (s.dir / "one").string();
    auto r = run_cli("report --compare " + std::to_string(s.builtin_run) + " " +
                     std::to_string(s.random_run) + " " + std::to_string(s.param_run) +
                     " --db " + s.db_path + " -o " + out);
    ASSERT_EQ(r.rc, 0) << r.out;
    std::string svg = slurp(s.dir / "one" / "compare-gpu.svg");
    EXPECT_EQ(test::count_of(svg, "<polyline class=\"curve\""), 3u) << svg;
    EXPECT_NE(svg.find("#2 random"), std::string::npos);
    EXPECT_NE(slurp(s.dir / "one" / "compare.md").find("## Curve points"), std::string::npos);

    r = run_cli_stdout("report --compare " + s.db_path + ":" + std::to_string(s.builtin_run) +
                       " " + s.other_db_path + ":" + std::to_string(s.other_store_run) +
                       " -o " + (s.dir / "two").string() + " --format json --json");
    ASSERT_EQ(r.rc, 0) << r.out;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_EQ(j["files"].size(), 3u);  // two SVGs and compare.json
    auto c = nlohmann::json::parse(slurp(s.dir / "two" / "compare.json"), nullptr, false);
    ASSERT_TRUE(c.is_object());
    EXPECT_EQ(c["runs"][1]["label"], "random.db #1 random");
}

TEST(ReportCompareCli, DifferentProblemsAreAUserError) {
    test::CompareStores s = test::build_compare_stores();
    std::string args = "report --compare " + std::to_string(s.builtin_run) + " " +
                       std::to_string(s.other_problem_run) + " --db " + s.db_path + " -o " +
                       (s.dir / "bad").string();
    auto r = run_cli(args);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("different problems"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("row_sum_f32"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(s.dir / "bad"));
    r = run_cli_stdout(args + " --json");
    EXPECT_EQ(r.rc, 2);
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_NE(j.value("error", "").find("different problems"), std::string::npos) << r.out;
    // another store's run is for --compare only; a run id must be a number
    r = run_cli("report " + s.other_db_path + ":1 --db " + s.db_path + " -o " +
                (s.dir / "x").string());
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("--compare only"), std::string::npos) << r.out;
    r = run_cli("report --compare one --db " + s.db_path);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("expected a run id"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kforge
