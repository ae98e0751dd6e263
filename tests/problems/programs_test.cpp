// The hand-written programs of the built-in suite (problems/<name>.kf beside problems/<name>.json):
// every problem has one, and each parses, is in canonical form, checks with zero errors against
// its problem on the H200's limits, and lowers to CUDA plus a launch plan with at least one launch
// per program kernel, in program order. The last case counts the kernel kinds and schedule
// families the suite's programs cover.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "sol/device.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

fs::path suite_dir() { return fs::path(KFORGE_SOURCE_DIR) / "problems"; }

std::vector<std::string> stems_with_extension(const std::string& ext) {
    std::vector<std::string> stems;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(suite_dir(), ec)) {
        if (entry.is_regular_file() && entry.path().extension() == ext)
            stems.push_back(entry.path().stem().string());
    }
    std::sort(stems.begin(), stems.end());
    return stems;
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    return buf.str();
}

dsl::DeviceLimits h200_limits() {
    auto device = find_device("h200");
    EXPECT_TRUE(device.ok()) << (device.ok() ? "" : device.error().to_string());
    return device.ok() ? dsl::device_limits(*device) : dsl::DeviceLimits{};
}

// One suite problem with its program, parsed, checked and lowered; `failure` says which step
// failed first (empty when all passed).
struct Pipeline {
    std::string stem;
    std::string text;
    Problem problem;
    dsl::Program program;
    dsl::CheckResult checked;
    codegen::Lowered lowered;
    std::string failure;
};

Pipeline run_pipeline(const std::string& stem) {
    Pipeline p;
    p.stem = stem;
    const fs::path kf = suite_dir() / (stem + ".kf");
    if (!fs::exists(kf)) {
        p.failure = "no program " + kf.string();
        return p;
    }
    p.text = read_text(kf);
    auto problem = load_problem((suite_dir() / (stem + ".json")).string());
    if (!problem) {
        p.failure = "problem: " + problem.error().to_string();
        return p;
    }
    p.problem = *problem;
    const std::string file = stem + ".kf";
    auto program = dsl::parse_program(p.text, file);
    if (!program) {
        p.failure = "parse: " + program.error().to_string();
        return p;
    }
    p.program = *program;
    dsl::CheckOptions options;
    options.file_name = file;
    options.source = p.text;
    p.checked = dsl::check_program(p.program, p.problem, h200_limits(), options);
    if (!p.checked.ok()) {
        p.failure = "check:";
        for (const Error& e : p.checked.errors) p.failure += "\n" + e.to_string();
        return p;
    }
    codegen::LowerOptions lower_options;
    lower_options.program_hash = dsl::program_hash(p.program);
    auto lowered = codegen::lower_program(p.program, p.problem, lower_options);
    if (!lowered) {
        p.failure = "lower: " + lowered.error().to_string();
        return p;
    }
    p.lowered = std::move(*lowered);
    return p;
}

TEST(SuitePrograms, EveryProblemHasAProgramAndNoProgramIsOrphaned) {
    const auto specs = stems_with_extension(".json");
    const auto programs = stems_with_extension(".kf");
    ASSERT_FALSE(specs.empty()) << "no problems under " << suite_dir();
    for (const auto& s : specs)
        EXPECT_TRUE(std::binary_search(programs.begin(), programs.end(), s))
            << "problems/" << s << ".json has no program problems/" << s << ".kf";
    for (const auto& s : programs)
        EXPECT_TRUE(std::binary_search(specs.begin(), specs.end(), s))
            << "problems/" << s << ".kf has no problem problems/" << s << ".json";
}

class SuiteProgram : public ::testing::TestWithParam<std::string> {};

