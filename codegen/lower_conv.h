// The conv2d lowering (lower_conv2d, declared in codegen/kernel_lowering.h): a checked conv2d
// kernel (of a conv2d op, or of a conv1d op viewed as a conv2d with H = 1: x [N,C,W] as
// [N,C,1,W], w [K,C,S] as [K,C,1,S], the op's attributes on the W axis, y [N,K,Q]) to four
// launches (kernels/conv_layout.cuh):
//   1. <k>_conv_x: x [N,C,H,W] -> [N,H,W,Cp] channels last, Cp - C zero channels
//   2. <k>_conv_w: w [K,C,R,S] -> [Kp,R,S,Cp], filters K..Kp-1 zero
//   3. CUTLASS 2.x DefaultConv2dFprop (Sm80, kOptimized, NHWC) -> <k>_conv_y [N,P,Q,Kp] f32;
//      its Params encoded by the host param builder kforge_build_<k> (codegen/host_abi.h)
//   4. <k>_conv_y -> the kernel's chain over y [N,K,P,Q] (its stores write NCHW)
// Cp is C rounded up to 16 bytes of the staged operand dtype (4 f32, 8 f16/bf16), so every C
// (3 for images) is legal for CUTLASS's 16-byte cp.async; Kp is K rounded up to 4 (the f32
// accumulators' 16-byte stores). stride, padding and dilation are the problem op's and are
// constants of the source; every size comes from the harness's dims (the builder) or from the
// plan's int64 params (the layout kernels, the chain over a runtime-shape ChainSpace), so the
// small, check and full shapes of an evaluation share one source and one compile.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "codegen/kernel_lowering.h"

namespace kforge::codegen {

// The geometry of one conv2d kernel at the problem's shape.
struct ConvGeometry {
    int64_t n = 0, c = 0, h = 0, w = 0;  // x [N,C,H,W]
    int64_t k = 0, r = 0, s = 0;         // w [K,C,R,S]
    int64_t p = 0, q = 0;                // y [N,K,P,Q]
    int64_t cp = 0, kp = 0;              // padded channels, padded filters
    std::array<int64_t, 2> stride{1, 1}, padding{0, 0}, dilation{1, 1};
    bool one_d = false;                  // a conv1d op: x [N,C,W] viewed as [N,C,1,W]
    bool three_d = false;                // a conv3d op: x [N,C,D,H,W], CUTLASS's 3-D fprop
    int64_t d = 1, t = 1, z = 1;         // conv3d: x's D, w's T, y's Z (1 otherwise)
    int64_t stride_d = 1, padding_d = 0, dilation_d = 1;
    DType staged = DType::kF32;          // element type of the staged x and w
    dsl::MathMode math = dsl::MathMode::kTf32;  // resolved (never kAuto)
};

// The channel padding multiple of a staged operand dtype: 16 bytes of it.
int conv_channel_multiple(DType staged);
inline constexpr int kConvFilterMultiple = 4;  // Kp: 16 bytes of f32 accumulators

// The workspace buffer names of kernel `kernel`: "<kernel>_conv_x", "_conv_w", "_conv_y".
std::string conv_buffer_name(const std::string& kernel, const char* what);

// The geometry of a conv2d kernel: the problem's conv2d op it implements (found by its inputs),
// the resolved math, the staged dtype. User errors name what is not supported.
Expected<ConvGeometry> conv_geometry(const dsl::Kernel& kernel, const LowerContext& ctx);

}  // namespace kforge::codegen
