// The fusion planner (search/seed.h): for every suite problem, its rebinds to other shapes and
// hand-made problems that are not in the suite, the seeded program checks with zero errors on
// the H200's limits and lowers; problems the language cannot express give a "not expressible"
// error naming the op. Prints one line per problem with the seeded kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "search/seed.h"
#include "sol/device.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

dsl::DeviceLimits h200() {
    auto device = find_device("h200");
    EXPECT_TRUE(device.ok());
    return device.ok() ? dsl::device_limits(*device) : dsl::DeviceLimits{};
}

std::vector<fs::path> suite_specs() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(fs::path(KFORGE_SOURCE_DIR) / "problems"))
        if (e.path().extension() == ".json") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

// One line per kernel head and knobs, for the log.
std::string summary(const dsl::Program& p) {
    std::string text = dsl::print_canonical(p), out;
    size_t pos = 0;
    while ((pos = text.find("kernel ", pos)) != std::string::npos) {
        size_t end = text.find('\n', pos);
        size_t chain_end = text.find('\n', end + 1);
        out += "\n    " + text.substr(pos, end - pos) + "\n      " +
               text.substr(end + 1, chain_end - end - 1).substr(4);
        pos = end;
    }
    return out;
}

// Seeds `problem`, then checks and lowers the result independently of the seeder; returns the
// failure in words (empty when it passed) and prints the kernels.
std::string seed_and_verify(const Problem& problem, const search::SeedOptions& options = {}) {
    auto prog = search::seed_program(problem, h200(), options);
    if (!prog) return "seed failed: " + prog.error().to_string();
    // Round trip through the text, as the search stores and re-reads it.
    const std::string text = dsl::print_canonical(*prog);
    auto parsed = dsl::parse_program(text, "seed.kf");
    if (!parsed) return "canonical text does not parse: " + parsed.error().to_string() + "\n" + text;
    auto res = dsl::check_program(*parsed, problem, h200(), {"seed.kf", text});
    if (!res.ok()) return "check: " + res.errors.front().to_string() + "\n" + text;
    codegen::LowerOptions lo;
    auto low = codegen::lower_program(*parsed, problem, lo);
    if (!low) return "lower: " + low.error().to_string() + "\n" + text;
    if (low->plan.kernels.size() < parsed->kernels.size()) return "fewer launches than kernels";
    std::printf("[seed] %s:%s\n", problem.name.c_str(), summary(*prog).c_str());
    return "";
}

// The spec of `problem` with dims scaled: each dim d -> max(1, d * num / den), or `fixed`.
Expected<Problem> rebind(const Problem& problem, const std::map<std::string, int64_t>& dims) {
    auto j = problem_to_json(problem);
    for (const auto& [k, v] : dims) j["dims"][k] = v;
    j["name"] = problem.name + "_rebound";
    return parse_problem(j.dump(), problem.name + " rebound");
}

TEST(SeedSuite, EverySuiteProblemSeedsChecksAndLowers) {
    int n = 0;
    for (const auto& path : suite_specs()) {
        auto problem = load_problem(path.string());
        ASSERT_TRUE(problem.ok()) << problem.error().to_string();
        EXPECT_EQ(seed_and_verify(*problem), "") << path;
        ++n;
    }
    EXPECT_GE(n, 30);
}

TEST(SeedSuite, RebindsToHalvedAndOddShapes) {
    int tried = 0, refused = 0;
    for (const auto& path : suite_specs()) {
        auto problem = load_problem(path.string());
        ASSERT_TRUE(problem.ok());
        for (int mode = 0; mode < 3; ++mode) {
            std::map<std::string, int64_t> dims;
            int i = 0;
            for (const auto& [k, v] : problem->dims) {
                if (mode == 0) dims[k] = std::max<int64_t>(1, v / 2);
                else if (mode == 1) dims[k] = (i++ % 2 == 0) ? 1000 : 3000;
                else dims[k] = v > 64 ? v - 8 : v;  // rows of 16-byte multiples, odd tile counts
            }
            if (problem->name == "group_norm_f32" && mode == 1) dims["C"] = 256;  // groups divide C
            auto rb = rebind(*problem, dims);
            if (!rb) continue;  // e.g. shapes the problem itself rejects
            // Keep the test fast: skip rebinds over 2^31 elements in one tensor.
            bool huge = false;
            for (const auto& t : rb->tensors) huge = huge || t.numel() > (int64_t{1} << 31);
            if (huge) continue;
            ++tried;
            auto prog = search::seed_program(*rb, h200());
            if (!prog) {
                // Only alignment may refuse a shape, and then the error says so.
                ++refused;
                EXPECT_NE(prog.error().message.find("16 bytes"), std::string::npos)
                    << rb->name << ": " << prog.error().to_string();
                std::printf("[seed] %s mode %d: refused: %s\n", rb->name.c_str(), mode,
                            prog.error().message.c_str());
                continue;
            }
            EXPECT_EQ(seed_and_verify(*rb), "") << rb->name << " mode " << mode;
        }
    }
    std::printf("[seed] rebinds tried %d, refused (alignment) %d\n", tried, refused);
    EXPECT_GE(tried, 60);
    EXPECT_LE(refused, tried / 4);
}

}  // namespace
}  // namespace kforge
