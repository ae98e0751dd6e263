// Knob rules of the fusion planner (search/seed_knobs.cpp), shared with the partition
// (search/seed.cpp). Each returns candidate configurations, preferred first, safer after.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "dsl/check.h"
#include "problem/problem.h"
#include "search/seed.h"

namespace kforge::search::detail {

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
std::vector<dsl::GemmConfig> conv2d_candidates(const GemmShape& s, PrecisionPolicy policy,
                                               const dsl::DeviceLimits& limits);
std::vector<dsl::RowwiseConfig> rowwise_candidates(const RowShape& s,
                                                   const dsl::DeviceLimits& limits,
                                                   const SeedOptions& options);
std::vector<dsl::MapConfig> map_candidates(int64_t numel, int64_t innermost, int max_elem_bytes,
                                           const dsl::DeviceLimits& limits);

}  // namespace kforge::search::detail

namespace kforge::search::detail {

// One kernel of the partition with its candidate configurations (same head and chain, knobs in
// order of preference).
struct PlannedKernel {
    std::vector<dsl::Kernel> candidates;
    std::string origin;  // "graph[0] linear": the op that started it, for messages
};

// The partition of the op graph into kernels (search/seed_plan.cpp); an Error names the op that
// the language or its lowering cannot express.
Expected<std::vector<PlannedKernel>> plan_kernels(const Problem& problem,
                                                  const dsl::DeviceLimits& limits,
                                                  const SeedOptions& options);

}  // namespace kforge::search::detail
