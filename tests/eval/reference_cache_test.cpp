// ReferenceCache: one case per (spec, shape, distribution, seed), references computed once,
// ids never reused, least recently used cases dropped past the byte budget.
#include <unistd.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "eval/evaluate_internal.h"
#include "eval/reference_cache.h"
#include "problem/interpret.h"
#include "eval_fixture.h"

namespace kforge::eval {
namespace {

TEST(ReferenceCache, ComputesEachReferenceOnceAndKeysOnTheWholeCase) {
    Problem p = testing::suite_problem("row_sum_f32");
    auto small = rebind_dims(p, {{"R", 4}, {"C", 8}});
    ASSERT_TRUE(small.ok());
    ReferenceCache cache;
    int inputs_made = 0, references_made = 0;
    auto inputs = [&] {
        ++inputs_made;
        return TensorData{{"X", std::vector<double>(32, 1.0)}};
    };
    auto reference = [&](const TensorData&) -> Expected<TensorData> {
        ++references_made;
        return TensorData{{"Y", std::vector<double>(4, 8.0)}};
    };
    auto a = cache.get(*small, Distribution::kNormal, 7, inputs, reference);
    auto b = cache.get(*small, Distribution::kNormal, 7, inputs, reference);
    EXPECT_EQ(a->id, b->id);
    EXPECT_EQ(a->reference.get(), b->reference.get());
    EXPECT_EQ(inputs_made, 1);
    EXPECT_EQ(references_made, 1);
    auto c = cache.get(*small, Distribution::kNormal, 8, inputs, nullptr);  // other seed
    EXPECT_NE(c->id, a->id);
    EXPECT_EQ(c->reference, nullptr);  // not asked for
    auto d = cache.get(*small, Distribution::kUniform01, 7, inputs, reference);
    EXPECT_NE(d->id, a->id);
    auto other = rebind_dims(p, {{"R", 4}, {"C", 16}});
    ASSERT_TRUE(other.ok());
    auto inputs64 = [&] { return TensorData{{"X", std::vector<double>(64, 1.0)}}; };
    EXPECT_NE(cache.get(*other, Distribution::kNormal, 7, inputs64, nullptr)->id, a->id);
    EXPECT_EQ(cache.stats().reference_misses, 2);
    EXPECT_EQ(cache.stats().reference_hits, 1);
}

TEST(ReferenceCache, AFailedReferenceIsRememberedAndOldCasesAreDropped) {
    Problem p = testing::suite_problem("row_sum_f32");
    auto small = rebind_dims(p, {{"R", 4}, {"C", 8}});
    ASSERT_TRUE(small.ok());
    ReferenceCache cache(3 * 32 * 8);  // room for about three input sets of 32 doubles
    int made = 0;
    auto inputs = [&] {
        ++made;
        return TensorData{{"X", std::vector<double>(32, 1.0)}};
    };
    int failed = 0;
    auto failing = [&](const TensorData&) -> Expected<TensorData> {
        ++failed;
        return make_error("interpreter", "no");
    };
    auto a = cache.get(*small, Distribution::kNormal, 1, inputs, failing);
    EXPECT_EQ(a->reference, nullptr);
    EXPECT_NE(a->reference_error.find("no"), std::string::npos);
    cache.get(*small, Distribution::kNormal, 1, inputs, failing);
    EXPECT_EQ(failed, 1);
    for (uint64_t seed = 2; seed < 10; ++seed)
        cache.get(*small, Distribution::kNormal, seed, inputs, nullptr);
    EXPECT_LE(cache.stats().bytes, 3 * 32 * 8);
    int before = made;
    auto again = cache.get(*small, Distribution::kNormal, 1, inputs, nullptr);  // evicted
    EXPECT_EQ(made, before + 1);
    EXPECT_NE(again->id, a->id);  // ids are never reused
    EXPECT_EQ(a->inputs->at("X").size(), 32u);  // a holder keeps an evicted case alive
}

}  // namespace
}  // namespace kforge::eval

