// Operand staging for sm90 tf32 GEMMs: a pre-kernel (kernels/stage_operand.cuh) writes an
// operand K-major into a workspace buffer of the launch plan, and the CUTLASS TMA kernel reads
// that buffer instead of the problem's tensor.
//   - math tf32x3: both operands are split into tf32 hi/lo parts and concatenated along K
//     (A' = [hi|hi|lo], B' = [hi;lo;hi]), so 3xTF32 is one tf32 GEMM with K' = 3K;
//   - math tf32 with an MN-major operand: that operand is copied K-major (K' = K), because wgmma
//     reads tf32 from shared memory only K-major. The copy costs about 2x the operand's bytes of
//     DRAM traffic (~30 us for a 4096^2 f32 operand on the H200): gemm_tf32_4096 ran in
//     375 us staged against 652 us (0.58x cuBLAS) for the register-sourced C^T = B^T A^T
//     lowering it replaced (2026-12-01, bench/NOTES.md).
// plan_operand_staging decides (pure, also used by the simulated time model); stage_operands
// emits the launches and buffers and rewrites the spec. Run after analyze_gemm, before emission.
#pragma once

#include <string>
#include <vector>

#include "codegen/gemm_spec.h"

namespace kforge::codegen {

struct OperandStaging {
    bool stage_a = false;
    bool stage_b = false;
    bool a_transposed = false;  // A is M-major ([K,M]): the pre-kernel transposes it
    bool b_transposed = false;  // B is N-major ([K,N])
    int k_parts = 1;            // 3 for 3xTF32: the GEMM runs over K' = k_parts * K
    bool any() const { return stage_a || stage_b; }
};

// Which operands of a gemm kernel the sm90 lowering stages. `math` is the resolved math mode
// (never kAuto). Nothing for schedule multistage or a math other than tf32/tf32x3.
OperandStaging plan_operand_staging(dsl::Schedule schedule, dsl::MathMode math, bool a_k_major,
                                    bool b_k_major);

// The staging of a kernel as the lowering does it: math auto resolved under `policy` for f32
// operands, layouts from the operand dims (the contraction dim last: K-major).
OperandStaging plan_operand_staging(const dsl::Kernel& kernel, PrecisionPolicy policy,
                                    DType operand_dtype);

// Name of the workspace buffer holding kernel `kernel`'s staged `operand` ("k0_staged_A").
std::string staged_buffer_name(const std::string& kernel, const std::string& operand);

struct StagedCode {
    std::string device_source;  // the pre-kernels' extern "C" entry points
    std::vector<KernelLaunch> launches;
    std::vector<BufferDecl> buffers;
};

// Emits the pre-kernel launches and workspace buffers of `staging` and rewrites `spec` to read
// the staged buffers: A (B) becomes the buffer, K-major, tensor_order[0] ([1]) its name, and
// spec.k_parts = staging.k_parts. User errors for grids CUDA cannot launch.
Expected<StagedCode> stage_operands(GemmSpec& spec, const OperandStaging& staging,
                                    const LowerContext& ctx);

}  // namespace kforge::codegen