TEST_P(SuiteProgram, ParsesIsCanonicalChecksAndLowers) {
    Pipeline p = run_pipeline(GetParam());
    ASSERT_TRUE(p.failure.empty()) << p.stem << ": " << p.failure;
    for (const std::string& w : p.checked.warnings) std::printf("%s: warning: %s\n", p.stem.c_str(), w.c_str());

    EXPECT_EQ(p.program.name, p.stem);
    EXPECT_EQ(p.program.problem, p.problem.name);
    EXPECT_EQ(dsl::print_canonical(p.program), p.text)
        << "problems/" << p.stem << ".kf is not canonical: run `kforge fmt` on it";

    EXPECT_FALSE(p.lowered.cuda_source.empty());
    const auto& launches = p.lowered.plan.kernels;
    ASSERT_GE(launches.size(), p.program.kernels.size());
    // Launches come in program order; each program kernel has one launch, or more when it
    // needs a second pass (split rows, column partials).
    size_t next = 0;
    for (const dsl::Kernel& k : p.program.kernels) {
        ASSERT_LT(next, launches.size()) << "no launch for kernel " << k.name;
        EXPECT_EQ(launches[next].name, k.name) << "launch " << next << " of " << p.stem;
        while (next < launches.size() && launches[next].name == k.name) ++next;
    }
    EXPECT_EQ(next, launches.size()) << p.stem << ": launches of no program kernel";
    for (const auto& launch : launches) {
        EXPECT_FALSE(launch.symbol.empty());
        EXPECT_NE(p.lowered.cuda_source.find(launch.symbol), std::string::npos)
            << launch.symbol << " is not in the CUDA source";
    }
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Suite, SuiteProgram, ::testing::ValuesIn(stems_with_extension(".json")),
                         param_name);

// The family a kernel represents: the gemm schedule, or the row op with its reduction layout.
std::string family_of(const dsl::Kernel& k) {
    switch (k.kind) {
    case dsl::KernelKind::kGemm: return "gemm " + std::string(dsl::to_string(k.gemm.schedule));
    case dsl::KernelKind::kRowwise: {
        const bool last = k.over.empty() || (!k.args.empty() && k.args[0].dims.back() == k.over);
        std::string f = "rowwise " + std::string(dsl::to_string(k.row_op));
        if (!last) f += " (column)";
        if (k.rowwise.split > 1) f += " split";
        if (k.rowwise.rows_per_block > 1) f += " multi-row";
        return f;
    }
    case dsl::KernelKind::kMap: {
        const bool reduces = std::any_of(k.chain.begin(), k.chain.end(), [](const dsl::ChainOp& o) {
            return o.kind == dsl::ChainOpKind::kReduce;
        });
        return reduces ? "map + reduce" : "map";
    }
    }
    return "?";
}

TEST(SuitePrograms, CoverageOfKernelKindsAndScheduleFamilies) {
    std::map<std::string, int> kinds, families, math;
    int programs = 0, launches = 0;
    for (const std::string& stem : stems_with_extension(".json")) {
        Pipeline p = run_pipeline(stem);
        if (!p.failure.empty()) continue;  // reported by SuiteProgram
        ++programs;
        launches += static_cast<int>(p.lowered.plan.kernels.size());
        for (const dsl::Kernel& k : p.program.kernels) {
            ++kinds[std::string(dsl::to_string(k.kind))];
            ++families[family_of(k)];
            if (k.kind == dsl::KernelKind::kGemm) ++math[std::string(dsl::to_string(k.gemm.math))];
        }
    }
    std::printf("%d suite programs lower to %d launches\nkernel kinds:\n", programs, launches);
    for (const auto& [k, n] : kinds) std::printf("  %-28s %d\n", k.c_str(), n);
    std::printf("families:\n");
    for (const auto& [f, n] : families) std::printf("  %-28s %d\n", f.c_str(), n);
    std::printf("gemm math modes:\n");
    for (const auto& [m, n] : math) std::printf("  %-28s %d\n", m.c_str(), n);
    EXPECT_EQ(programs, static_cast<int>(stems_with_extension(".json").size()));
    for (const char* kind : {"gemm", "rowwise", "map"})
        EXPECT_GT(kinds[kind], 0) << "no suite program has a " << kind << " kernel";
}

}  // namespace
}  // namespace kforge
