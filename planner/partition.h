// Internals of the fusion planner's partition (planner/plan.h): the kernels it plans, the state
// of its one walk over the op graph (Planner) and the helpers every kernel family shares. The
// walk is partition.cpp; each family adds its kernels in its own file: plan_gemm.cpp (matmul,
// linear), plan_conv.cpp (conv2d), plan_rowwise.cpp (reductions, softmax family, norms, scans),
// plan_map.cpp (other element-wise ops); plan_chain.cpp absorbs the element-wise ops that follow
// a kernel into its chain. Knob rules are planner/knobs.h.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/expected.h"
#include "dsl/ast.h"
#include "dsl/check.h"
#include "planner/plan.h"
#include "problem/problem.h"

namespace kforge::planner::detail {

// One kernel of the partition with its candidate configurations (same head and chain, knobs in
// order of preference).
struct PlannedKernel {
    std::vector<dsl::Kernel> candidates;
    std::string origin;  // "graph[0] linear": the op that started it, for messages
};

// The partition of the op graph into kernels (partition.cpp); an Error names the op that the
// language or its lowering cannot express.
Expected<std::vector<PlannedKernel>> plan_kernels(const Problem& problem,
                                                  const dsl::DeviceLimits& limits,
                                                  const SeedOptions& options);

// --- shared helpers (partition.cpp)

// A tensor's dims as a program names them: its dim names, an unnamed dim by its extent.
std::vector<std::string> dims_of(const Tensor& t);
// `dims` without the dims of extent 1 written "1".
std::vector<std::string> named(const std::vector<std::string>& dims);
// The planner's user error about `op`: "not expressible: <op>: <why>".
Error not_expressible(const Op& op, const std::string& why);
// A chain statement of `kind` with scalar `numbers`.
dsl::ChainOp stmt(dsl::ChainOpKind kind, std::vector<double> numbers = {});
// Whether a chain may store `d`: f32, f16 or bf16.
bool is_float_storage(DType d);

// argmax / argmin / cross_entropy: one rowwise kernel storing the result (plan_index.cpp).
struct Planner;
bool is_index_kernel_op(OpKind k);
bool is_index_kernel_op(const Op& op);  // also masked_fill with a structured mask
Status add_index_kernel(Planner& pl, const Op& op);
// matmul(Q, K^T) [-> scale] [-> mask] -> softmax -> matmul(., V) as one attention kernel
// (plan_attention.cpp) from the first matmul, op `i`: true when planned, false when the
// pattern does not match (the ops are planned one by one).
Expected<bool> add_attention(Planner& pl, size_t i);
// Binary element-wise `op` whose output spans dims neither input has: a copy kernel expanding
// input `pos` to them, its chain `stmts` (the op) and what follows (plan_view.cpp).
Status add_broadcast_copy(Planner& pl, const Op& op, size_t pos, std::vector<dsl::ChainOp> stmts);

// --- element-wise ops as chain statements (plan_chain.cpp)

// The other operand of a binary op: a tensor, or a value of the chain named by `let`.
struct Operand {
    std::optional<dsl::TensorRef> tensor;
    std::string name;
};

// The chain statements of element-wise `op` applied to the value, which is its input `pos`;
// `other` is the other operand of a binary op. nullopt where no chain expresses it.
std::optional<std::vector<dsl::ChainOp>> translate(const Op& op, size_t pos, const Operand& other);

// The state of the walk: what is stored so far, which ops are planned, the kernels planned.
struct Planner {
    const Problem& p;
    const dsl::DeviceLimits& limits;
    const SeedOptions& opt;
    std::set<std::string> available;            // inputs and tensors stored so far
    std::map<std::string, DType> stored_dtype;  // as the program stores them
    std::map<std::string, std::vector<size_t>> readers;  // tensor -> op indices (one per use)
    std::vector<bool> done;
    std::vector<PlannedKernel> kernels;
    // Folded views (plan_view.cpp): a view's tensor -> the tensor it reads, under its own dims.
    std::map<std::string, dsl::TensorRef> views;
    // Intermediates stored as f32 whatever intermediates_f32 says (store_dtype's rule for the
    // readers still applies): the scores of an attention planned unfused (plan_attention.cpp).
    std::set<std::string> f32_intermediates;

    // The problem's tensors by name (plan_kernels fills it): a lookup per operand of every op
    // walked, where Problem::find_tensor scans every tensor (quadratic in a network's size).
    std::unordered_map<std::string, const Tensor*> by_name;

