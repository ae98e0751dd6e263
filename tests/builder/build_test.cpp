// builder::build (builder/build.h): a suite program lowered with no_build (source and plan, the
// same bytes as codegen's lowering with the evaluator's options), the compile options and unit
// key it derives, and build errors as statuses. No GPU; a compile only where it must fail early.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "builder/build.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/interpret.h"
#include "problem/spec.h"

namespace kforge::builder {
namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "cannot read " << path;
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

Problem suite_problem(const std::string& name) {
    auto p = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".json");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

std::string suite_program(const std::string& name) {
    return read_text(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".kf");
}

Target h200() { return find_target("h200").value(); }

BuildOptions lower_only() {
    BuildOptions o;
    o.no_build = true;
    return o;
}

TEST(Build, SuiteProgramWithNoBuildGivesSourceAndPlan) {
    const Problem problem = suite_problem("layer_norm_f32");
    const std::string text = suite_program("layer_norm_f32");
    BuiltCandidate c = build(text, problem, h200(), lower_only());
    ASSERT_EQ(c.status, BuildStatus::kLowered) << c.message;
    EXPECT_TRUE(c.ok());
    EXPECT_TRUE(c.parsed);
    EXPECT_TRUE(c.message.empty());
    EXPECT_FALSE(c.compiled);
    EXPECT_EQ(c.arch, "sm_90a");
    EXPECT_EQ(c.canonical_text, dsl::print_canonical(c.program));
    EXPECT_EQ(c.program_hash, dsl::program_hash(c.program));
    EXPECT_FALSE(c.lowered.cuda_source.empty());
    ASSERT_FALSE(c.lowered.plan.kernels.empty());
    EXPECT_EQ(c.lowered.plan.program_hash, c.program_hash);

    // Byte for byte what codegen gives with the options the evaluator has always used.
    codegen::LowerOptions lower;
    lower.arch = "sm_90a";
    lower.sm_count = 132;
    lower.program_hash = dsl::program_hash(c.program);
    auto direct = codegen::lower_program(c.program, problem, lower);
    ASSERT_TRUE(direct.ok());
    EXPECT_EQ(c.lowered.cuda_source, direct->cuda_source);
    EXPECT_EQ(codegen::to_json(c.lowered.plan).dump(), codegen::to_json(direct->plan).dump());

    // A parsed program builds the same.
    BuiltCandidate again = build(c.program, problem, h200(), lower_only());
    ASSERT_EQ(again.status, BuildStatus::kLowered);
    EXPECT_EQ(again.lowered.cuda_source, c.lowered.cuda_source);
}

TEST(Build, CompileOptionsAndUnitKeyFollowTheTarget) {
    const Problem problem = suite_problem("layer_norm_f32");
    BuildOptions o = lower_only();
    o.compile_cache_dir = "/c";
    o.compile_timeout_s = 30;
    BuiltCandidate c = build(suite_program("layer_norm_f32"), problem, h200(), o);
    ASSERT_EQ(c.status, BuildStatus::kLowered) << c.message;
    const compile::CompileOptions& co = c.compile_options;
    EXPECT_EQ(co.arch, "sm_90a");
    EXPECT_TRUE(co.try_nvrtc);  // a plain row kernel: no CUTLASS, no host code
    EXPECT_FALSE(co.host_library);
    EXPECT_EQ(co.cache_dir, "/c");
    EXPECT_EQ(co.timeout_s, 30);
    EXPECT_EQ(co.include_dirs, compile::default_compile_options("sm_90a").include_dirs);

    codegen::Lowered host;
    host.has_host_code = host.uses_cutlass = true;
    compile::CompileOptions hc = compile_options(host, h200(), o);
    EXPECT_FALSE(hc.try_nvrtc);
    EXPECT_TRUE(hc.host_library);

    BuiltCandidate a100 = build(suite_program("layer_norm_f32"), problem,
                                find_target("a100-sxm").value(), o);
    ASSERT_EQ(a100.status, BuildStatus::kLowered) << a100.message;
    EXPECT_EQ(a100.compile_options.arch, "sm_80");
    EXPECT_NE(compile_unit_key(a100), compile_unit_key(c));
    EXPECT_EQ(compile_unit_key(c).rfind("sm_90a|device|nvrtc|", 0), 0u);
}

TEST(Build, ConfigProblemIsPassedToTheLowering) {
    const Problem full = suite_problem("layer_norm_f32");
    std::map<std::string, int64_t> dims = full.dims;
    for (auto& [name, value] : dims) value = std::min<int64_t>(value, 64);
    auto rebound = rebind_dims(full, dims);
    ASSERT_TRUE(rebound.ok()) << rebound.error().to_string();
    const Problem small = *rebound;
    BuildOptions o = lower_only();
    o.config_problem = &full;
    BuiltCandidate c = build(suite_program("layer_norm_f32"), small, h200(), o);
    ASSERT_EQ(c.status, BuildStatus::kLowered) << c.message;
    codegen::LowerOptions lower;
    lower.program_hash = c.program_hash;
    lower.config_problem = &full;
    auto direct = codegen::lower_program(c.program, small, lower);
    ASSERT_TRUE(direct.ok());
    EXPECT_EQ(c.lowered.cuda_source, direct->cuda_source);
}

TEST(Build, AnUnparsableProgramIsAStatus) {
    BuiltCandidate c = build("program broken for \"layer_norm_f32\"\nkernel k0 = ???\n",
                             suite_problem("layer_norm_f32"), h200(), lower_only());
    EXPECT_EQ(c.status, BuildStatus::kInvalidProgram);
    EXPECT_FALSE(c.ok());
    EXPECT_FALSE(c.parsed);
    ASSERT_EQ(c.errors.size(), 1u);
    EXPECT_EQ(c.message, c.errors.front().to_string());
    EXPECT_TRUE(c.lowered.cuda_source.empty());
}

TEST(Build, AProgramThatDoesNotCheckIsAStatus) {
    BuildOptions o = lower_only();
    o.file_name = "wrong.kf";
    BuiltCandidate c = build(R"(program wrong_tensor for "layer_norm_f32"
kernel k0 = rowwise layer_norm(Q[R,C], w[C], b[C]) rows_per_block 1 threads 256 vec 4
    passes 1 split 1
    { store Y[R,C] }
)", suite_problem("layer_norm_f32"), h200(), o);
    EXPECT_EQ(c.status, BuildStatus::kInvalidProgram);
    EXPECT_TRUE(c.parsed);
    ASSERT_FALSE(c.errors.empty());
    EXPECT_NE(c.message.find("wrong.kf"), std::string::npos) << c.message;
    EXPECT_NE(c.message.find("Q"), std::string::npos) << c.message;
    EXPECT_TRUE(c.lowered.cuda_source.empty());

    // check_only stops after the checker
    BuildOptions check = lower_only();
    check.check_only = true;
    BuiltCandidate ok = build(suite_program("layer_norm_f32"), suite_problem("layer_norm_f32"),
                              h200(), check);
    EXPECT_EQ(ok.status, BuildStatus::kChecked);
    EXPECT_TRUE(ok.ok());
    EXPECT_TRUE(ok.lowered.cuda_source.empty());
}

TEST(Build, ALoweringRefusalIsAStatus) {
    // A TMA schedule on an sm_80 target: the checker refuses it; unchecked, the lowering does.
    const Problem problem = suite_problem("gemm_bf16_4096");
    const std::string text = suite_program("gemm_bf16_4096");
    const Target a100 = find_target("a100-sxm").value();
    BuiltCandidate checked = build(text, problem, a100, lower_only());
    EXPECT_EQ(checked.status, BuildStatus::kInvalidProgram);
    BuildOptions o = lower_only();
    o.check = false;
    BuiltCandidate c = build(text, problem, a100, o);
    EXPECT_EQ(c.status, BuildStatus::kLoweringFailed);
    ASSERT_EQ(c.errors.size(), 1u);
    EXPECT_NE(c.message.find("sm_80"), std::string::npos) << c.message;
}

TEST(Build, ACompileThatCannotStartIsAStatus) {
    // No cache and no out_dir: nowhere to compile to (without a toolchain, that comes first).
    BuiltCandidate c = build(suite_program("layer_norm_f32"), suite_problem("layer_norm_f32"),
                             h200(), BuildOptions{});
    EXPECT_FALSE(c.ok());
    EXPECT_TRUE(c.status == BuildStatus::kCompileSetupFailed ||
                c.status == BuildStatus::kToolchainMissing)
        << to_string(c.status);
    EXPECT_FALSE(c.message.empty());
    EXPECT_FALSE(c.lowered.cuda_source.empty());  // lowered before the compile was tried
}

TEST(Build, StatusNamesRoundTrip) {
    for (BuildStatus s :
         {BuildStatus::kBuilt, BuildStatus::kLowered, BuildStatus::kChecked,
          BuildStatus::kInvalidProgram, BuildStatus::kLoweringFailed, BuildStatus::kCompileFailed,
          BuildStatus::kCompileTimedOut, BuildStatus::kToolchainMissing,
          BuildStatus::kCompileSetupFailed, BuildStatus::kCompileAborted})
        EXPECT_EQ(build_status_from_string(to_string(s)), s);
    EXPECT_FALSE(build_status_from_string("bogus"));
}

}  // namespace
}  // namespace kforge::builder
