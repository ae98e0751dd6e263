// Test helpers for the fusion planner's tests: the seeded program of a problem for the H200,
// checked the way the search uses it (re-parsed from its canonical text, statically checked,
// lowered), and small readers of its text.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "planner/plan.h"
#include "sol/device.h"

namespace kforge::seedtest {

inline dsl::DeviceLimits h200() { return dsl::device_limits(find_device("h200").value()); }

// The problem of a spec's JSON text; a parse error is a test failure (and an empty problem).
inline Problem problem_of(const std::string& json, const std::string& file = "spec.json") {
    auto p = parse_problem(json, file);
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

// The seeded program's canonical text, after it re-parses to the same program, checks and
// lowers (each failure is a test failure with the text).
inline std::string seed_checked(const Problem& problem, const planner::SeedOptions& options = {}) {
    auto prog = planner::seed_program(problem, h200(), options);
    EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
    if (!prog.ok()) return "";
    const std::string text = dsl::print_canonical(*prog);
    auto parsed = dsl::parse_program(text, "seed.kf");
    EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().to_string()) << text;
    if (!parsed.ok()) return text;
    EXPECT_EQ(dsl::strip_locations(*parsed), *prog) << text;
    auto res = dsl::check_program(*parsed, problem, h200(), {"seed.kf", text});
    EXPECT_TRUE(res.ok()) << (res.ok() ? "" : res.errors.front().to_string()) << "\n" << text;
    auto low = codegen::lower_program(*parsed, problem, codegen::LowerOptions{});
    EXPECT_TRUE(low.ok()) << (low.ok() ? "" : low.error().to_string()) << "\n" << text;
    return text;
}

// How many kernels a program text declares.
inline size_t kernels(const std::string& text) {
    size_t n = 0;
    for (size_t at = text.find("\nkernel "); at != std::string::npos; at = text.find("\nkernel ", at + 1))
        ++n;
    return n;
}

inline bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The CUDA source program `text` lowers to for `p` ("" where it does not parse or lower).
inline std::string lowered_source(const Problem& p, const std::string& text) {
    auto parsed = dsl::parse_program(text, "seed.kf");
    if (!parsed.ok()) return "";
    auto low = codegen::lower_program(*parsed, p, codegen::LowerOptions{});
    return low.ok() ? low->cuda_source : "";
}

}  // namespace kforge::seedtest
