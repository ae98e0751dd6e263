// The `schedule multistage` gemm lowering: CUTLASS 2.x GemmUniversal with the Sm80 epilogue
// visitor tree (cp.async multistage mainloop; runs on sm_80 and later). The only CUTLASS path
// with 3xTF32 (OpMultiplyAddFastF32) and SIMT f32. Called by lower_gemm after analyze_gemm.
#pragma once

#include "codegen/gemm_spec.h"

namespace kforge::codegen {

Expected<KernelCode> lower_gemm_sm80(const GemmSpec& spec, const dsl::Kernel& kernel,
                                     const LowerContext& ctx);

}  // namespace kforge::codegen
