// Operand swap for Hopper tf32 gemms with an N-major B: C = A B is lowered as C^T = B^T A^T.
// sm90 wgmma reads 32-bit (tf32) operands from shared memory only K-major; CUTLASS's collective
// builder handles an MN-major A (its register-sourced mainloop loads A through registers) but
// not an MN-major B beside a K-major A (it swaps the operands inside the mainloop and leaves the
// epilogue unswapped: wrong results, seen on the H200). So kforge swaps them itself: the CUTLASS
// kernel's A is B^T (M-major), its B is A^T (K-major) and its D is a column-major view of C^T,
// which is row-major C. Run after analyze_gemm, before any emission (lower_gemm).
// Not the default since operand staging (gemm_stage.h): the RS mainloop ran at 0.58x cuBLAS on
// the H200 (gemm_tf32_4096, 652 us); LowerOptions::tf32_stage_mn_major = false selects this path.
#pragma once

#include "codegen/gemm_spec.h"

namespace kforge::codegen {

// Which operand layouts the sm90 tf32 path takes, and how.
enum class Tf32Operands {
    kNative,      // not tf32, or A and B both K-major, or an M-major A with a K-major B (RS path)
    kSwap,        // K-major A, N-major B: lower the transposed problem
    kUnsupported  // both MN-major: no K-major operand to feed wgmma from shared memory
};

Tf32Operands classify_tf32_operands(const GemmSpec& spec);

// The spec of the transposed problem: operands, dtypes, layouts, dims and extents of A and B
// exchanged; M and N exchanged (so tile, cluster and raster order, which the program writes for
// the output's M and N, follow their dims); D (and a residual C) column-major; row ([N]) and
// column ([M]) broadcasts exchanged; tensor_order starts with B, A. Sets `swapped_ab`.
GemmSpec transpose_gemm(const GemmSpec& spec);

}  // namespace kforge::codegen
