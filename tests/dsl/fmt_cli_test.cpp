// `kforge fmt`: canonical output, --check, --hash, --card and exit codes (cli/cmd_fmt.cpp).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <unistd.h>
#include <fstream>

#include "dsl/parser.h"
#include "dsl/printer.h"
#include "tests/cli_run.h"

namespace kforge::dsl {
namespace {

namespace fs = std::filesystem;

using kforge::test::CliRun;
using kforge::test::run_cli;

std::string write_temp(const std::string& name, const std::string& text) {
    fs::path dir = fs::temp_directory_path() / ("kforge_fmt_test_" + std::to_string(getpid()));
    fs::create_directories(dir);
    fs::path p = dir / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
}

constexpr std::string_view kMessy = "program p for \"q\"  # messy\n"
                                    "kernel k = map(X[R]) vec 2 block 64 { relu ; store Y[R] ; }\n";

TEST(FmtCli, PrintsCanonicalFormAndChecksIt) {
    std::string messy = write_temp("messy.kf", std::string(kMessy));
    std::string canonical = print_canonical(*parse_program(kMessy, "x"));
    CliRun r = run_cli("fmt " + messy);
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.out, canonical);
    EXPECT_EQ(r.out, "program p for \"q\"\nkernel k = map(X[R]) block 64 vec 2 items 1\n"
                     "    { relu; store Y[R] }\n");
    r = run_cli("fmt --check " + messy);
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.out.find("messy.kf: not canonical"), std::string::npos);
    std::string clean = write_temp("clean.kf", canonical);
    EXPECT_EQ(run_cli("fmt --check " + clean).rc, 0);
    r = run_cli("fmt --hash " + messy + " " + clean);
    EXPECT_EQ(r.rc, 0);
    std::string hash = program_hash(*parse_program(kMessy, "x"));
    EXPECT_EQ(r.out, hash + "  " + messy + "\n" + hash + "  " + clean + "\n");
}

TEST(FmtCli, ParseErrorExitsTwoWithLocation) {
    std::string bad = write_temp("bad.kf", "program p for \"q\"\nkernel k = map(X[R]) blok 64 { store Y[R] }\n");
    CliRun r = run_cli("fmt " + bad);
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("bad.kf:2:22: expected a knob (block, vec, items, ...) or '{', got 'blok'; "
                         "did you mean 'block'?"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("^^^^"), std::string::npos);
    EXPECT_EQ(run_cli("fmt " + bad + ".missing").rc, 2);
    EXPECT_EQ(run_cli("fmt").rc, 2);
}

TEST(FmtCli, PrintsReferenceCard) {
    CliRun r = run_cli("fmt --card");
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.out.rfind("# kforge kernel language: reference card", 0), 0u);
}

}  // namespace
}  // namespace kforge::dsl
