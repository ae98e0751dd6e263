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

// erf ... reciprocal and max / min with a tensor and a named value, bf16 operands: NVRTC builds
// the map kernel (f32 libdevice math on the loaded values).
TEST(LetValueCompile, MapElementwiseMathAndBounds) {
    expect_nvrtc_compiles(checked(R"({"name": "ew", "dims": {"R": 64, "C": 1024},
    "inputs": {"X": {"shape": ["R", "C"], "dtype": "bf16"}, "G": {"shape": ["R", "C"], "dtype": "bf16"},
               "b": {"shape": ["C"], "dtype": "bf16"}},
    "graph": [{"op": "erf", "inputs": ["X"], "output": "E"},
              {"op": "log1p", "inputs": ["E"], "output": "L"},
              {"op": "expm1", "inputs": ["L"], "output": "Q"},
              {"op": "sin", "inputs": ["Q"], "output": "S"},
              {"op": "cos", "inputs": ["S"], "output": "Co"},
              {"op": "sign", "inputs": ["Co"], "output": "Sg"},
              {"op": "reciprocal", "inputs": ["X"], "output": "Rc"},
              {"op": "maximum", "inputs": ["Sg", "G"], "output": "Mx"},
              {"op": "minimum", "inputs": ["Mx", "Rc"], "output": "Mn"},
              {"op": "minimum", "inputs": ["b", "Mn"], "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "bf16"}})",
                                  R"(program p for "ew"
kernel k0 = map(X[R,C]) vec 8 { let x; reciprocal; let r; use x; erf; log1p; expm1; sin; cos; sign;
    max G[R,C]; min r; min b[C]; cast bf16; store Y[R,C] })"));
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
