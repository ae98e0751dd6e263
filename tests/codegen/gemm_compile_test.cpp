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

// math f32_simt (CUTLASS's SIMT GemmUniversal, default epilogue) and math tf32x3 multistage (the
// Sm80 visitor tree, whose thread-map static_assert must hold) build; the SIMT param builder,
// run here on the CPU, returns the launch the evaluator makes: one 128-thread CTA per 128x128
// tile, no workspace, the kernel's SharedStorage as dynamic smem. (f32_simt through the visitor
// tree compiled and wrote almost all zeros on the H200, 2026-12-02.)
TEST(GemmCompile, SquareF32MultistageSimtAndTf32x3Build) {
    for (dsl::MathMode math : {dsl::MathMode::kF32Simt, dsl::MathMode::kTf32x3}) {
        const bool simt = math == dsl::MathMode::kF32Simt;
        auto lowered = lower_program(gemm_testing::program_square_f32(math),
                                     gemm_testing::problem_square_f32(), LowerOptions{});
        ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
        fs::path out = fs::temp_directory_path() /
                       ("kforge_gemm_compile_sq_" + std::to_string(getpid()));
        fs::remove_all(out);
        compile::CompileOptions o = compile::default_compile_options("sm_90a");
        o.host_library = lowered->has_host_code;
        o.out_dir = out.string();
        o.timeout_s = 900;
        auto r = compile::compile_cuda(lowered->cuda_source, o);
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        ASSERT_EQ(r->status, compile::CompileStatus::kOk) << r->log;
        std::printf("%s: compile %.1f s\n%s", simt ? "f32_simt" : "tf32x3",
                    r->time_compile_ns / 1e9, compile::format_ptxas_report(r->kernels).c_str());
        ASSERT_EQ(r->kernels.size(), 1u) << r->log;
        EXPECT_FALSE(r->kernels[0].spills()) << compile::format_ptxas_report(r->kernels);

        void* lib = dlopen(r->host_library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(lib, nullptr) << dlerror();
        auto* builder = reinterpret_cast<KforgeParamBuilderFn>(dlsym(lib, "kforge_build_k0"));
        ASSERT_NE(builder, nullptr);
        // the builder only encodes pointers; it never dereferences them
        alignas(16) static char fake[3][256];
        void* tensors[3] = {fake[0], fake[1], fake[2]};
        alignas(64) static unsigned char params[8192];
        for (int64_t n : {int64_t{128}, int64_t{2048}, int64_t{200}}) {
            const int64_t dims[3] = {n, n, n};  // N, N_1, N_2
            KforgeBuildArgs args{};
            args.abi_version = KFORGE_HOST_ABI_VERSION;
            args.num_tensors = 3;
            args.tensors = tensors;
            args.num_dims = 3;
            args.dims = dims;
            args.sm_count = 132;
            KforgeBuiltLaunch launch{};
            launch.params = params;
            launch.params_capacity = sizeof params;
            ASSERT_EQ(builder(&args, &launch), KFORGE_BUILD_OK) << "n " << n;
            const uint32_t tiles = uint32_t((n + 127) / 128);
            EXPECT_EQ(launch.workspace_bytes, 0u);
            EXPECT_GT(launch.params_bytes, 0u);
            EXPECT_EQ(launch.grid[0] * launch.grid[1], tiles * tiles) << "n " << n;
            EXPECT_EQ(launch.grid[2], 1u);
            if (simt) {
                EXPECT_EQ(launch.grid[0], tiles);
                EXPECT_EQ(launch.block[0], 128u);  // 2x2 warps of 64x64
                EXPECT_GE(launch.smem_bytes, 3u * 2 * 128 * 16 * 4);  // 3 stages of A and B
            }
            EXPECT_GT(launch.smem_bytes, 0u);
        }
        dlclose(lib);
        fs::remove_all(out);
    }
}

}  // namespace
}  // namespace kforge::codegen
