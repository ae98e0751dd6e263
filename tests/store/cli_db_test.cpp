// `kforge db`: runs, export and migrate against a database written through the store API, and
// the user errors (unknown run, missing or unreadable database) with exit code 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "store_fixture.h"
#include "tests/cli_run.h"

namespace kforge {
namespace {

using kforge::test::CliRun;
using kforge::test::run_cli;

class CliDbTest : public test::StoreTest {
protected:
    std::string db_arg() const { return "db --db " + (dir_ / "kforge.db").string() + " "; }
};

TEST_F(CliDbTest, RunsListsTheRunWithItsBestTime) {
    auto c = store_->add_candidate(test::test_candidate(run_, problem_, "program a"));
    ASSERT_TRUE(c.ok());
    // the best is the full tier's median (as optimize and report say it): a faster quick
    // timing (fewer samples, maybe smaller shapes) does not count
    NewEvaluation quick = test::test_evaluation(c->id, device_, 3, 9000.0);
    ASSERT_TRUE(store_->add_evaluation(quick).ok());
    NewEvaluation full = test::test_evaluation(c->id, device_, 3, 12000.0);
    full.tier = EvalTier::kFull;
    ASSERT_TRUE(store_->add_evaluation(full).ok());
    auto r = run_cli(db_arg() + "runs");
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("gemm_small"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("NVIDIA H200"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("running"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("12.001 us"), std::string::npos) << r.out;  // median 12001 ns
    EXPECT_EQ(r.out.find("9.001 us"), std::string::npos) << r.out;
}

TEST_F(CliDbTest, ExportWritesTheRunAsJson) {
    ASSERT_TRUE(store_->add_candidate(test::test_candidate(run_, problem_, "program a")).ok());
    std::string out = (dir_ / "run.json").string();
    auto r = run_cli(db_arg() + "export " + std::to_string(run_) + " -o " + out);
    ASSERT_EQ(r.rc, 0) << r.out;
    std::ifstream in(out);
    auto j = nlohmann::json::parse(in, nullptr, false);
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["run"]["id"], run_);
    EXPECT_EQ(j["candidates"][0]["program"], "program a");

    auto to_stdout = run_cli(db_arg() + "export " + std::to_string(run_));
    ASSERT_EQ(to_stdout.rc, 0);
    EXPECT_FALSE(nlohmann::json::parse(to_stdout.out, nullptr, false).is_discarded());
}

TEST_F(CliDbTest, UnknownRunIsAUserError) {
    auto r = run_cli(db_arg() + "export 4242");
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.out.find("run 4242 not found"), std::string::npos) << r.out;
}

TEST_F(CliDbTest, MissingOrUnreadableDatabaseIsAUserError) {
    auto missing = run_cli("db --db " + (dir_ / "absent.db").string() + " runs");
    EXPECT_EQ(missing.rc, 2);
    EXPECT_NE(missing.out.find("no database here"), std::string::npos) << missing.out;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "absent.db"));  // not created by a read

    std::string junk = (dir_ / "junk.db").string();
    std::ofstream(junk) << std::string(200, 'x');
    auto bad = run_cli("db --db " + junk + " runs");
    EXPECT_EQ(bad.rc, 2);
    EXPECT_NE(bad.out.find("not a database"), std::string::npos) << bad.out;
}

TEST_F(CliDbTest, MigrateCreatesTheFolderAndTheDatabase) {
    std::string path = (dir_ / "sub" / "dir" / "k.db").string();
    auto r = run_cli("db migrate --db " + path);
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("schema version"), std::string::npos) << r.out;
    EXPECT_TRUE(open_store(path).ok());
}

}  // namespace
}  // namespace kforge
