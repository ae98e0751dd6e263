// The JSON export of a run: key order, embedded JSON columns, nesting and error on unknown run.
#include <gtest/gtest.h>

#include "store/export.h"
#include "store/schema.h"
#include "store_fixture.h"

namespace kforge {
namespace {

using test::StoreTest;

std::vector<std::string> keys(const nlohmann::ordered_json& j) {
    std::vector<std::string> out;
    for (const auto& [k, v] : j.items()) out.push_back(k);
    return out;
}

TEST_F(StoreTest, ExportRunHasTheDocumentedShape) {
    auto seed = store_->add_candidate(test::test_candidate(run_, problem_, "program a"));
    ASSERT_TRUE(seed.ok());
    auto child_spec = test::test_candidate(run_, problem_, "program b");
    child_spec.parent_ids = {seed->id};
    child_spec.proposer = "llm:claude";
    child_spec.move = "tile 128x128 -> 128x256";
    auto child = store_->add_candidate(child_spec);
    ASSERT_TRUE(child.ok());
    ASSERT_TRUE(store_->add_artefact(child->id, ArtefactKind::kCudaSource, "// cuda").ok());
    auto ev = test::test_evaluation(child->id, device_, 3, 500.0);
    ev.measurements.push_back(MeasurementRecord{"baseline", 0, 900.0, {}, {}, {}, {}});
    ASSERT_TRUE(store_->add_evaluation(ev).ok());
    ASSERT_TRUE(store_->finish_run(run_, RunStatus::kFinished).ok());

    auto j = export_run_json(*store_, run_);
    ASSERT_TRUE(j.ok()) << j.error().to_string();
    EXPECT_EQ(keys(*j), (std::vector<std::string>{"kforge_run_export", "schema_version", "run",
                                                  "devices", "problems", "candidates"}));
    EXPECT_EQ((*j)["kforge_run_export"], kRunExportVersion);
    EXPECT_EQ((*j)["schema_version"], kSchemaVersion);

    const auto& run = (*j)["run"];
    EXPECT_EQ(keys(run), (std::vector<std::string>{"id", "problem", "suite", "device_id", "status",
                                                   "started_at", "finished_at", "kforge_version",
                                                   "git_commit", "toolchain", "options"}));
    EXPECT_EQ(run["problem"], "gemm_small");
    EXPECT_TRUE(run["suite"].is_null());
    EXPECT_EQ(run["status"], "finished");
    EXPECT_EQ(run["options"]["budget_s"], 60);  // embedded JSON, not a string

    ASSERT_EQ((*j)["devices"].size(), 1u);
    EXPECT_EQ((*j)["devices"][0]["uuid"], "GPU-test-0001");
    ASSERT_EQ((*j)["problems"].size(), 1u);
    EXPECT_EQ((*j)["problems"][0]["spec"]["dims"]["M"], 64);

    const auto& cands = (*j)["candidates"];
    ASSERT_EQ(cands.size(), 2u);
    EXPECT_EQ(keys(cands[1]),
              (std::vector<std::string>{"id", "problem_id", "content_hash", "proposer", "move",
                                        "parent_ids", "created_at", "program", "artefacts",
                                        "evaluations"}));
    EXPECT_EQ(cands[1]["parent_ids"], nlohmann::ordered_json::array({seed->id}));
    EXPECT_EQ(cands[1]["program"], "program b");
    EXPECT_EQ(cands[1]["artefacts"][0]["kind"], "cuda_source");
    EXPECT_TRUE(cands[0]["evaluations"].empty());
    const auto& e = cands[1]["evaluations"][0];
    EXPECT_EQ(e["tier"], "quick");
    EXPECT_EQ(e["status"], "passed");
    EXPECT_EQ(e["evidence"]["max_abs_error"], 1e-6);
    EXPECT_EQ(e["flops"], 2 * 64 * 64 * 64);
    EXPECT_DOUBLE_EQ(e["median_time_ns"].get<double>(), 501.0);  // baseline sample excluded
    ASSERT_EQ(e["measurements"].size(), 4u);
    EXPECT_EQ(e["measurements"][0]["label"], "baseline");
    EXPECT_TRUE(e["measurements"][0]["sm_clock_mhz"].is_null());
    EXPECT_EQ(e["measurements"][1]["sm_clock_mhz"], 1980);
    EXPECT_FALSE(e.contains("throughput"));  // derived values are not stored or exported
}

TEST_F(StoreTest, ExportOfAnUnknownRunIsAUserError) {
    auto j = export_run_json(*store_, 999);
    ASSERT_FALSE(j.ok());
    EXPECT_NE(j.error().message.find("run 999 not found"), std::string::npos);
}

}  // namespace
}  // namespace kforge
