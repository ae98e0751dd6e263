// The one CUTLASS compile in CI: lower the bf16 gemm + bias + relu program and build it with
// nvcc into a cubin and a host library (about a minute). Asserts no spills, the extern "C"
// wrapper in the cubin and the param builder in the library. Integration; no GPU needed.
#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "codegen/host_abi.h"
#include "codegen/lower.h"
#include "compile/compile.h"
#include "tests/codegen/gemm_fixtures.h"

namespace kforge::codegen {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(GemmCompile, BiasReluBf16BuildsCubinAndHostLibrary) {
    auto lowered = lower_program(gemm_testing::program_gemm_bias_relu_bf16(),
                                 gemm_testing::problem_gemm_bias_relu_bf16(), LowerOptions{});
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    fs::path out = fs::temp_directory_path() / ("kforge_gemm_compile_" + std::to_string(getpid()));
    fs::remove_all(out);
    compile::CompileOptions o = compile::default_compile_options("sm_90a");
    o.host_library = lowered->has_host_code;
    o.out_dir = out.string();
    o.timeout_s = 900;
    auto r = compile::compile_cuda(lowered->cuda_source, o);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_EQ(r->status, compile::CompileStatus::kOk) << r->log;
    std::printf("compile time: %.1f s\n%s", r->time_compile_ns / 1e9,
                compile::format_ptxas_report(r->kernels).c_str());

    ASSERT_EQ(r->kernels.size(), 1u) << r->log;
    EXPECT_EQ(r->kernels[0].name, "kforge_k0");
    EXPECT_FALSE(r->kernels[0].spills()) << compile::format_ptxas_report(r->kernels);
    EXPECT_EQ(r->kernels[0].stack_bytes, 0);
    EXPECT_EQ(r->log.find("C7510"), std::string::npos) << "wgmma serialized:\n" << r->log;

    // The unmangled wrapper is a symbol of the cubin (an ELF file).
    std::string cubin = read_bytes(r->cubin_path);
    ASSERT_GE(cubin.size(), 4u);
    EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
    EXPECT_NE(cubin.find(std::string("\0kforge_k0\0", 11)), std::string::npos);

    // The param builder is an exported C symbol of the host library.
    void* lib = dlopen(r->host_library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    auto* builder = reinterpret_cast<KforgeParamBuilderFn>(dlsym(lib, "kforge_build_k0"));
    EXPECT_NE(builder, nullptr);
    if (builder) {  // wrong ABI version is refused before any CUDA call
        KforgeBuildArgs args{};
        args.abi_version = KFORGE_HOST_ABI_VERSION + 1;
        KforgeBuiltLaunch launch{};
        EXPECT_EQ(builder(&args, &launch), KFORGE_BUILD_BAD_ARGS);
    }
    dlclose(lib);
    fs::remove_all(out);
}

}  // namespace
}  // namespace kforge::codegen
