// Every subcommand with --json, on a success and on an error: stdout is one JSON document
// (nothing else), and an error is a JSON object with "error" and a non-zero exit. The commands
// are read from `kforge --help`, so a new subcommand without a case here fails the test.
// Commands that need a GPU, an LLM endpoint or PyTorch (calibrate, baseline, profile, llm ping,
// import) have their error case here only: there is none of those in CI.
// Also: suggestions for mistyped commands and flags, -o on report, --device's one meaning, the
// internal worker command hidden, and the problem given positionally everywhere.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_run.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;
using kforge::test::CliRun;
using kforge::test::run_cli;
using kforge::test::run_cli_stdout;

class CliJson : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = fs::temp_directory_path() / ("kforge_cli_json_" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "suite");
        const fs::path problems = fs::path(KFORGE_SOURCE_DIR) / "problems";
        fs::copy_file(problems / "softmax_long_rows_f32.json", dir_ / "suite" / "softmax_long_rows_f32.json");
        fs::copy_file(problems / "softmax_long_rows_f32.kf", dir_ / "suite" / "softmax_long_rows_f32.kf");
        std::ofstream(dir_ / "bad.json") << R"({"name": "bad", "dims": )";
        std::ofstream(dir_ / "inputs.json") << R"({"X": [1, 2]})";
    }
    static void TearDownTestSuite() {
        if (!::testing::Test::HasFailure()) fs::remove_all(dir_);
    }
    static std::string p(const std::string& name) { return (dir_ / name).string(); }
    static std::string spec() {
        return (fs::path(KFORGE_SOURCE_DIR) / "problems" / "softmax_long_rows_f32.json").string();
    }
    static std::string program() {
        return (fs::path(KFORGE_SOURCE_DIR) / "problems" / "softmax_long_rows_f32.kf").string();
    }
    static fs::path dir_;
};
fs::path CliJson::dir_;

// The subcommands `kforge --help` lists.
std::set<std::string> listed_commands() {
    std::set<std::string> names;
    const auto help = run_cli("--help");
    std::istringstream in(help.out);
    std::string line;
    bool in_list = false;
    while (std::getline(in, line)) {
        if (line.rfind("Subcommands:", 0) == 0 || line.rfind("SUBCOMMANDS:", 0) == 0) {
            in_list = true;
            continue;
        }
        if (in_list && line.size() > 2 && line[0] == ' ') {
            std::istringstream w(line);
            std::string name;
            w >> name;
            names.insert(name);
        }
    }
    return names;
}

