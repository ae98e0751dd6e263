// The checker of the kernel language (docs/language.md). Run after parse_program(), before
// codegen. It proves two things and reports every problem it finds (not only the first):
//  1. semantics: the program computes the problem's graph (dsl/check_semantics.cpp, with the
//     canonical expression form in dsl/check_expr.h), and every tensor it names resolves;
//  2. legality: every kernel's configuration runs on the target device (shared memory,
//     registers, tiles, clusters, alignment, math mode vs precision policy, row-wise and map
//     knobs) (dsl/check_legality*.cpp).
// Errors are user errors: `where` is "file:line:col", `message` says what is wrong and what would
// be legal, `detail` is the source line with a caret when the source text is given.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "dsl/ast.h"
#include "problem/problem.h"

namespace kforge {
struct DeviceSpec;
}

namespace kforge::dsl {

// CTAs that may share one row of a rowwise kernel (`split`): a split row is one thread-block
// cluster, up to 16 CTAs on sm_90 (above 8 the launch allows a non-portable cluster size).
inline constexpr int kMaxRowSplit = 16;

// How a `passes 1` row kernel without smem_stage holds its part of a row (the checker and the
// lowering both follow it): in registers up to kMaxRowRegValues values per thread; else all in
// shared memory where that fits; else both, row_reg_values_beside_stage(threads) values per
// thread in registers and the rest in shared memory (a 4 MB f32 row over a 16-CTA cluster:
// 256 KB a CTA, more than either holds). The registers a thread may have at one block per SM
// (65536 / threads, in steps of 8, at most 255) less 48 for the kernel's own, at most 64:
// nvcc 13 compiles softmax with 64 such values at 512 threads in 128 registers without spills;
// 40 at 768 threads (80 registers) spilled 68 bytes.
inline constexpr int kMaxRowRegValues = 64;
constexpr int row_reg_values_beside_stage(int threads) {
    if (threads <= 0) return 0;
    const int regs = (65536 / threads) / 8 * 8 < 255 ? (65536 / threads) / 8 * 8 : 255;
    const int values = regs - 48;
    return values < 0 ? 0 : (values < kMaxRowRegValues ? values : kMaxRowRegValues);
}

// The vector width a rowwise or map kernel reads rows of `len` elements with: the widest of 8,
// 4 and 2 not above `vec` that divides `len` (so every row stays aligned), else 1.
constexpr int widest_vec(int vec, int64_t len) {
    for (int v : {8, 4, 2})
        if (v <= vec && len % v == 0) return v;
    return 1;
}

// Shared memory a row kernel keeps for itself (its reductions' scratch) beside a staged row.
inline constexpr int64_t kRowStaticSmemReserve = 1024;

// How one CTA holds its part of a row, in vectors of `vec` elements dealt out over the block's
// `rows_per_block` x `per_row` threads; the checker refuses what does not fit and the lowering
// instantiates RowCfg<.., ITEMS = items, .., STAGED = staged>.
//   passes 1: on chip, by the rule above (smem_stage: all in shared memory); fits when the
//             staged part is within `smem_budget` bytes
//   passes 2: smem_stage stages as much as `smem_budget` takes, at least one vector a thread
//             (else it does not fit), the rest re-read from memory; without it, all streamed
struct RowHolding {
    int64_t chunk = 0;         // elements of the CTA's part (whole vectors)
    int64_t vectors = 0;       // per thread
    int64_t items = 0;         // of those, in registers
    int64_t staged = 0;        // of those, in shared memory
    int64_t vector_bytes = 0;  // one vector for every thread of the block
    bool fits = true;
    int64_t smem_bytes() const { return staged * vector_bytes; }
};
RowHolding row_holding(int64_t row_len, int split, int vec, int per_row, int rows_per_block,
                       int elem_bytes, int passes, bool smem_stage, int64_t smem_budget);

// What the checker needs to know about the target GPU.
struct DeviceLimits {
    std::string name = "h200";               // for messages ("the h200 allows 227 KiB")
    int cc_major = 9;
    int cc_minor = 0;
    int sm_count = 132;
    int64_t smem_per_block_optin_bytes = 227 * 1024;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
    int64_t smem_per_sm_bytes = 228 * 1024;
    int max_threads_per_block = 1024;
    int regs_per_sm = 65536;
    int max_regs_per_thread = 255;
    int cluster_max = 4;  // CTAs per cluster kforge's gemm schedules allow (1: no clusters)
};

// The limits of a device table entry (sol/device.h).
DeviceLimits device_limits(const DeviceSpec& device);

// A tensor the program names, resolved against the problem.
struct ResolvedTensor {
    std::string name;
    std::vector<std::string> dim_names;  // as the program writes them ("M", "1")
    std::vector<int64_t> shape;
    DType dtype = DType::kF32;           // as stored in memory
    TensorRole role = TensorRole::kIntermediate;  // kInput/kParam/kOutput: the problem's
    int stored_by = -1;                  // index of the kernel that stores it; -1 for inputs
    std::vector<int> read_by;            // kernels that read it, in order
};

struct CheckResult {
    std::vector<Error> errors;
    std::vector<std::string> warnings;
    std::vector<ResolvedTensor> tensors;  // problem tensors first, then intermediates
    int64_t steps = 0;                    // work the semantic proof took (CheckOptions::max_steps)

    bool ok() const { return errors.empty(); }
    const ResolvedTensor* find_tensor(std::string_view name) const;
};

// The most nodes a gemm's epilogue may lower to (a tree: each use of a `let` value copies its
// nodes; dsl/check_lowering.cpp). A chain of kMaxChainOps statements without reuse stays below.
inline constexpr int64_t kMaxEpilogueTreeNodes = 1024;

// The checker's default work budget (StepBudget, dsl/check_expr.h): proving that a program
// computes its problem builds one expression node per operation of either, a step plus one per
// operand. The suite's programs take tens of steps; a million is about half a second of one
// core and a few tens of MB. A program or problem that needs more is refused with an error
// naming the statement (or the problem's op) where the budget ran out.
inline constexpr int64_t kCheckMaxSteps = 1'000'000;

// Where and how to render errors: `file_name` goes into "file:line:col"; when `source` is the
// program text, every error also carries the source line and a caret under the column.
// `max_steps` bounds the checker's work (kCheckMaxSteps).
struct CheckOptions {
    std::string_view file_name = "<program>";
    std::string_view source;
    int64_t max_steps = kCheckMaxSteps;
};

// Checks `program` against `problem` for a device with `limits`: semantics, then legality.
CheckResult check_program(const Program& program, const Problem& problem,
                          const DeviceLimits& limits, const CheckOptions& options = {});

}  // namespace kforge::dsl
