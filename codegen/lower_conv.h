// The conv2d lowering (lower_conv2d, declared in codegen/kernel_lowering.h): a checked conv2d
// kernel (of a conv2d op, or of a conv1d op viewed as a conv2d with H = 1: x [N,C,W] as
// [N,C,1,W], w [K,C,S] as [K,C,1,S], the op's attributes on the W axis, y [N,K,Q]) to four
// launches (kernels/conv_layout.cuh):
//   1. <k>_conv_x: x [N,C,H,W] -> [N,H,W,Cp] channels last, Cp - C zero channels
//   2. <k>_conv_w: w [K,C,R,S] -> [Kp,R,S,Cp], filters K..Kp-1 zero
//   3. CUTLASS 2.x DefaultConv2dFprop (Sm80, kOptimized, NHWC) -> <k>_conv_y [N,P,Q,Kp] f32;
//      its Params encoded by the host param builder kforge_build_<k> (codegen/host_abi.h)
//   4. <k>_conv_y -> the kernel's chain over y [N,K,P,Q] (its stores write NCHW)
// `schedule direct` is one launch of kforge's own direct convolution instead (lower_conv_direct).
// The other forms share the four launches and differ in step 3 (codegen/lower_conv_forms.cpp):
//  - grouped / depthwise (groups > 1, conv1d and conv2d): CUTLASS's DefaultConv2dGroupFprop;
//    x is staged unpadded (Cp = C) and w as [K,R,S,C/groups], so each group's channel run starts
//    aligned when the access width (alignment_a) divides C/groups; no filter padding (Kp = K).
//  - depthwise (groups = C = K) under math f32_simt: CUTLASS's direct convolution
//    (DefaultDepthwiseDirect2dConvFprop, SIMT): x staged unpadded, w staged [R*S, K] (the
//    kernel's "reordered" filter, which the lowering's staging writes directly), the output tile
//    of P x Q positions and channels per CTA from the knobs tile M and tile N.
//  - transposed (conv_transpose1d/2d/3d): the data gradient (dgrad) of the
//    convolution whose output is the transposed conv's input: x [N,C,H,W] is that conv's output
//    gradient (staged [N,H,W,Cp]), w [C,K,R,S] its KRSC filter (staged [Cp,R,S,Kp]: images C,
//    channels K), y [N,K,P,Q] its input gradient; CUTLASS's DefaultConv2dDgrad (strided or
//    unity-stride) or DefaultConv3dDgrad. output_padding needs nothing of its own: it makes the
//    gradient's H (= P) larger, and dgrad writes every one of its positions. Stride with
//    dilation (which CUTLASS's strided dgrad refuses) runs as the unit-stride dgrad of x with
//    stride - 1 zeros inserted between neighbours by its staging (stride^dims times the work).
//    groups > 1 (CUTLASS's dgrad has no group mode): the weight staged as one dense filter, block
//    diagonal (zero between groups), and the dense dgrad run on it (groups times the MMAs).
// Cp is C rounded up to 16 bytes of the staged operand dtype (4 f32, 8 f16/bf16), so every C
// (3 for images) is legal for CUTLASS's 16-byte cp.async; Kp is K rounded up to 4 (the f32
// accumulators' 16-byte stores). stride, padding and dilation are the problem op's and are
// constants of the source; every size comes from the harness's dims (the builder) or from the
// plan's int64 params (the layout kernels, the chain over a runtime-shape ChainSpace), so the
// small, check and full shapes of an evaluation share one source and one compile.
#pragma once

#include <array>
#include <cstdint>
#include <sstream>
#include <string>

#include "codegen/kernel_lowering.h"
#include "kernels/conv_layout.cuh"

namespace kforge::codegen {

// Which CUTLASS convolution step 3 runs.
enum class ConvForm {
    kFprop,       // groups 1: DefaultConv2dFprop / DefaultConv3dFprop
    kGroupFprop,  // groups > 1: DefaultConv2dGroupFprop (kSingleGroup or kMultipleGroup)
    kDepthwise,   // groups = C = K, math f32_simt: DefaultDepthwiseDirect2dConvFprop (direct conv)
    kDgrad,       // conv_transpose: DefaultConv2dDgrad / DefaultConv3dDgrad
};

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
    ConvForm form = ConvForm::kFprop;
    int64_t groups = 1;                  // kGroupFprop: C / groups channels per group
    // conv_transpose: x [N,C,H,W] -> y [N,K,P,Q] with w [C,K,R,S]; the extra output rows
    std::array<int64_t, 2> output_padding{0, 0};
    int64_t output_padding_d = 0;
    // The staged weight [w_images, R, S, w_padded] from w [w_images_valid, w_channels, R, S]:
    // fprop [Kp, R, S, Cp] of [K, C]; grouped [K, R, S, C/groups]; dgrad [Cp, R, S, Kp] of [C, K].
    int64_t w_images = 0, w_images_valid = 0, w_channels = 0, w_padded = 0;
    // A grouped weight staged as one dense block-diagonal KRSC filter (zero across groups), for
    // kernels/conv_layout.cuh's channels_last_gather_block_diagonal: the source channels of each
    // staged image and the images per group. A transposed conv's w [C, K/groups, ...]: K/groups
    // and C/groups; a grouped fprop that CUTLASS's group fprop cannot tile (group_fprop_tiles),
    // w [K, C/groups, ...] run as a dense fprop: C/groups and K/groups. 0 otherwise.
    int64_t w_group_filters = 0, w_group_channels = 0;
    // kDgrad with stride and dilation > 1 (CUTLASS's strided dgrad takes dilation 1): x staged
    // with stride - 1 zeros between neighbours ([N, (D-1)sd+1, (H-1)sh+1, (W-1)sw+1, Cp]) and the
    // unit-stride dgrad run on it (stride above then 1); 1, 1, 1 otherwise.
    std::array<int64_t, 3> upsample{1, 1, 1};  // d, h, w
    int alignment_a = 4;  // elements per access of x's staged channels (CUTLASS AlignmentA)
    int alignment_b = 4;  // of the staged weight's contiguous channels (AlignmentB)
    int alignment_d = 4;  // of the f32 accumulators' stores (the epilogue's kCount)
};

