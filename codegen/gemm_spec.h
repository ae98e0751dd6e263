// Analysis of one gemm kernel for the CUTLASS lowering: operand roles and layouts, the problem
// shape, the resolved math mode and the epilogue chain as a list of steps. Pure (no source
// text); lower_gemm*.cpp and evt_emit.cpp turn it into CUDA. Run after the tensor table of the
// LowerContext is built (lower_program).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_lowering.h"

namespace kforge::codegen {

// Where a chain operand tensor sits relative to the output tile [(L,) M, N].
enum class Broadcast { kScalar, kRow /*[N]*/, kCol /*[M]*/, kMatrix /*[M,N] or [L,M,N]*/ };

enum class EpiStepKind {
    kCutlassUnary,  // an activation functor of CUTLASS (cutlass::epilogue::thread::<functor>)
    kScalarUnary,   // a kforge scalar functor: `expr` in terms of float x
    kBinaryTensor,  // functor(value, tensor) with the tensor broadcast
    kCast,          // round the value to `dtype`
    kStore,         // the last step: write D
    kLet,           // name the value `name` (the EVT repeats its subtree where it is read)
    kUse,           // the value is `name` again
    kBinaryNamed,   // functor(value, named value `name`)
};

struct EpiStep {
    EpiStepKind kind = EpiStepKind::kScalarUnary;
    std::string functor;  // kCutlassUnary, kBinaryTensor: e.g. "cutlass::plus"
    std::string expr;     // kScalarUnary: a float expression in x
    std::string tensor;   // kBinaryTensor, kStore
    Broadcast broadcast = Broadcast::kScalar;
    bool batched = false; // kBinaryTensor kMatrix: has its own L stride
    DType dtype = DType::kF32;  // kCast target; kBinaryTensor / kStore: the tensor's dtype
    std::string name;     // kLet, kUse, kBinaryNamed
    bool reversed = false;  // kBinaryTensor, kBinaryNamed: functor(operand, value) (rsub, rdiv)
};

struct GemmSpec {
    std::string kernel;  // program kernel name (k0)
    dsl::GemmConfig config;
    dsl::MathMode math = dsl::MathMode::kBf16;  // resolved (never kAuto)
    std::string a, b, d;                         // tensor names
    DType dtype_a = DType::kBF16, dtype_b = DType::kBF16, dtype_d = DType::kF32;
    bool a_row_major = true;   // A[M,K]; false: A[K,M]
    bool b_col_major = true;   // B[N,K] (K-major); false: B[K,N]
    int k_parts = 1;           // operands staged for 3xTF32: the GEMM's K is k_parts * k
                               // (gemm_stage.h); k stays the problem's K
    std::string dim_m, dim_n, dim_k;  // problem dim names
    // D[L.., F.., M, N]: its batch dims (size-1 dims dropped), flattened into CUTLASS's one batch
    // mode L = prod(L..) - a free view, every tensor being packed: A, B and D are one batch
    // stride apart per step of the flattened index. Empty when not batched (l = 1).
    std::vector<std::string> dims_batch;
    // Whether A / B has the batch dims (all of them, in D's order); false: the operand has none
    // and is read again for every batch (batch stride 0: [M,K] x [L,K,N], or [L..,K,M] x [K,N]
    // whose A cannot fold into M). An operand with only some of them is refused
    // (analyze_gemm); the planner expands it first (planner/plan_gemm.cpp).
    bool a_batched = true, b_batched = true;
    // Batch dims of A and D folded into M: A[L..,F..,M,K] x B[L..,K,N] -> D[L..,F..,M,N] (F.. not
    // in B, A K-major) is one [prod(F..)*M, K] x [K, N] GEMM per batch (A and D are contiguous
    // over F.. and M; nn.Linear on [batch, seq, features], einsum 'bijl,lk->bijk'). Empty when
    // none; m is then prod(F..) * M.
    std::vector<std::string> dims_fold;
    std::string fold_text() const;  // "F" or "b, i" (messages)
    int64_t m = 0, n = 0, k = 0, l = 1;
    std::optional<std::string> source;  // the residual matrix read as CUTLASS's C operand
    DType dtype_c = DType::kF32;
    std::vector<EpiStep> steps;
    std::vector<std::string> tensor_order;  // builder_tensors: A, B, D, then chain operands
};

// Which of A's and B's two matrix dims is contracted, given D's [.., M, N]: A[M,K] (row major)
// or A[K,M], B[N,K] (col major) or B[K,N]. Names decide; where they do not (the dims repeat a
// name: att[T,T] @ v[T,E]), a K that the output lacks first, then the order A[M,K], B[K,N]
// (matmul's own). nullopt where no assignment fits the names. The planner compares it with the
// op's transposes (a program that names its dims alike cannot say otherwise).
struct GemmLayout {
    bool a_row_major = true, b_col_major = false;
    std::string dim_k;
};
std::optional<GemmLayout> resolve_gemm_layout(const std::vector<std::string>& a2,
                                              const std::vector<std::string>& b2,
                                              const std::string& dim_m, const std::string& dim_n);

// How many of D's trailing batch dims `bd` fold into M: the longest suffix of bd that A's batch
// dims `ba` end with and B's `bb` lack, where A is K-major (`a_row_major`); 0 otherwise.
// analyze_gemm folds them unless an epilogue tensor cannot follow; the planner plans with it.
size_t gemm_fold_count(const std::vector<std::string>& ba, const std::vector<std::string>& bb,
                       const std::vector<std::string>& bd, bool a_row_major);

// Analyses `kernel` (a gemm). User errors for programs the CUTLASS lowering cannot express
// ("not supported by the CUTLASS lowering: ...") and for inconsistent dims.
Expected<GemmSpec> analyze_gemm(const dsl::Kernel& kernel, const LowerContext& ctx);

// C++ literal of a float constant ("0.01f").
std::string float_literal(double v);

// The language's spelling of a math mode (docs/language.md), for messages and comments.
std::string_view math_name(dsl::MathMode m);

// "cutlass::bfloat16_t" etc.
std::string cutlass_type(DType d);

}  // namespace kforge::codegen
