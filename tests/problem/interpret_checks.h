// Checks the problem stage's interpreter tests share: a parsed spec that must parse, and the
// fp64 interpreter's output "Y" (each failure reported where it happens, an empty value after).
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "problem/interpret.h"
#include "problem/spec.h"

namespace kforge::test {

inline Problem ok(const Expected<Problem>& p) {
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

inline std::vector<double> run(const Problem& p, const TensorValues& in) {
    auto out = interpret(p, in);
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
    return out.ok() ? out->at("Y") : std::vector<double>{};
}

}  // namespace kforge::test
