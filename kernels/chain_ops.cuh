// Element-wise functions used by generated chains (codegen/chain.cpp). Each computes PyTorch's
// definition in f32 with the accurate libdevice functions (no fast-math approximations), and
// propagates NaN like PyTorch does.
#pragma once

#include "kernels/common.cuh"

namespace kforge {

__device__ __forceinline__ float act_relu(float x) { return x != x ? x : fmaxf(x, 0.f); }
__device__ __forceinline__ float act_leaky_relu(float x, float slope) {
    return x > 0.f ? x : x * slope;
}
// gelu(x) = x/2 (1 + erf(x / sqrt 2))
__device__ __forceinline__ float act_gelu_erf(float x) {
    return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
}
// gelu(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
__device__ __forceinline__ float act_gelu_tanh(float x) {
    const float inner = 0.79788456080286536f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.f + tanhf(inner));
}
__device__ __forceinline__ float act_sigmoid(float x) { return 1.f / (1.f + expf(-x)); }
__device__ __forceinline__ float act_silu(float x) { return x / (1.f + expf(-x)); }
// softplus(x) = log(1 + exp(beta x)) / beta, and x where beta x > threshold.
__device__ __forceinline__ float act_softplus(float x, float beta, float threshold) {
    const float bx = x * beta;
    return bx > threshold ? x : log1pf(expf(bx)) / beta;
}
// mish(x) = x tanh(softplus(x)) (PyTorch: x * tanh(log1p(exp(x)))).
__device__ __forceinline__ float act_mish(float x) { return x * tanhf(log1pf(expf(x))); }
__device__ __forceinline__ float act_square(float x) { return x * x; }
// sign(x) = 1, -1 or 0 (PyTorch: NaN stays NaN).
__device__ __forceinline__ float act_sign(float x) {
    return x != x ? x : float((x > 0.f) - (x < 0.f));
}
__device__ __forceinline__ float act_clamp(float x, float lo, float hi) {
    return x != x ? x : fminf(fmaxf(x, lo), hi);
}

}  // namespace kforge
