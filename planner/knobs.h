// Knob rules of the fusion planner, one file per kernel family (knobs_gemm.cpp, knobs_conv.cpp,
// knobs_rowwise.cpp, knobs_map.cpp), used by the partition (planner/partition.h). Each returns
// candidate configurations, preferred first, safer after; the planner takes the first candidate
// that checks and lowers (planner/plan.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "dsl/check.h"
#include "dsl/math_policy.h"
#include "planner/plan.h"
#include "problem/pool.h"
#include "problem/problem.h"

namespace kforge::planner::detail {

struct GemmShape {
    int64_t l = 1, m = 1, n = 1, k = 1;
    DType dtype = DType::kBF16;  // operand dtype
};

struct RowShape {
    int64_t rows = 1;
    int64_t len = 1;         // elements reduced or normalized per row (group_norm: per group)
    int elem_bytes = 4;      // input element size
    bool column = false;     // a reduction over a dim that is not the last
    bool softmax_family = false;
};

std::vector<dsl::GemmConfig> gemm_candidates(const GemmShape& s, PrecisionPolicy policy,
                                             const dsl::DeviceLimits& limits,
                                             const SeedOptions& options);
// conv2d: `s` is the implicit GEMM (m = N*P*Q, n = K, k = C*R*S), dtype the input's.
// What the dense conv's candidates depend on beyond its implicit GEMM: its input channels and
// filters (0: not a dense fprop), whether the Hopper form (schedule tma_ws) may run it and in how
// many chunks of channels (codegen::conv_sm90_split); that form leads the list from
// kConvHopperMinChannels channels on where one chunk holds them (the chunked sum, beta 1 through
// the epilogue, has not run on a GPU yet: the search reaches it, through the gates).
struct ConvCandidateFacts {
    int64_t channels = 0, filters = 0;
    bool hopper = false;
    int64_t hopper_chunks = 1;
};
// schedule direct (dsl/conv_direct.h): a convolution (transposed too) of f32 operands (1-3
// spatial dims) whose groups have whole tiles of 8 filters: a group's channels and filters,
// the groups, its products an output (C/groups*T*R*S, the inserted zeros included)
struct ConvDirectFacts {
    int64_t channels = 0, filters = 0, groups = 1, products = 0;
};
inline constexpr int64_t kConvHopperMinChannels = 16;
// The direct convolution first up to this many products an output (C*T*R*S: a 3-channel 7x7
// stem is 147, Level 2's 8-channel 3x3 72); the implicit GEMM first beyond.
inline constexpr int64_t kConvDirectMaxProducts = 256;
// schedule direct's configurations (knobs_conv.cpp), preferred first.
std::vector<dsl::GemmConfig> conv_direct_candidates(const ConvDirectFacts& facts);
std::vector<dsl::GemmConfig> conv2d_candidates(const GemmShape& s, PrecisionPolicy policy,
                                               const dsl::DeviceLimits& limits,
                                               const ConvCandidateFacts& facts = {});
// conv2d of groups > 1 (knobs_conv.cpp): c input channels, k filters, taps = R*S; depthwise
// (groups = c = k, f32) on the direct convolution first, then the group fprop.
std::vector<dsl::GemmConfig> grouped_conv_candidates(const GemmShape& s, int64_t groups, int64_t c,
                                                     int64_t k, int64_t taps, PrecisionPolicy policy,
                                                     const dsl::DeviceLimits& limits);
std::vector<dsl::RowwiseConfig> rowwise_candidates(const RowShape& s,
                                                   const dsl::DeviceLimits& limits,
                                                   const SeedOptions& options);
// cumsum / cumprod rows (kernels/scan.cuh); the first candidate is the seed's.
std::vector<dsl::RowwiseConfig> scan_candidates(int64_t rows, int64_t len, int elem_bytes,
                                                int sm_count);
std::vector<dsl::MapConfig> map_candidates(int64_t numel, int64_t innermost, int max_elem_bytes,
                                           const dsl::DeviceLimits& limits);
// pool: `kind` the pool op, `axes` its spatial axes (problem/pool.h's pool_axes), `planes` =
// N x C, `outputs` = the pool's output elements.
std::vector<dsl::PoolConfig> pool_candidates(OpKind kind, const std::vector<PoolAxis>& axes,
                                             int64_t planes, int64_t outputs,
                                             const dsl::DeviceLimits& limits);

// --- arithmetic the rules share

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The math a seed writes: what `math auto` means for the operands (dsl/math_policy.h); operands
// no math takes (f64, integers) are seeded as f32's.
inline dsl::MathMode seed_math(PrecisionPolicy policy, DType operand) {
    const dsl::ResolvedMath r = dsl::resolve_math(policy, operand);
    return r.ok() ? r.math : dsl::resolve_math(policy, DType::kF32).math;
}

inline int64_t next_pow2(int64_t v) {
    int64_t p = 1;
    while (p < v) p *= 2;
    return p;
}

// Largest of 8/4/2/1 that divides `extent` with at most 16 bytes per access.
inline int vec_for(int64_t extent, int bytes) {
    for (int v : {8, 4, 2, 1})
        if (v * bytes <= 16 && extent % v == 0) return v;
    return 1;
}

}  // namespace kforge::planner::detail
