// The evaluation cache: a program already evaluated on the same device, toolchain, shapes and
// tier is found again, also from another run; anything else that differs is a miss.
#include <gtest/gtest.h>

#include "store_fixture.h"

namespace kforge {
namespace {

class CacheTest : public test::StoreTest {
protected:
    void SetUp() override {
        StoreTest::SetUp();
        auto c = store_->add_candidate(test::test_candidate(run_, problem_, "program a"));
        ASSERT_TRUE(c.ok());
        candidate_ = c->id;
        hash_ = content_hash("program a");
    }
    Expected<std::optional<EvaluationRecord>> find(int64_t device, const std::string& toolchain,
                                                   const std::string& shapes, EvalTier tier) {
        return store_->find_cached_evaluation(hash_, device, toolchain, shapes, tier);
    }
    int64_t candidate_ = 0;
    std::string hash_;
};

TEST_F(CacheTest, HitOnlyOnTheSameDeviceToolchainShapesAndTier) {
    auto none = find(device_, "nvcc 13.0", "M=64,N=64,K=64", EvalTier::kQuick);
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->has_value());

    auto id = store_->add_evaluation(test::test_evaluation(candidate_, device_, 3));
    ASSERT_TRUE(id.ok());
    auto hit = find(device_, "nvcc 13.0", "M=64,N=64,K=64", EvalTier::kQuick);
    ASSERT_TRUE(hit.ok() && hit->has_value());
    EXPECT_EQ((*hit)->id, *id);
    EXPECT_EQ((*hit)->measurements.size(), 3u);

    auto other_device = store_->upsert_device(test::test_device("GPU-other"));
    ASSERT_TRUE(other_device.ok());
    EXPECT_FALSE(find(*other_device, "nvcc 13.0", "M=64,N=64,K=64", EvalTier::kQuick)->has_value());
    EXPECT_FALSE(find(device_, "nvcc 13.1", "M=64,N=64,K=64", EvalTier::kQuick)->has_value());
    EXPECT_FALSE(find(device_, "nvcc 13.0", "M=128,N=64,K=64", EvalTier::kQuick)->has_value());
    EXPECT_FALSE(find(device_, "nvcc 13.0", "M=64,N=64,K=64", EvalTier::kFull)->has_value());
    EXPECT_FALSE(store_
                     ->find_cached_evaluation(content_hash("program b"), device_, "nvcc 13.0",
                                              "M=64,N=64,K=64", EvalTier::kQuick)
                     ->has_value());
}

TEST_F(CacheTest, HitAcrossRunsAndNewestWins) {
    auto first = store_->add_evaluation(test::test_evaluation(candidate_, device_, 2));
    ASSERT_TRUE(first.ok());
    NewRun r2;
    r2.problem_id = problem_;
    r2.device_id = device_;
    auto run2 = store_->create_run(r2);
    ASSERT_TRUE(run2.ok());
    auto c2 = store_->add_candidate(test::test_candidate(*run2, problem_, "program a"));
    ASSERT_TRUE(c2.ok());

    // Run 2 finds run 1's result and records that it reused it.
    auto hit = find(device_, "nvcc 13.0", "M=64,N=64,K=64", EvalTier::kQuick);
    ASSERT_TRUE(hit.ok() && hit->has_value());
    EXPECT_EQ((*hit)->id, *first);
    auto copy = test::test_evaluation(c2->id, device_, 2);
    copy.cached_from_id = (*hit)->id;
    auto second = store_->add_evaluation(copy);
    ASSERT_TRUE(second.ok());
    hit = find(device_, "nvcc 13.0", "M=64,N=64,K=64", EvalTier::kQuick);
    EXPECT_EQ((*hit)->id, *second);
    EXPECT_EQ((*hit)->cached_from_id, *first);

    auto bad_source = test::test_evaluation(c2->id, device_, 1);
    bad_source.cached_from_id = 4242;
    EXPECT_FALSE(store_->add_evaluation(bad_source).ok());
}

TEST_F(CacheTest, DeterministicFailuresAreCachedTimeoutsAndCrashesAreNot) {
    auto compile_failed = test::test_evaluation(candidate_, device_, 0);
    compile_failed.tier = EvalTier::kCompile;
    compile_failed.status = EvalStatus::kCompileFailed;
    compile_failed.error_text = "ptxas error: too much shared memory";
    ASSERT_TRUE(store_->add_evaluation(compile_failed).ok());
    auto hit = find(device_, "nvcc 13.0", "M=64,N=64,K=64", EvalTier::kCompile);
    ASSERT_TRUE(hit.ok() && hit->has_value());
    EXPECT_EQ((*hit)->status, EvalStatus::kCompileFailed);
    EXPECT_EQ((*hit)->error_text, "ptxas error: too much shared memory");

    for (EvalStatus s : {EvalStatus::kTimedOut, EvalStatus::kCrashed}) {
        auto e = test::test_evaluation(candidate_, device_, 0);
        e.tier = EvalTier::kFull;
        e.status = s;
        ASSERT_TRUE(store_->add_evaluation(e).ok());
        EXPECT_FALSE(find(device_, "nvcc 13.0", "M=64,N=64,K=64", EvalTier::kFull)->has_value())
            << to_string(s);
    }
    // A transient failure after a good result does not hide the good result.
    auto quick = test::test_evaluation(candidate_, device_, 2);
    auto good = store_->add_evaluation(quick);
    ASSERT_TRUE(good.ok());
    quick.status = EvalStatus::kCrashed;
    ASSERT_TRUE(store_->add_evaluation(quick).ok());
    hit = find(device_, "nvcc 13.0", "M=64,N=64,K=64", EvalTier::kQuick);
    ASSERT_TRUE(hit.ok() && hit->has_value());
    EXPECT_EQ((*hit)->id, *good);
}

}  // namespace
}  // namespace kforge
