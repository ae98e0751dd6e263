// Per-kernel lowering entry points, called by lower_program() (codegen/lower.h) in program
// order. Each turns one checked dsl::Kernel into CUDA source plus its launches.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/launch_plan.h"
#include "common/expected.h"
#include "dsl/ast.h"
#include "problem/problem.h"

namespace kforge::codegen {

// A tensor as codegen sees it: a problem tensor or a program intermediate, with concrete
// shape and the dtype it is stored in.
struct TensorInfo {
    std::string name;
    std::vector<std::string> dim_names;
    std::vector<int64_t> shape;
    DType dtype = DType::kF32;
    bool intermediate = false;  // defined by the program (lives in a BufferDecl)
};

struct LowerContext {
    const Problem* problem = nullptr;
    const dsl::Program* program = nullptr;
    std::map<std::string, TensorInfo> tensors;  // every tensor the program names
    int sm_count = 132;                         // target device, for persistent grids
    std::string arch = "sm_90a";
    // The same program at the shape its kernels are configured for (LowerOptions::
    // config_problem), when that is not this one; null otherwise.
    const LowerContext* config = nullptr;
};

// A CUTLASS kernel's entry point (`extern "C" __global__ SYMBOL(Params)` running the kernel
// type its namespace NS defines), kept apart from the device source: lower_program emits one
// entry per distinct kernel type, and the launches of a kernel whose type an earlier kernel of
// the program has take that kernel's symbol (its host builder fills the same Params type). A
// ResNet-101 start program has 104 convolutions of 8 configurations: 8 entries for nvcc/ptxas
// to compile, not 104. `key` is NS's block and the entry with NS and SYMBOL taken out, so any
// other kernel-specific name in them keeps the kernel apart.
struct CutlassEntry {
    std::string source, symbol, key;
};
// The entry of the kernel whose namespace `ns` is defined in `device_source` (a `namespace NS {`
// ... `}  // namespace NS` block) and whose entry point is `entry_source`, named `symbol`.
CutlassEntry cutlass_entry(const std::string& ns, const std::string& symbol,
                           const std::string& device_source, std::string entry_source);

// What one kernel contributes to the translation unit and the plan.
struct KernelCode {
    std::string device_source;  // device code and any type definitions; included once
    std::string host_source;    // extern "C" param builders (CUTLASS only); empty otherwise
    std::optional<CutlassEntry> entry;  // CUTLASS kernels: emitted after device_source
    std::vector<KernelLaunch> launches;
    std::vector<BufferDecl> buffers;  // workspaces this kernel needs
};

Expected<KernelCode> lower_gemm(const dsl::Kernel& kernel, const LowerContext& ctx);
Expected<KernelCode> lower_rowwise(const dsl::Kernel& kernel, const LowerContext& ctx);
// A reduction over a set of dims (kernels/reduce_set.cuh) gives each output of at most this
// many elements one block (no slices, no finish launch); the planner sizes its threads by it.
inline constexpr int64_t kSetOneBlockElements = 32768;
Expected<KernelCode> lower_map(const dsl::Kernel& kernel, const LowerContext& ctx);
// conv2d: four launches (codegen/lower_conv.h).
Expected<KernelCode> lower_conv2d(const dsl::Kernel& kernel, const LowerContext& ctx);
// pool: one launch of kernels/pool.cuh (codegen/lower_pool.cpp).
Expected<KernelCode> lower_pool(const dsl::Kernel& kernel, const LowerContext& ctx);
// attention: one launch of kernels/attention.cuh (codegen/lower_attention.cpp).
Expected<KernelCode> lower_attention(const dsl::Kernel& kernel, const LowerContext& ctx);
// attention with `impl cutlass_fmha`: CUTLASS's Hopper FMHA (codegen/lower_attention_fmha.cpp).
Expected<KernelCode> lower_attention_fmha(const dsl::Kernel& kernel, const LowerContext& ctx);
// attention with `impl cutlass_mea`: CUTLASS's memory-efficient attention
// (codegen/lower_attention_mea.cpp).
Expected<KernelCode> lower_attention_mea(const dsl::Kernel& kernel, const LowerContext& ctx);
// A CUTLASS attention kernel's operands (lower_attention_fmha.cpp): Q, K, V [, M] and the O its
// chain stores, checked as Q[..,S,E], K[..,L,E], V[..,L,F], O[..,S,F] of one rank (2 or more)
// sharing their batch extents; errors name `impl`.
struct CutlassAttentionOperands {
    std::vector<const TensorInfo*> args;  // Q, K, V [, M]
    const TensorInfo* o = nullptr;
    const dsl::TensorRef* store = nullptr;  // the chain's store of O
    size_t rank = 0;
};
Expected<CutlassAttentionOperands> cutlass_attention_operands(const dsl::Kernel& kernel,
                                                              const LowerContext& ctx,
                                                              const std::string& impl);
// A CUTLASS attention param builder's first lines (`extern "C" int BUILDER(in, out) {`, the ABI,
// tensor and dim counts checked) and its last (the Params `params` copied out with the dim3s
// `grid` and `block`, the cluster and the dynamic shared memory given as C++ expressions).
std::string attention_builder_head(const std::string& builder, int num_tensors,
                                   const LowerContext& ctx);
std::string attention_builder_tail(const std::string& cluster_x, const std::string& cluster_y,
                                   const std::string& smem);
// A CUTLASS attention builder's C++ for extent `i` of `t` (lower_attention_fmha.cpp): the
// run-time dim it names (`in->dims[k]`), or its literal where it names none or a number; an
// error naming `impl` where it names a dim expression.
Expected<std::string> runtime_extent(const TensorInfo& t, size_t i, const Problem& p,
                                     const std::string& where, const std::string& impl);
// `    VAR *= <runtime_extent>;` appended to a builder's `code`.
Status add_runtime_extent(std::string& code, const std::string& var, const TensorInfo& t,
                          size_t i, const Problem& p, const std::string& where,
                          const std::string& impl);
// copy: one launch of kernels/copy.cuh (codegen/lower_copy.cpp).
Expected<KernelCode> lower_copy(const dsl::Kernel& kernel, const LowerContext& ctx);
// rnn: a projection and a persistent recurrent launch per layer of kernels/rnn.cuh
// (codegen/lower_rnn.cpp).
Expected<KernelCode> lower_rnn(const dsl::Kernel& kernel, const LowerContext& ctx);

}  // namespace kforge::codegen
