// attention's `impl cutlass_fmha` (CUTLASS's Hopper FMHA from the installed package's
// examples/88_hopper_fmha) lowered and compiled with nvcc for sm_90a into a cubin and a host
// library: the kernel has no spills and its extern "C" wrapper is in the cubin, the param builder
// in the library refuses a wrong ABI version before any CUDA call. Label bench: about 70-80 s
// per compile on two cores, never in CI; no GPU needed. The GPU run is bench/attention/run.sh.
#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "codegen/host_abi.h"
#include "codegen/lower.h"
#include "compile/compile.h"
#include "dsl/parser.h"
#include "problem/spec.h"

namespace kforge::codegen {
namespace {

namespace fs = std::filesystem;

TEST(AttentionFmhaCompile, Bf16D64CooperativeBuildsCubinAndHostLibrary) {
    auto problem = parse_problem(R"({"name": "sdpa", "dims": {"B": 2, "H": 4, "S": 512, "L": 512, "E": 64},
        "inputs": {"q": {"shape": ["B", "H", "S", "E"], "dtype": "bf16"},
                   "k": {"shape": ["B", "H", "L", "E"], "dtype": "bf16"},
                   "v": {"shape": ["B", "H", "L", "E"], "dtype": "bf16"}},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "scale", "inputs": ["s"], "value": 0.125, "output": "t"},
                  {"op": "softmax", "inputs": ["t"], "output": "p", "axis": -1},
                  {"op": "matmul", "inputs": ["p", "v"], "output": "o"}],
        "outputs": ["o"], "precision": {"policy": "bf16"}})", "sdpa.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto program = dsl::parse_program(
        "program p for \"sdpa\"\nkernel k0 = attention(q[B,H,S,E], k[B,H,L,E], v[B,H,L,E]) "
        "scale 0.125 impl cutlass_fmha fmha_tile 128x64x64 fmha_schedule cooperative\n"
        "    { cast bf16; store o[B,H,S,E] }\n", "p.kf");
    ASSERT_TRUE(program.ok()) << program.error().to_string();
    auto lowered = lower_program(*program, *problem, LowerOptions{});
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    fs::path out = fs::temp_directory_path() / ("kforge_fmha_compile_" + std::to_string(getpid()));
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

    std::ifstream in(r->cubin_path, std::ios::binary);
    std::stringstream cubin;
    cubin << in.rdbuf();
    EXPECT_NE(cubin.str().find(std::string("\0kforge_k0\0", 11)), std::string::npos);

    void* lib = dlopen(r->host_library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    auto* builder = reinterpret_cast<KforgeParamBuilderFn>(dlsym(lib, "kforge_build_k0"));
    EXPECT_NE(builder, nullptr);
    if (builder) {
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