    const Tensor& tensor(const std::string& name) const {
        auto it = by_name.find(name);
        return it != by_name.end() ? *it->second : *p.find_tensor(name);
    }
    dsl::TensorRef ref(const std::string& name) const {
        if (auto it = views.find(name); it != views.end()) return it->second;
        return dsl::TensorRef{name, dims_of(tensor(name)), {}};
    }
    bool is_output(const std::string& name) const {
        return std::find(p.outputs.begin(), p.outputs.end(), name) != p.outputs.end();
    }
    DType dtype_of(const std::string& name) const {
        auto it = stored_dtype.find(name);
        return it != stored_dtype.end() ? it->second : tensor(name).dtype;
    }

    // --- stores (partition.cpp)

    // The dtype the program stores `name` in: the problem's, or f32 for an intermediate that
    // only rowwise/map kernels read when intermediates_f32 is on or `name` is in
    // f32_intermediates.
    DType store_dtype(const std::string& name) const;
    // Appends `store name` (after a cast to its store dtype where the value differs) to `kn`'s
    // chain and marks `name` available.
    Status emit_store(dsl::Kernel& kn, DType& value, const std::string& name, const Op& op);

    // What planning a kernel changes besides the kernel: absorb() plans two ways from one state.
    struct Planned {
        std::vector<bool> done;
        std::set<std::string> available;
        std::map<std::string, DType> stored_dtype;
    };
    Planned planned() const { return {done, available, stored_dtype}; }
    void restore(Planned s) {
        done = std::move(s.done);
        available = std::move(s.available);
        stored_dtype = std::move(s.stored_dtype);
    }

    // --- chains (plan_chain.cpp)

    // Whether a gemm epilogue can read `other` (dims [], [N], [M], [M,N] or [L,M,N]); a conv2d
    // epilogue (`conv`, out [N,K,P,Q]): [], [K] or [N,K,P,Q].
    static bool epilogue_operand(const std::vector<std::string>& other,
                                 const std::vector<std::string>& out, bool conv = false);
    // Absorbs the element-wise consumers of `cur` into `kn`'s chain and stores what the rest of
    // the program reads. `input`: a map's input tensor, a value of the chain from its start.
    Status absorb(dsl::Kernel& kn, const std::string& cur, DType& value, const Op& start,
                  const std::optional<std::string>& input = std::nullopt);
    // A region of element-wise ops one chain computes after a kernel's value (plan_region()).
    struct Region {
        std::string start;                 // the kernel's value before the region
        std::optional<std::string> input;  // a map's input, named where the region reads it
        std::vector<size_t> ops;
        std::set<std::string> values;      // start, input and every op's output
    };
    std::optional<Region> plan_region(const dsl::Kernel& kn, const std::string& cur,
                                      const std::optional<std::string>& input) const;
    bool stored_after(const std::string& v, const Region& r) const;
    Status emit_region(dsl::Kernel& kn, const Region& r, DType& value, const Op& start);
    Status absorb_linear(dsl::Kernel& kn, std::string cur, DType& value, const Op& start);

    // --- row reductions and their prologues (plan_rowwise.cpp)

    // A row reduction's element-wise prologue (`pre { .. }`): the tensor the row is read from
    // and the statements applied to each element before it is reduced.
    struct Prologue {
        std::string x;
        std::vector<dsl::ChainOp> stmts;
    };
    std::optional<Prologue> fold_into_reduction(const Op& op, size_t& reduction);
    // The reductions a prologue can feed, and whether `next` reduces `value` (its input) over
    // the last dim, a named dim that occurs once in `value`'s dims.
    static bool is_row_reduction(OpKind k) {
        return k == OpKind::kSum || k == OpKind::kMean || k == OpKind::kMax || k == OpKind::kMin;
    }
    std::vector<std::string> reduction_set(const Op& op, const std::vector<std::string>& dx,
                                           size_t axis) const;
    bool reduces_last_dim(const Op& next, const std::string& value) const;
    Status add_rowwise(const Op& op, const Prologue* pre = nullptr);

    // --- the other families
    bool add_row_contraction(const Op& op);     // plan_gemm.cpp
    dsl::TensorRef stage_f32(const Tensor& x);  // plan_gemm.cpp
    Status add_gemm(const Op& op);              // plan_gemm.cpp
    Status add_conv2d(const Op& op);            // plan_conv.cpp
    Status add_pool(const Op& op);              // plan_pool.cpp
    Status add_map(const Op& op);               // plan_map.cpp
    Status add_map_kernel(const Op& op, dsl::Kernel kn);
    bool mask_view(const std::string& t) const;  // plan_chain.cpp
    Status add_shape(const Op& op);             // plan_view.cpp
    Status add_rank_view(const Op& op);         // plan_view.cpp: a view of op's input
    int max_bytes(const dsl::Kernel& kn) const; // plan_map.cpp
};

}  // namespace kforge::planner::detail
