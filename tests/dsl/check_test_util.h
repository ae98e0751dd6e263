// Helpers for the checker's tests: parse a problem spec and a program from text, check them.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <string_view>

#include "dsl/check.h"
#include "dsl/parser.h"
#include "problem/spec.h"
#include "sol/device.h"

namespace kforge::dsl::testing {

inline DeviceLimits h200() { return device_limits(find_device("h200").value()); }

// Checks `program` against the problem in `problem_json`; a spec or syntax error fails the test
// (the checker is under test, not the parsers) and comes back as the only error.
inline CheckResult check_text(std::string_view problem_json, std::string_view program,
                              const DeviceLimits& limits = h200()) {
    CheckResult failed;
    auto problem = parse_problem(problem_json, "p.json");
    if (!problem.ok()) {
        ADD_FAILURE() << "problem: " << problem.error().to_string();
        failed.errors.push_back(problem.error());
        return failed;
    }
    auto parsed = parse_program(program, "t.kf");
    if (!parsed.ok()) {
        ADD_FAILURE() << "program: " << parsed.error().to_string();
        failed.errors.push_back(parsed.error());
        return failed;
    }
    return check_program(*parsed, *problem, limits, CheckOptions{"t.kf", program});
}

// As check_suite, after `edit` changed the parsed program: knob values the parser already
// refuses reach the checker only from hand-built programs (e.g. by proposers).
inline CheckResult check_edited(const std::string& name, std::string_view program,
                                const std::function<void(Program&)>& edit) {
    auto problem = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".json");
    auto parsed = parse_program(program, "t.kf");
    if (!problem.ok() || !parsed.ok()) {
        ADD_FAILURE() << "problem or program does not parse";
        return {};
    }
    edit(*parsed);
    return check_program(*parsed, *problem, h200(), CheckOptions{"t.kf", program});
}

// As check_text, with the problem from the built-in suite (problems/<name>.json).
inline CheckResult check_suite(const std::string& name, std::string_view program,
                               const DeviceLimits& limits = h200()) {
    auto problem = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".json");
    if (!problem.ok()) {
        ADD_FAILURE() << "problem: " << problem.error().to_string();
        return {};
    }
    return check_text(problem_to_json(*problem).dump(), program, limits);
}

inline std::string all_errors(const CheckResult& r) {
    std::string s;
    for (const auto& e : r.errors) s += e.to_string() + "\n";
    for (const auto& w : r.warnings) s += w + "\n";
    return s;
}

// `r` refused, and one of its errors (warnings not counted) contains `fragment`.
inline void expect_error_containing(const CheckResult& r, const std::string& fragment) {
    ASSERT_FALSE(r.ok()) << "accepted";
    std::string errors;
    for (const auto& e : r.errors) errors += e.to_string() + "\n";
    EXPECT_NE(errors.find(fragment), std::string::npos) << errors;
}

// Exactly one error, at `where`, whose message contains each of `parts`.
inline void expect_one_error(const CheckResult& r, const std::string& where,
                             std::initializer_list<std::string_view> parts) {
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].where, where) << all_errors(r);
    for (auto p : parts)
        EXPECT_NE(r.errors[0].message.find(p), std::string::npos)
            << "missing \"" << p << "\" in: " << r.errors[0].message;
    EXPECT_NE(r.errors[0].detail.find('^'), std::string::npos) << "no caret";
}

}  // namespace kforge::dsl::testing
