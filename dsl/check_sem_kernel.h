// State of the semantic pass (check_semantics.cpp) shared with the per-kernel translation
// (check_sem_kernel.cpp). Internal to the checker.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dsl/check_internal.h"

namespace kforge::dsl {

struct Sem {
    struct Bound {
        int node = -1;
        DType dtype = DType::kF32;
        std::vector<std::string> dims;
        int kernel = -1;
        SourceLoc loc;
        bool read = false;
    };

    const Program& program;
    const Problem& problem;
    Reporter& reporter;
    ExprGraph graph;
    std::map<std::string, Bound> bound;  // stored so far (outputs and intermediates)
    std::map<std::string, std::vector<std::pair<int, SourceLoc>>> stores;  // every store, by name
    int max_bytes = 0;                   // widest element read by the kernel being translated
    int max_out_bytes = 0;               // widest element stored by it

    int64_t extent(const std::string& dim) const;  // 0 where unknown
    int64_t numel(const std::vector<std::string>& dims) const;
    ResolvedTensor& entry(const std::string& name);
    bool dims_known(const TensorRef& ref);
    bool problem_dims_match(const TensorRef& ref, const Tensor& t);
    // The node of a tensor `kernel` reads; nullopt (and an error) where it does not resolve.
    std::optional<int> read(const TensorRef& ref, int kernel);
    void store(const TensorRef& ref, int node, DType dtype, int kernel);
};

// Translates kernel `k` (head and chain) into sem.graph, binding what it stores.
KernelFacts check_kernel_semantics(Sem& sem, int k);

}  // namespace kforge::dsl