TEST_F(CliJson, EveryCommandPrintsJsonOnSuccessAndOnError) {
    const std::string db = "--db " + p("k.db");
    // name -> {success args or "" (none possible in CI), error args}; run in this order
    struct Case {
        std::string command, ok, error;
    };
    const std::vector<Case> cases = {
        {"check", "check " + spec(), "check " + p("bad.json")},
        {"sol", "sol " + spec(), "sol " + p("bad.json")},
        {"fmt", "fmt " + program(), "fmt " + p("missing.kf")},
        {"compile", "compile " + spec() + " " + program() + " -o " + p("compiled") + " --no-build",
         "compile " + p("bad.json") + " " + program() + " -o " + p("compiled2")},
        {"eval", "eval " + spec() + " --program " + program() + " --device sim",
         "eval " + p("bad.json") + " --program " + program() + " --device sim"},
        {"interpret", "", "interpret " + p("bad.json") + " --inputs " + p("inputs.json")},
        {"optimize", "optimize " + spec() + " --device sim --rounds 1 --profile-top 0 " + db,
         "optimize " + p("bad.json") + " --device sim " + db},
        {"suite", "suite " + p("suite") + " --device sim --rounds 1 --profile-top 0 " + db,
         "suite " + p("missing_dir") + " --device sim " + db},
        {"db", "db runs " + db, "db runs --db " + p("missing.db")},
        {"db", "db export 1 " + db, "db export 99 " + db},
        {"db", "db migrate --db " + p("other.db"), "db migrate --db " + p("bad.json")},
        {"report", "report 1 " + db + " -o " + p("report"), "report 99 " + db + " -o " + p("r2")},
        {"llm", "llm prompt " + spec(), "llm prompt " + p("bad.json")},
        {"llm", "", "llm ping --config " + p("missing_config.json")},
        {"profile", "", "profile " + spec() + " --program " + program() + " --device sim"},
        {"calibrate", "", "calibrate --gemm-size 0"},
        {"import", "", "import kernelbench " + p("missing.py") + " -o " + p("imported")},
        {"baseline", "", "baseline " + p("bad.json")},
        {"export", "", "export 99 " + db + " -o " + p("exported")},
        {"mcp", "", "mcp --root " + p("missing_root")},  // stdout is the protocol: no --json
        // a mistyped command and a mistyped flag are errors too
        {"", "", "optimise " + spec()},
        {"", "", "optimize " + spec() + " --budgt-wall 3"},
    };
    std::set<std::string> covered;
    for (const Case& c : cases) {
        covered.insert(c.command);
        if (!c.ok.empty()) {
            const CliRun r = run_cli_stdout(c.ok + " --json");
            auto j = nlohmann::json::parse(r.out, nullptr, false);
            EXPECT_EQ(r.rc, 0) << c.ok << "\n" << r.out;
            EXPECT_FALSE(j.is_discarded()) << c.ok << ": stdout is not one JSON document:\n" << r.out;
            if (j.is_object()) EXPECT_FALSE(j.contains("error")) << c.ok << "\n" << r.out;
            // the search commands' results are structured, not their text
            if (c.command == "optimize" && j.is_object()) {
                EXPECT_EQ(j["status"], "finished") << r.out;
                EXPECT_TRUE(j["best"].is_object()) << r.out;
            }
            if (c.command == "suite" && j.is_object()) {
                ASSERT_TRUE(j["runs"].is_array()) << r.out;
                EXPECT_EQ(j["runs"].size(), 1u) << r.out;
            }
        }
        const CliRun r = run_cli_stdout(c.error + " --json");
        auto j = nlohmann::json::parse(r.out, nullptr, false);
        EXPECT_NE(r.rc, 0) << c.error << "\n" << r.out;
        ASSERT_FALSE(j.is_discarded()) << c.error << ": stdout is not one JSON document:\n" << r.out;
        ASSERT_TRUE(j.is_object()) << c.error << "\n" << r.out;
        ASSERT_TRUE(j.contains("error")) << c.error << "\n" << r.out;
        EXPECT_FALSE(j["error"].get<std::string>().empty()) << c.error;
    }
    for (const std::string& name : listed_commands())
        EXPECT_TRUE(covered.count(name)) << "kforge " << name << " has no --json case here";
}

TEST_F(CliJson, CheckJsonCarriesTheError) {
    const CliRun r = run_cli_stdout("check " + spec() + " " + p("bad.json") + " --json");
    EXPECT_EQ(r.rc, 2);
    auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["specs"].size(), 1u);
    ASSERT_EQ(j["errors"].size(), 1u);
    EXPECT_EQ(j["errors"][0]["file"], p("bad.json"));
    EXPECT_NE(j["error"].get<std::string>().find("bad.json"), std::string::npos);
}

TEST_F(CliJson, SuggestionsForMistypedCommandsAndFlags) {
    auto r = run_cli("optimise " + spec());
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("did you mean 'optimize'?"), std::string::npos) << r.out;
    r = run_cli("db rnus");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("did you mean 'runs'?"), std::string::npos) << r.out;
    r = run_cli("optimize " + spec() + " --budgt-wall 3");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("did you mean --budget-wall?"), std::string::npos) << r.out;
    r = run_cli("report 1 --db x.db --fromat md");
    EXPECT_NE(r.out.find("did you mean --format?"), std::string::npos) << r.out;
}

TEST_F(CliJson, OneMeaningPerFlag) {
    // the internal worker is not listed
    EXPECT_EQ(run_cli("--help").out.find("worker"), std::string::npos);
    // --device is sim/cuda/auto; a GPU table name goes with --gpu-model, the old use is refused
    auto r = run_cli("sol " + spec() + " --device h200");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("--gpu-model h200"), std::string::npos) << r.out;
    EXPECT_EQ(run_cli("sol " + spec() + " --gpu-model h200").rc, 0);
    // the problem is positional everywhere; --problem stays as the old spelling
    EXPECT_EQ(run_cli("eval " + spec() + " --program " + program() + " --device sim").rc, 0);
    EXPECT_EQ(run_cli("eval --problem " + spec() + " --program " + program() + " --device sim").rc, 0);
    EXPECT_EQ(run_cli("compile " + program() + " --problem " + spec() + " -o " + p("c3") +
                      " --no-build").rc, 0);
    EXPECT_EQ(run_cli("llm prompt " + spec()).rc, 0);
    // optimize's default budget is finite and said in --help
    EXPECT_NE(run_cli("optimize --help").out.find("600"), std::string::npos);
}

}  // namespace
}  // namespace kforge
