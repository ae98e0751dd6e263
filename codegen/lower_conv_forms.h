// The convolution forms beyond groups-1 fprop in the conv2d lowering (codegen/lower_conv.h): the
// grouped / depthwise fprop (CUTLASS DefaultConv2dGroupFprop) and the transposed convolution as a
// data gradient (DefaultConv2dDgrad, DefaultConv3dDgrad). lower_conv2d calls these for a kernel
// whose ConvGeometry::form is not kFprop; the staging and output launches are the fprop's.
#pragma once

#include <string>

#include "codegen/gemm_emit_common.h"
#include "codegen/lower_conv.h"

namespace kforge::codegen {

// Completes `g` (conv_geometry filled the shapes) for a grouped or transposed form: channel
// padding, the staged weight, the access widths; or the user error naming what CUTLASS's kernel
// for the form cannot run (see the .cpp for each constraint).
Status conv_form_geometry(const dsl::Kernel& kernel, const Op& op, ConvGeometry& g);

// The CUTLASS headers of step 3 for the form.
std::string conv_form_includes(const ConvGeometry& g);

// Step 3's type definitions after the shared constants: extra constants (groups, output padding),
// the Swizzle and `using ConvKernel = ...`, for the kernel's knobs (tile, stages, swizzle), or
// the user error naming the knob the form cannot take.
struct ConvKernelShape {
    int warp_m = 0, warp_n = 0, stages = 3;
    Sm80MathTypes math;
};
Expected<std::string> conv_form_kernel(const dsl::Kernel& kernel, const ConvGeometry& g,
                                       const ConvKernelShape& shape);

// One line for the generated source's header comment: the form and its CUTLASS kernel.
std::string conv_form_title(const ConvGeometry& g);

// The host param builder's lines from the sizes (N, C, H, W, K, R, S; D, T for 3-D, all int64
// in scope) to `problem`, `ref_x`, `ref_w`, `ref_y`: the output size, the padded channels, the
// batch split (conv_batch_parts) and CUTLASS's problem size for the form.
std::string conv_form_host_problem(const ConvGeometry& g);

// The host builder's batch split (codegen/host_abi.h parts): CUTLASS 2.x's convolutions take
// 32-bit offsets and refuse a tensor of 2^31 bytes or more, so images are launched in parts
// that keep the staged input (`x_image` Elements an image), the f32 output (`y_image` floats an
// image) under it; the filter (`w_elems` Elements) cannot be split. Emitted after the sizes,
// before the problem: it narrows the builder's N to this part's images and declares
// `tensors`, the part's pointers; every tensor then fits 31 bits, so no other size guard.
std::string conv_batch_parts(const std::string& x_image, const std::string& y_image,
                             const std::string& w_elems);

}  // namespace kforge::codegen
