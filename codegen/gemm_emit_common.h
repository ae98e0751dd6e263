// Text pieces shared by the sm90 and sm80 gemm emitters (lower_gemm.cpp, lower_gemm_sm80.cpp):
// the CUTLASS prelude, the builder's argument decoding, and the alignment checks.
#pragma once

#include <string>

#include "codegen/gemm_spec.h"

namespace kforge::codegen {

// #includes and helper templates every CUTLASS kernel of a translation unit needs (once).
std::string cutlass_prelude(bool sm90, bool sm80);

// The opening of an `extern "C"` param builder: signature, ABI checks, and locals
// `tensors`, M, N, K, L decoded from KforgeBuildArgs (dims by the problem's sorted dim order).
std::string builder_head(const GemmSpec& spec, const LowerContext& ctx, const std::string& fn);

// The tail of a builder after `typename Gemm::Arguments args` is set up: can_implement,
// workspace query, Params encoding, launch geometry. `sm90`: 3.x kernel API, else 2.x.
std::string builder_tail(const GemmSpec& spec, bool sm90);

// Contiguous-extent checks of the TMA (sm90) kernels: every global access is 16-byte aligned.
Status check_alignment(const GemmSpec& spec, const dsl::Kernel& kernel);

// The sm80 multistage kernel's access widths, in elements: A and B as wide as 16, 8 or 4 bytes
// divide their contiguous extents (cp.async copies 4 bytes at least: an Error where an operand's
// rows are not a multiple of 4 bytes), D and the epilogue's tensors as wide as divides N (or M
// for a column broadcast), down to one element. KernelBench's irregular fp32 matmul (K = 2949,
// N = 5921) takes 1, 1 and 1.
struct Sm80Alignment {
    int a = 1, b = 1, d = 1;
};
Expected<Sm80Alignment> sm80_alignment(const GemmSpec& spec, const dsl::Kernel& kernel);

// CUTLASS 2.x (sm80) types of a math mode: operator class, MMA instruction shape, operator
// (3xTF32 = OpMultiplyAddFastF32); shared by the multistage gemm and the conv2d lowerings.
struct Sm80MathTypes {
    const char* op_class;
    const char* instruction;
    const char* op;
};
Sm80MathTypes sm80_math_types(dsl::MathMode m);
std::string cutlass_gemm_shape(int m, int n, int k);  // "cutlass::gemm::GemmShape<m, n, k>"

std::string symbol_of(const std::string& kernel);          // kforge_<kernel>
std::string builder_symbol_of(const std::string& kernel);  // kforge_build_<kernel>

}  // namespace kforge::codegen