// The channel padding multiple of a staged operand dtype: 16 bytes of it.
int conv_channel_multiple(DType staged);
inline constexpr int kConvFilterMultiple = 4;  // Kp: 16 bytes of f32 accumulators

// Whether CUTLASS's group fprop tiles `filters_per_group` at tile N `tile_n`: one group per CTA
// (tile N divides them) or several (they divide tile N). Otherwise the grouped fprop runs as one
// dense fprop on a block-diagonal filter: `groups` times the MMA work (perfmodel prices it so).
inline bool group_fprop_tiles(int64_t filters_per_group, int64_t tile_n) {
    return filters_per_group > 0 && tile_n > 0 &&
           (filters_per_group % tile_n == 0 || tile_n % filters_per_group == 0);
}

// The Hopper form (`schedule tma_ws`, codegen/lower_conv_sm90.cpp): CUTLASS 3.x's sm90
// implicit-GEMM fprop on staged operands; 3xTF32 as a tf32 convolution over hi/lo channel
// copies, in chunks of at most kConvSm90ChunkK products per output added in f32.
inline constexpr int64_t kConvSm90ChunkK = 2400;
// Copies of each channel in the staged operands: 3 for math tf32x3, else 1.
int conv_sm90_parts(dsl::MathMode math);
// The Hopper form's chunking of a convolution of `channels` input channels and `taps` filter
// positions on `operand`-typed operands under `math` (kernels/conv_layout.cuh conv_split_of at
// 16 bytes of the operand and kConvSm90ChunkK): the one the lowering stages, the planner and the
// simulator price. cc 0: the filter is too large for a chunk.
ConvSplit conv_sm90_split(int64_t channels, int64_t taps, dsl::MathMode math, DType operand);
// What the Hopper form cannot run (dense 2-D / 1-D fprop only; its tiles), by name.
Status check_conv_sm90(const dsl::Kernel& kernel, const ConvGeometry& g);
struct ConvSm90Buffers {
    std::string x, w, y;
};
// Steps 1 to 3 of the Hopper form: the two staging launches, the convolution (its entry and
// host param builder: code.entry, code.host_source) and their buffers.
Status emit_conv_sm90(const dsl::Kernel& kernel, const LowerContext& ctx, const ConvGeometry& g,
                      const ConvSm90Buffers& names, std::ostringstream& dev, KernelCode& code);

// The host param builder's head (lower_conv.cpp): its extern "C" signature, the ABI and dims
// checks, and `int64_t N, C, H, W` from the harness's dims (H = 1 for a conv1d).
std::string conv_builder_head(const dsl::Kernel& kernel, const LowerContext& ctx,
                              const ConvGeometry& g, const std::string& ns);
// `in->dims[i]` for a dim the harness passes, else the literal size.
std::string conv_dim_expr(const Problem& problem, const std::string& name, int64_t value);

// A channels-last layout launch of kernel `kernel` (blocks of 32 x 8 threads, kernels/
// conv_layout.cuh) with its params, and the workspace buffer it writes.
void add_conv_layout_launch(KernelCode& code, const dsl::Kernel& kernel, const std::string& symbol,
                            std::array<unsigned, 3> grid, std::vector<KernelParam> params,
                            const std::string& buffer, DType dtype, std::vector<int64_t> shape);

// The workspace buffer names of kernel `kernel`: "<kernel>_conv_x", "_conv_w", "_conv_y".
std::string conv_buffer_name(const std::string& kernel, const char* what);

// The problem's convolution op (conv1d/2d/3d, conv_transpose1d/2d/3d) that `kernel` implements:
// the first reading its two arguments (kernel.args has two), or null.
const Op* find_conv_op(const dsl::Kernel& kernel, const Problem& problem);

// `schedule direct` (codegen/lower_conv_direct.cpp): one launch of kforge's direct convolution
// (kernels/conv_direct.cuh), x and w read in place, the chain in registers, y stored NCHW.
Expected<KernelCode> lower_conv_direct(const dsl::Kernel& kernel, const LowerContext& ctx);

// The geometry of a conv2d kernel: the problem's conv2d op it implements (found by its inputs),
// the resolved math, the staged dtype. User errors name what is not supported.
Expected<ConvGeometry> conv_geometry(const dsl::Kernel& kernel, const LowerContext& ctx);

}  // namespace kforge::codegen
