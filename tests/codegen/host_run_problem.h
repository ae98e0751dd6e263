// Helpers of the host-run tests that lower a problem (reduce_set, conv_direct): the problem of a
// JSON spec, and an int64 parameter of a lowered launch.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "codegen/launch_plan.h"
#include "problem/spec.h"

namespace kforge::codegen::hostrun {

// The problem of a JSON spec (a failed test and an empty problem when it does not parse).
inline Problem spec(const std::string& json) {
    auto p = parse_problem(json, "spec");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

// Launch `l`'s int64 parameter `name` (a failed test and 0 where it has none).
inline int64_t param(const KernelLaunch& l, const std::string& name) {
    for (const auto& p : l.params)
        if (p.name == name) return p.int_value;
    ADD_FAILURE() << l.symbol << " has no parameter " << name;
    return 0;
}

}  // namespace kforge::codegen::hostrun
