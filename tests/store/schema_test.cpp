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
}

TEST_F(SchemaTest, InMemoryStoreWorks) {
    auto s = open_store(":memory:");
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    EXPECT_EQ(*schema_version(s->db()), kSchemaVersion);
}

}  // namespace
}  // namespace kforge
