// Activations for GEMM epilogues (codegen/gemm_spec.cpp) built on the SFU's ex2 and rcp
// approximations instead of libdevice's accurate expf / erff / IEEE division.
//
// Why: a cooperative sm90 GEMM runs its epilogue between two mainloops, so every instruction
// per output element adds to the kernel time. libdevice's `1 / (1 + expf(-x))` is ~25 SASS
// instructions plus a CALL to the IEEE-division slow path (a subroutine in an epilogue that
// holds the accumulators); erff is ~33 instructions. These forms are 7 (sigmoid) and ~16
// (gelu erf, one of them on the SFU), without calls.
//
// Accuracy (f32, vs fp64; tests/codegen/act_approx_test.cpp checks the formulas on the host,
// where ex2/rcp are exact, and bench/kernels/epilogue_cost on the GPU):
//   act_sigmoid_ex2_rcp: relative error <= ~1e-6 for |x| <= 80 (ex2.approx 2 ulp, the rounding
//     of x*log2(e), rcp.approx 1 ulp); 0 / 1 at the ends; NaN in, NaN out.
//   act_gelu_erf_as28: erf by Abramowitz & Stegun 7.1.28 (|error| <= 3e-7) with rcp.approx:
//     |gelu error| <= ~1e-6 * max(1, |x|); x * Phi(x) keeps gelu(+inf) = +inf.
// Both are far inside every precision policy's tolerance, fp32_strict (1e-4) included.
// NaN handling follows PyTorch: NaN in, NaN out.
#pragma once

#if defined(__CUDACC__)
#define KFORGE_ACT_FN __host__ __device__ __forceinline__
#else
#include <cmath>
#define KFORGE_ACT_FN inline
#endif

namespace kforge {

// 2^x by the SFU (ex2.approx.ftz: ~2 ulp, subnormal results flush to 0); exact on the host.
KFORGE_ACT_FN float ex2_approx(float x) {
#if defined(__CUDA_ARCH__)
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#else
    return std::exp2(x);
#endif
}

// 1/x by the SFU (rcp.approx.ftz: ~1 ulp); exact on the host.
KFORGE_ACT_FN float rcp_approx(float x) {
#if defined(__CUDA_ARCH__)
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#else
    return 1.0f / x;
#endif
}

// sigmoid(x) = 1 / (1 + e^-x)
KFORGE_ACT_FN float act_sigmoid_ex2_rcp(float x) {
    return rcp_approx(1.0f + ex2_approx(x * -1.44269504088896341f));
}

// silu(x) = x * sigmoid(x)
KFORGE_ACT_FN float act_silu_ex2_rcp(float x) { return x * act_sigmoid_ex2_rcp(x); }

// gelu(x) = x * Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2. With z = |x| / sqrt 2:
// erfc(z) ~ 1 / (1 + a1 z + ... + a6 z^6)^16 (Abramowitz & Stegun 7.1.28, |error| <= 3e-7):
// six FMAs, four squarings and one SFU reciprocal (an overflow to inf gives erfc = 0), and
// q = erfc(z) / 2 = 1 - Phi(|x|).
KFORGE_ACT_FN float act_gelu_erf_as28(float x) {
    const float z = fabsf(x) * 0.70710678118654752f;
    float s = 0.0000430638f;           // a6
    s = s * z + 0.0002765672f;         // a5
    s = s * z + 0.0001520143f;         // a4
    s = s * z + 0.0092705272f;         // a3
    s = s * z + 0.0422820123f;         // a2
    s = s * z + 0.0705230784f;         // a1
    s = s * z + 1.0f;
    s = s * s;
    s = s * s;
    s = s * s;
    s = s * s;
    const float q = 0.5f * rcp_approx(s);
    return x * (x >= 0.0f ? 1.0f - q : q);
}

}  // namespace kforge

#undef KFORGE_ACT_FN
