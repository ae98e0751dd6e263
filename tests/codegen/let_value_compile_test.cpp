// Integration: programs whose chains read a named value compile for sm_90a: the map and
// row-wise chains with NVRTC (as the compile driver builds them), and one CUTLASS sm90 gemm with
// a repeated EVT subtree with nvcc (the only CUTLASS instantiation of these tests).
#include <gtest/gtest.h>

#include <filesystem>

#include "compile/compile.h"
#include "compile/nvrtc_compile.h"
#include "tests/codegen/let_value_fixtures.h"

namespace kforge::codegen {
namespace {

using namespace let_testing;

void expect_nvrtc_compiles(const Checked& c) {
    auto lowered = lower(c);
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    ASSERT_FALSE(lowered->uses_cutlass);
    auto rtc = compile::nvrtc_compile_cubin(lowered->cuda_source,
                                            compile::default_compile_options("sm_90a"));
    ASSERT_TRUE(rtc.ok()) << rtc.error().to_string() << "\n" << lowered->cuda_source;
}

TEST(LetValueCompile, MapSoftsign) {
    expect_nvrtc_compiles(checked(kSoftsignSpec, R"(program p for "softsign"
kernel k0 = map(X[R,C]) vec 4 items 2 { let x; abs; add 1; rdiv x; store Y[R,C] })"));
}

TEST(LetValueCompile, RowwiseSoftmaxSquarePlusItself) {
    expect_nvrtc_compiles(checked(kSoftmaxSquareSpec, R"(program p for "softmax_square"
kernel k0 = rowwise softmax(X[R,C]) threads 128 vec 8 { let s; square; add s; cast bf16; store Y[R,C] })"));
}

#ifdef KFORGE_LET_GEMM_COMPILE
TEST(LetValueCompile, GemmSelfResidualSm90) {
    auto lowered = lower(checked(kSelfResidualSpec, R"(program p for "self_residual"
kernel k0 = gemm(X[M,K], W[N,K]) tile 128x128x64 schedule cooperative math bf16
    { add b[N]; let x; mul 0.5; add x; cast bf16; store Y[M,N] })"));
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    const auto out = std::filesystem::temp_directory_path() /
                     ("kforge_let_gemm_compile_" + std::to_string(getpid()));
    std::filesystem::remove_all(out);
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
    EXPECT_FALSE(r->kernels[0].spills()) << compile::format_ptxas_report(r->kernels);
    std::filesystem::remove_all(out);
}
#endif

}  // namespace
}  // namespace kforge::codegen
