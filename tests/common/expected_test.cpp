#include "common/expected.h"

#include <gtest/gtest.h>

namespace kforge {
namespace {

Expected<int> half(int x) {
    if (x % 2 != 0) return make_error("x", "must be even, got " + std::to_string(x));
    return x / 2;
}

TEST(Expected, ValueAndError) {
    auto a = half(4);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(*a, 2);
    auto b = half(3);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.error().to_string(), "x: must be even, got 3");
}

TEST(Expected, ErrorDetailOnNextLine) {
    Error e = make_error("p.kf:3:7", "unknown knob", "  tile 1x2\n      ^");
    EXPECT_EQ(e.to_string(), "p.kf:3:7: unknown knob\n  tile 1x2\n      ^");
}

}  // namespace
}  // namespace kforge