namespace kforge::eval {
namespace {

TEST(ReferenceCache, ReferenceKindsAreKeptApart) {
    Problem p = testing::suite_problem("row_sum_f32");
    auto small = rebind_dims(p, {{"R", 4}, {"C", 8}});
    ASSERT_TRUE(small.ok());
    ReferenceCache cache;
    auto inputs = [] { return TensorData{{"X", std::vector<double>(32, 1.0)}}; };
    auto failing = [](const TensorData&) -> Expected<TensorData> {
        return make_error("", "NVRTC failed");
    };
    auto cpu = [](const TensorData&) -> Expected<TensorData> {
        return TensorData{{"Y", std::vector<double>(4, 8.0)}};
    };
    auto g = cache.get(*small, Distribution::kNormal, 1, inputs, failing, kGpuReferenceKind);
    EXPECT_EQ(g->reference, nullptr);
    EXPECT_EQ(g->reference_kind, kGpuReferenceKind);
    auto c = cache.get(*small, Distribution::kNormal, 1, inputs, cpu);  // not the GPU's error
    ASSERT_NE(c->reference, nullptr);
    EXPECT_EQ(c->reference_kind, kCpuReferenceKind);
    EXPECT_NE(c->id, g->id);
}

TEST(ReferenceCache, DefaultBudgetScalesWithTheHostWithinBounds) {
    int64_t bytes = default_reference_cache_bytes();
    EXPECT_GE(bytes, int64_t{2} << 30);
    EXPECT_LE(bytes, int64_t{64} << 30);
    int64_t physical = int64_t{sysconf(_SC_PHYS_PAGES)} * sysconf(_SC_PAGE_SIZE);
    if (physical / 2 >= (int64_t{2} << 30) && physical / 2 <= (int64_t{64} << 30))
        EXPECT_EQ(bytes, physical / 2);
}

TEST(MakeInputs, LargeTensorsGeneratedOnThreadsGiveTheSameValues) {
    Problem p = testing::suite_problem("gemm_f32_4096");
    auto shape = rebind_dims(p, {{"M", 1024}, {"N", 1024}, {"K", 1024}});  // 1M elements each
    ASSERT_TRUE(shape.ok());
    for (Distribution d : {Distribution::kUniform01, Distribution::kHeavyTailed}) {
        TensorData inputs = detail::make_inputs(*shape, d, 5);
        ASSERT_EQ(inputs.size(), 2u);
        for (const Tensor* t : shape->graph_inputs())
            EXPECT_EQ(inputs.at(t->name), generate(*t, d, 5)) << t->name;
    }
}

TEST(MakeInputs, TimingCaseDrawsAsTheSpecSaysAndKeysOnIt) {
    // every timing (gate, launch mode, time_programs) runs on the spec's draws: normal unless
    // the spec says otherwise, never the quick tier's uniform [0, 1) nor the last correctness
    // round's inputs
    Problem p = testing::suite_problem("gemm_fp16_4096");
    auto shape = rebind_dims(p, {{"M", 64}, {"N", 32}, {"K", 16}});
    ASSERT_TRUE(shape.ok());
    ReferenceCache cache;
    auto normal = detail::timing_case(cache, *shape, 1);
    for (const Tensor* t : shape->graph_inputs()) {
        EXPECT_EQ(normal->inputs->at(t->name), generate(*t, Distribution::kNormal, 1 + 4242))
            << t->name;
        const auto& v = normal->inputs->at(t->name);
        EXPECT_LT(*std::min_element(v.begin(), v.end()), 0.0) << t->name << ": N(0, 1) draws";
    }
    EXPECT_EQ(detail::timing_case(cache, *shape, 1)->id, normal->id) << "cached";
    Problem uniform = *shape;
    for (Tensor& t : uniform.tensors)
        if (t.name == "A") t.distribution = Distribution::kUniform01;
    auto mixed = detail::timing_case(cache, uniform, 1);
    EXPECT_NE(mixed->id, normal->id) << "the spec's distributions are part of the case";
    const auto& a = mixed->inputs->at("A");
    EXPECT_GE(*std::min_element(a.begin(), a.end()), 0.0);
    EXPECT_LE(*std::max_element(a.begin(), a.end()), 1.0);  // [0, 1) rounded to f16
    EXPECT_EQ(mixed->inputs->at("B"), normal->inputs->at("B"));
}

}  // namespace
}  // namespace kforge::eval
