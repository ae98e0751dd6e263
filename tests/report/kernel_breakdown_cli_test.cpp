// The per-kernel breakdown end to end on the simulated device: `kforge optimize` of a two-kernel
// suite problem (gemm + row-wise softmax) records per-kernel times and the kernels' ops, and
// `kforge report` shows them as a table and a chart in Markdown (an SVG file beside it), HTML
// (inline SVG) and JSON.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/cli_run.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(KernelBreakdownCli, AReportOfATwoKernelRunShowsTheTableAndTheChart) {
    fs::path dir = fs::temp_directory_path() /
                   ("kforge_kernel_breakdown_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path src = fs::path(KFORGE_SOURCE_DIR) / "problems";
    for (const char* ext : {".json", ".kf"})
        fs::copy_file(src / (std::string("linear_softmax_bf16") + ext),
                      dir / (std::string("linear_softmax_bf16") + ext));
    const std::string db = (dir / "k.db").string();
    auto opt = test::run_cli("optimize " + (dir / "linear_softmax_bf16.json").string() +
                             " --device sim --rounds 1 --profile-top 0 --db " + db + " --out " +
                             (dir / "out").string());
    ASSERT_EQ(opt.rc, 0) << opt.out;
    auto rep = test::run_cli("report 1 --db " + db + " -o " + (dir / "rep").string());
    ASSERT_EQ(rep.rc, 0) << rep.out;

    std::string md = read(dir / "rep" / "report.md");
    EXPECT_NE(md.find("| kernel | kind | ops | time | share | % of SOL | bottleneck |"),
              std::string::npos) << md;
    EXPECT_NE(md.find("| k0 | gemm | linear, scale |"), std::string::npos) << md;
    EXPECT_NE(md.find("| k1 | rowwise | softmax |"), std::string::npos) << md;
    EXPECT_NE(md.find("](kernels_run1_problem1.svg)"), std::string::npos);
    std::string svg = read(dir / "rep" / "kernels_run1_problem1.svg");
    EXPECT_NE(svg.find("k0 gemm"), std::string::npos) << svg;

    std::string html = read(dir / "rep" / "report.html");
    EXPECT_NE(html.find("<table class=\"kernels\">"), std::string::npos);
    EXPECT_NE(html.find("time per kernel"), std::string::npos);

    auto j = nlohmann::json::parse(read(dir / "rep" / "report.json"));
    const auto& kernels = j["problems"][0]["best"]["kernels"];
    ASSERT_EQ(kernels.size(), 2u) << j["problems"][0]["best"].dump();
    double share = 0;
    for (const auto& k : kernels) {
        EXPECT_GT(k["time_ns"].get<double>(), 0);
        ASSERT_TRUE(k["percent_sol"].is_number()) << k.dump();
        EXPECT_GT(k["percent_sol"].get<double>(), 0);
        EXPECT_LE(k["percent_sol"].get<double>(), 100);
        share += k["share"].get<double>();
    }
    EXPECT_NEAR(share, 1.0, 1e-9);
    EXPECT_EQ(kernels[1]["bottleneck"], "memory");
    fs::remove_all(dir);
}

}  // namespace
}  // namespace kforge
