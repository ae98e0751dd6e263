// Schema versions: a new file is created at the current version, an older one is migrated with
// its data kept (refusals are in errors_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>

#include "store/schema.h"
#include "store/store.h"
#include "store_fixture.h"

namespace kforge {
namespace {

class SchemaTest : public ::testing::Test {
protected:
    void SetUp() override { dir_ = test::make_temp_dir(); }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string db_path() const { return (dir_ / "kforge.db").string(); }
    std::filesystem::path dir_;
};

TEST_F(SchemaTest, NewStoreIsAtTheCurrentVersion) {
    auto s = open_store(db_path());
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    EXPECT_EQ(*schema_version(s->db()), kSchemaVersion);
    // Opening again is a no-op.
    s = open_store(db_path());
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    EXPECT_EQ(*schema_version(s->db()), kSchemaVersion);
}

TEST_F(SchemaTest, MigratesVersion1ToCurrentKeepingData) {
    {
        auto db = Database::open(db_path());
        ASSERT_TRUE(db.ok());
        ASSERT_TRUE(migrate(*db, 1).ok());
        ASSERT_EQ(*schema_version(*db), 1);
        // Version 1 has no llm_requests table and no evaluations.cached_from_id column.
        EXPECT_FALSE(db->exec("SELECT count(*) FROM llm_requests").ok());
        ASSERT_TRUE(db->exec(R"sql(
            INSERT INTO problems (id, name, spec_json, content_hash) VALUES (1, 'p', '{}', 'h');
            INSERT INTO devices (id, name, uuid, compute_capability, driver, datasheet_key)
                VALUES (1, 'NVIDIA H200', 'GPU-1', '9.0', '580', 'h200_sxm');
            INSERT INTO runs (id, problem_id, device_id) VALUES (1, 1, 1);
            INSERT INTO candidates (id, run_id, problem_id, program_text, content_hash, proposer)
                VALUES (1, 1, 1, 'program x', 'hash-x', 'human');
            INSERT INTO evaluations (id, candidate_id, device_id, toolchain, shapes_key, tier,
                                     status, flops, bytes)
                VALUES (1, 1, 1, 'nvcc 13.0', 'M=64', 'full', 'passed', 100, 200);
            INSERT INTO measurements (evaluation_id, label, sample_index, time_ns)
                VALUES (1, 'candidate', 0, 1500.0), (1, 'candidate', 1, 1400.0);
        )sql").ok());
    }
    auto s = open_store(db_path());
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    EXPECT_EQ(*schema_version(s->db()), kSchemaVersion);
    auto e = s->get_evaluation(1);
    ASSERT_TRUE(e.ok()) << e.error().to_string();
    EXPECT_EQ(e->status, EvalStatus::kPassed);
    EXPECT_EQ(e->tier, EvalTier::kFull);
    EXPECT_FALSE(e->cached_from_id.has_value());
    ASSERT_EQ(e->measurements.size(), 2u);
    EXPECT_DOUBLE_EQ(*median_time_ns(e->measurements), 1450.0);
    // The v1 evaluation serves the cache after the migration.
    auto hit = s->find_cached_evaluation("hash-x", 1, "nvcc 13.0", "M=64", EvalTier::kFull);
    ASSERT_TRUE(hit.ok() && hit->has_value());
    EXPECT_EQ((*hit)->id, 1);
    // Version 2's table is there.
    NewLlmRequest r;
    r.run_id = 1;
    r.provider = "openai";
    r.model = "gpt";
    r.request_hash = "rh";
    r.prompt = "p";
    r.reply = "r";
    EXPECT_TRUE(s->add_llm_request(r).ok());
    // Version 3: the v1 run reads with empty metadata; a new run keeps what produced it.
    auto old_run = s->get_run(1);
    ASSERT_TRUE(old_run.ok()) << old_run.error().to_string();
    EXPECT_EQ(old_run->kforge_version, "");
    NewRun nr;
    nr.problem_id = 1;
    nr.device_id = 1;
    nr.kforge_version = "0.9.0";
    nr.git_commit = "abc1234";
    nr.toolchain = "nvcc 13.0";
    auto id = s->create_run(nr);
    ASSERT_TRUE(id.ok()) << id.error().to_string();
    auto run = s->get_run(*id);
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run->kforge_version, "0.9.0");
    EXPECT_EQ(run->git_commit, "abc1234");
    EXPECT_EQ(run->toolchain, "nvcc 13.0");
    // Version 4: the v1 evaluation has no per-kernel times.
    EXPECT_TRUE(e->kernel_times_ns.empty());
}

// An interrupted run taken up again is running until it finishes; `db runs`' best is the
// fastest full-tier median (a faster quick timing does not count).
TEST_F(SchemaTest, InterruptedRunResumesAndBestIsFullTier) {
    auto s = open_store(db_path());
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    ASSERT_TRUE(s->db().exec(R"sql(
        INSERT INTO problems (id, name, spec_json, content_hash) VALUES (1, 'p', '{}', 'h');
        INSERT INTO devices (id, name, uuid, compute_capability, driver, datasheet_key)
            VALUES (1, 'sim', 'sim-1', '9.0', '', 'h200');
        INSERT INTO runs (id, problem_id, device_id) VALUES (1, 1, 1);
        INSERT INTO candidates (id, run_id, problem_id, program_text, content_hash, proposer)
            VALUES (1, 1, 1, 'program x', 'hash-x', 'start');
        INSERT INTO evaluations (id, candidate_id, device_id, toolchain, shapes_key, tier,
                                 status, flops, bytes)
            VALUES (1, 1, 1, 't', 'k', 'quick', 'passed', 1, 1),
                   (2, 1, 1, 't', 'k', 'full', 'passed', 1, 1);
        INSERT INTO measurements (evaluation_id, label, sample_index, time_ns)
            VALUES (1, 'candidate', 0, 900.0), (2, 'candidate', 0, 1000.0);
    )sql").ok());
    ASSERT_TRUE(s->finish_run(1, RunStatus::kInterrupted).ok());
    EXPECT_EQ(s->get_run(1)->status, RunStatus::kInterrupted);
    EXPECT_TRUE(s->get_run(1)->finished_at.has_value());
    ASSERT_TRUE(s->resume_run(1).ok());
    EXPECT_EQ(s->get_run(1)->status, RunStatus::kRunning);
    EXPECT_FALSE(s->get_run(1)->finished_at.has_value());
    EXPECT_FALSE(s->resume_run(7).ok());
    auto runs = s->list_runs();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), 1u);
    ASSERT_TRUE((*runs)[0].best_time_ns.has_value());
    EXPECT_DOUBLE_EQ(*(*runs)[0].best_time_ns, 1000.0);
}

TEST_F(SchemaTest, InMemoryStoreWorks) {
    auto s = open_store(":memory:");
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    EXPECT_EQ(*schema_version(s->db()), kSchemaVersion);
}

}  // namespace
}  // namespace kforge
