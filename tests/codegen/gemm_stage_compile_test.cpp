// The staged 3xTF32 lowering of problems/gemm_f32_4096 (schedule cooperative, tile 128x128x32,
// cluster 2x1: the seed) compiled with nvcc into a cubin and a host library (about two minutes
// on two cores): the CUTLASS sm90 kernel, built from the accumulator-promoting FP8 mainloop,
// has no spills although it holds its accumulator twice, and no serialized wgmma; both staging
// pre-kernels and the GEMM wrapper are cubin symbols, and the param builder (which sets the
// promotion interval, so the mainloop arguments have that member) is in the library.
// Integration; no GPU.
#include <dlfcn.h>
#include <unistd.h>

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

TEST(GemmStageCompile, Tf32x3CooperativeBuildsCubinAndHostLibrary) {
    auto problem = load_problem(std::string(KFORGE_TEST_DATA_DIR) + "/../../problems/gemm_f32_4096.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto program = dsl::parse_program(R"(program staged for "gemm_f32_4096"
kernel k0 = gemm(A[M,K], B[K,N]) tile 128x128x32 cluster 2x1 stages auto schedule cooperative math tf32x3 acc f32 raster along_n swizzle 8 splitk 1
    { store C[M,N] })", "staged.kf");
    ASSERT_TRUE(program.ok()) << program.error().to_string();
    auto lowered = lower_program(*program, *problem, LowerOptions{});
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    ASSERT_EQ(lowered->plan.kernels.size(), 3u);
    ASSERT_NE(lowered->cuda_source.find("MainloopSm90TmaGmmaWarpSpecializedFP8"),
              std::string::npos);

    fs::path out = fs::temp_directory_path() / ("kforge_stage_compile_" + std::to_string(getpid()));
    fs::remove_all(out);
    compile::CompileOptions o = compile::default_compile_options("sm_90a");
    o.host_library = lowered->has_host_code;
    o.out_dir = out.string();
    o.timeout_s = 1200;
    auto r = compile::compile_cuda(lowered->cuda_source, o);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_EQ(r->status, compile::CompileStatus::kOk) << r->log;
    std::printf("compile time: %.1f s\n%s", r->time_compile_ns / 1e9,
                compile::format_ptxas_report(r->kernels).c_str());
    EXPECT_EQ(r->log.find("C7510"), std::string::npos) << "wgmma serialized:\n" << r->log;
    std::set<std::string> names;
    for (const auto& k : r->kernels) {
        names.insert(k.name);
        EXPECT_FALSE(k.spills()) << compile::format_ptxas_report(r->kernels);
        EXPECT_EQ(k.stack_bytes, 0) << k.name;
    }
    for (const KernelLaunch& l : lowered->plan.kernels) EXPECT_TRUE(names.count(l.symbol)) << l.symbol;

    void* lib = dlopen(r->host_library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    EXPECT_NE(dlsym(lib, "kforge_build_k0"), nullptr);
    dlclose(lib);
    fs::remove_all(out);
}

}  // namespace
}  // namespace kforge::codegen
