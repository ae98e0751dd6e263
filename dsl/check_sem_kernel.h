// State of the semantic pass (check_semantics.cpp) shared with the per-kernel translation
// (check_sem_kernel.cpp). Internal to the checker.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dsl/check_internal.h"

namespace kforge::dsl {

// A value rounded by a `cast` to a dtype below the precision policy's (f16 or bf16 under
// fp32_strict or tf32; f16 under bf16, bf16 under fp16): where, to what, and whether it is only
// pending (the cast was the last statement, so a store of the value into a tensor of that dtype
// takes it as the problem does where the problem declares that value in that dtype: an f16 /
// bf16 output, or an intermediate of its graph) or the rounded value has been computed on (or
// stored where the problem has no such value of that dtype).
struct Narrowed {
    SourceLoc cast;
    DType dtype = DType::kBF16;
    bool pending = true;
};

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
    bool out_of_steps = false;           // the graph stopped (reported once, at `loc`)
    const ProblemExprs* problem_values = nullptr;  // the problem's expressions (keys by tensor)
    std::set<std::pair<std::string, DType>> declared_values;  // (key, dtype) of its tensors
    std::map<std::string, Narrowed> narrowed_tensors;  // stored from a narrowed value
    std::vector<std::pair<int, int>> narrowing_reported;  // casts refused (line, col)

    int64_t extent(const std::string& dim) const;  // 0 where unknown
    int64_t numel(const std::vector<std::string>& dims) const;
    ResolvedTensor& entry(const std::string& name);
    bool dims_known(const TensorRef& ref);
    bool problem_dims_match(const TensorRef& ref, const Tensor& t);
    // The view of problem tensor `t` that `ref` reads where it names t under other dims: a pure
    // rename (problem/copy_op.h renamed_view: the same buffer under the view's dim names), the
    // planner's free view; nullptr where ref reads t under its own dims or no view fits.
    const Tensor* renamed_read(const TensorRef& ref, const Tensor& t) const;
    // `node` (the value of `root`) as the problem's reshapes from root to `view` make it.
    int view_node(int node, const std::string& root, const Tensor& view, const Origin& origin);
    // The node of a tensor `kernel` reads; nullopt (and an error) where it does not resolve.
    // A stored tensor or an input read under a rename of its dims reads that view's value.
    std::optional<int> read(const TensorRef& ref, int kernel);
    void store(const TensorRef& ref, int node, DType dtype, int kernel);
    // Whether the graph has stopped growing (ExprGraph::stopped); the first time, reports it at
    // `loc`, the statement (or kernel head) whose translation stopped it.
    bool stopped(SourceLoc loc);
    // A store of `ref` (value `node`, -1 if unresolved) whose value is `narrowed`: an
    // intermediate is marked narrowed for its readers (narrowed_tensors), and a rounding that
    // reaches an output of the problem is reported at its cast (once per cast).
    void narrowing_at_store(const TensorRef& ref, int node,
                            const std::optional<Narrowed>& narrowed);
};

// Whether `dtype` is below what precision policy `policy` computes intermediates in.
bool below_policy(PrecisionPolicy policy, DType dtype);

// Translates kernel `k` (head and chain) into sem.graph, binding what it stores.
KernelFacts check_kernel_semantics(Sem& sem, int k);

}  // namespace kforge::dsl
