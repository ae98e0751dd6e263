// What an attention kernel (`attention(Q[..,S,E], K[..,L,E], V[..,L,F] [, M[..,S,L]])`) means
// against its problem, stated once for the checker, the planner, the lowering and the time
// model (inline: codegen and perfmodel read the AST without linking the dsl stage).
//
// The kernel computes O = softmax(mask(Q K^T * scale)) V over the last dim of the scores, where
// mask is masked_fill(M, fill) for a bool M (fill: the problem's masked_fill op reading M, else
// -inf) and + M for a float M. Shared memory per CTA (kernels/attention.cuh): the Q tile, one K
// and one V tile in the operand type, the scores (f32) and probabilities (operand type) of the
// tile, the output accumulator (f32) and the running max and sum per row; head dims are padded
// to 16 for the tensor cores.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "dsl/ast.h"
#include "problem/problem.h"

namespace kforge::dsl {

// The value a bool mask M writes into the scores: the fill of the problem's masked_fill op that
// reads M (its first), else -inf.
inline double attention_mask_fill(const Problem& problem, const std::string& mask) {
    for (const Op& op : problem.ops)
        if (op.kind == OpKind::kMaskedFill && op.inputs.size() == 2 && op.inputs[1] == mask)
            return op.attrs.scalar;
    return -std::numeric_limits<double>::infinity();
}

// The value a structured mask (`mask tril|triu`, diagonal d) writes into the scores: the fill
// of the problem's masked_fill op with that mask (its first), else -inf.
inline double attention_tri_fill(const Problem& problem, TriMask mask, int64_t diagonal) {
    for (const Op& op : problem.ops)
        if (op.kind == OpKind::kMaskedFill && op.attrs.tri_mask == mask &&
            op.attrs.diagonal == diagonal)
            return op.attrs.scalar;
    return -std::numeric_limits<double>::infinity();
}

inline int64_t attention_round16(int64_t v) { return (v + 15) / 16 * 16; }

// Dynamic shared memory of one CTA for head dims E (Q, K) and F (V), tile_m x tile_n, operands of
// `operand_bytes` each (2: bf16/f16; 4: f32), the output accumulator in shared memory only on the
// CUDA-core path (`o_in_smem`; the tensor-core paths hold it in registers), the row max, sum and
// rescale factor. Regions 128-byte aligned (kernels/attention.cuh's AttentionSmem).
inline int64_t attention_smem_bytes(int64_t e, int64_t f, int tile_m, int tile_n,
                                    int operand_bytes, bool o_in_smem) {
    auto up = [](int64_t b) { return (b + 127) / 128 * 128; };
    const int64_t ep = attention_round16(e) + 8, fp = attention_round16(f) + 8;
    const int64_t sp = tile_n + 4;  // f32 scores row
    const int64_t pp = tile_n + 8;  // probabilities row
    return up(tile_m * ep * operand_bytes) + up(tile_n * ep * operand_bytes) +
           up(tile_n * fp * operand_bytes) + up(tile_m * sp * 4) + up(tile_m * pp * operand_bytes) +
           (o_in_smem ? up(tile_m * fp * 4) : 0) + up(tile_m * 4) * 3;
}

// How the products run: the operand type in shared memory and `math` (kernels/attention.cuh's
// MATH): 16-bit inputs on the tensor cores in their own type (math 16); f32 inputs rounded to
// bf16 / f16 under those policies (as the policy allows), as 3xTF32 under fp32_strict (about
// f32 accuracy), as TF32 under tf32; `math f32` (AttentionConfig::f32_cores): f32 FMA on the
// CUDA cores (math 0) whatever the inputs.
struct AttentionMath {
    DType operand = DType::kF32;
    int math = 0;  // 0 f32 FMA, 1 TF32, 3 3xTF32, 16 bf16/f16 tensor cores
    int operand_bytes() const { return operand == DType::kF32 ? 4 : 2; }
};
inline AttentionMath attention_math(DType input, PrecisionPolicy policy, bool f32_cores) {
    if (f32_cores) return {DType::kF32, 0};
    if (input == DType::kBF16 || input == DType::kF16) return {input, 16};
    if (policy == PrecisionPolicy::kBf16) return {DType::kBF16, 16};
    if (policy == PrecisionPolicy::kFp16) return {DType::kF16, 16};
    return {DType::kF32, policy == PrecisionPolicy::kTf32 ? 1 : 3};
}

// Why tile_m x tile_n does not fit one CTA (empty when it does): shared memory past `smem_limit`,
// or on the tensor cores a value head dim past 256 (the output accumulator, Fp / 16 fragments
// of 8 floats a thread, would spill its registers).
inline std::string attention_misfit(int64_t e, int64_t f, int tile_m, int tile_n,
                                    const AttentionMath& math, int64_t smem_limit) {
    if (math.math != 0 && attention_round16(f) > 256)
        return "head dim F=" + std::to_string(f) + " past 256 on the tensor cores (the output "
               "accumulator in registers would spill)";
    const int64_t smem = attention_smem_bytes(e, f, tile_m, tile_n, math.operand_bytes(),
                                              math.math == 0);
    if (smem > smem_limit)
        return "tile " + std::to_string(tile_m) + "x" + std::to_string(tile_n) + " with head dims E=" +
               std::to_string(e) + ", F=" + std::to_string(f) + " needs " + std::to_string(smem) +
               " bytes of shared memory (the device allows " + std::to_string(smem_limit) + ")";
    return "";
}

}  // namespace kforge::dsl
