// Bounds for every built-in problem (problems/*.json) through the real parser, on every device
// in the table: no errors, positive and consistent times.
#include <gtest/gtest.h>

#include <filesystem>

#include "problem/spec.h"
#include "sol/bounds.h"

namespace kforge {
namespace {

TEST(SuiteBounds, EveryBuiltInProblemOnEveryDevice) {
    const auto dir = std::filesystem::path(KFORGE_SOURCE_DIR) / "problems";
    int checked = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".json") continue;
        SCOPED_TRACE(entry.path().string());
        auto problem = load_problem(entry.path().string());
        ASSERT_TRUE(problem.ok()) << problem.error().to_string();
        for (const auto& spec : device_table()) {
            SCOPED_TRACE(spec.name);
            auto b = compute_bounds(*problem, effective_ceilings(spec, std::nullopt));
            ASSERT_TRUE(b.ok()) << b.error().to_string();
            EXPECT_GT(b->work.flops(), 0.0);
            EXPECT_GT(b->work.bytes_fused, 0.0);
            EXPECT_GE(b->work.bytes_unfused, b->work.bytes_fused);
            EXPECT_GT(b->time_fused_s, 0.0);
            EXPECT_GE(b->time_unfused_s, b->time_fused_s * (1.0 - 1e-12));
            EXPECT_GE(b->time_unfused_s,
                      std::max(b->time_compute_s, b->time_memory_unfused_s) * (1.0 - 1e-12));
            EXPECT_LT(b->gaming_threshold_s, b->time_fused_s);
            EXPECT_GT(b->gaming_threshold_s, 0.0);
        }
        ++checked;
    }
    EXPECT_GE(checked, 30) << "the built-in suite has 35 problems";
}

}  // namespace
}  // namespace kforge
