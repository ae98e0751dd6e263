// `kforge compile` end to end without building: files written, plan readable, exit codes.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "codegen/launch_plan.h"

namespace kforge {
namespace {
namespace fs = std::filesystem;

int run_cli(const std::string& args) {
    std::string cmd = std::string(KFORGE_CLI_PATH) + " " + args + " > /dev/null 2>&1";
    int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string data(const std::string& name) {
    return std::string(KFORGE_TEST_DATA_DIR) + "/data/" + name;
}

TEST(CliCompile, NoBuildWritesSourceAndPlan) {
    fs::path out = fs::temp_directory_path() / ("kforge_cli_compile_" + std::to_string(getpid()));
    fs::remove_all(out);
    int rc = run_cli("compile " + data("gemm_bias_relu.kf") + " --problem " +
                     data("gemm_bias_relu_bf16_8192.json") + " -o " + out.string() + " --no-build");
    ASSERT_EQ(rc, 0);
    ASSERT_TRUE(fs::exists(out / "kernels.cu"));
    std::ifstream in(out / "plan.json");
    std::stringstream ss;
    ss << in.rdbuf();
    auto plan = codegen::launch_plan_from_json(nlohmann::json::parse(ss.str()));
    ASSERT_TRUE(plan.ok()) << plan.error().to_string();
    ASSERT_EQ(plan->kernels.size(), 1u);
    EXPECT_EQ(plan->kernels[0].param_builder, "kforge_build_k0");
    EXPECT_FALSE(plan->program_hash.empty());
    fs::remove_all(out);
}

TEST(CliCompileError, UserErrorsExitTwo) {
    fs::path out = fs::temp_directory_path() / ("kforge_cli_compile_e" + std::to_string(getpid()));
    std::string problem = " --problem " + data("gemm_bias_relu_bf16_8192.json");
    EXPECT_EQ(run_cli("compile /nonexistent.kf" + problem + " -o " + out.string()), 2);
    EXPECT_EQ(run_cli("compile " + data("gemm_bias_relu.kf") + " --problem /nonexistent.json -o " +
                      out.string()), 2);
    // reduce in a gemm epilogue: the checker or the CUTLASS lowering refuses it
    EXPECT_EQ(run_cli("compile " + data("gemm_reduce.kf") + problem + " -o " + out.string() +
                      " --no-build"), 2);
    fs::remove_all(out);
}

}  // namespace
}  // namespace kforge
