// Legality of rowwise and map kernels: block shape, vector width vs dtype and extents, row-op
// options, and the shared memory / registers of one-pass row caching.
//
// Decision (rows_per_block): `threads` is the block size; a block handles rows_per_block rows,
// each with threads / rows_per_block threads. That share must be a whole number of warps, or a
// power-of-two group inside one warp (reduced with shuffles), so threads must divide evenly.
// One-pass caching keeps a row's values in registers up to kRowRegsPerThread per thread, beyond
// that (or with smem_stage) in shared memory, all of it. A split row spreads one row over a
// cluster of `split` CTAs, so a block then holds one row.
//
// These rules mirror codegen/lower_rowwise_emit.cpp and codegen/lower_map.cpp (the holding of a
// row, the block and grid limits), so that a search never spends a compile on a program the
// lowering refuses: keep them in step.
#include <algorithm>
#include <string>

#include "dsl/check_internal.h"

namespace kforge::dsl {
namespace {

constexpr int64_t kMaxGridX = 0x7fffffff;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string kib(int64_t bytes) { return std::to_string((bytes + 1023) / 1024) + " KiB"; }

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Vector widths legal for `extent` elements of `bytes` each: divide the extent, <= 16 bytes.
std::string legal_vecs(int64_t extent, int bytes) {
    std::string s;
    for (int v : {1, 2, 4, 8})
        if (extent % v == 0 && v * bytes <= 16) s += (s.empty() ? "" : ", ") + std::to_string(v);
    return s;
}

bool check_threads(const Kernel& kn, const char* knob, int threads, const DeviceLimits& limits,
                   Reporter& rep) {
    if (threads >= 32 && threads <= limits.max_threads_per_block && threads % 32 == 0) return true;
    rep.error(knob_loc(kn, knob), std::string(knob) + " " + std::to_string(threads) +
                                      ": use a multiple of 32 from 32 to " +
                                      std::to_string(limits.max_threads_per_block));
    return false;
}

// vec: one of 1, 2, 4, 8; at most 16 bytes per access; divides `extent` (named `what`).
void check_vec(const Kernel& kn, int vec, int bytes, int64_t extent, const std::string& what,
               Reporter& rep) {
    const SourceLoc at = knob_loc(kn, "vec");
    const std::string v = "vec " + std::to_string(vec);
    if (vec != 1 && vec != 2 && vec != 4 && vec != 8) {
        rep.error(at, v + ": use 1, 2, 4 or 8");
    } else if (vec * bytes > 16) {
        rep.error(at, v + " x " + std::to_string(bytes) + " bytes = " + std::to_string(vec * bytes) +
                          " bytes per access; at most 16: use vec " + legal_vecs(extent, bytes));
    } else if (extent > 0 && extent % vec != 0) {
        rep.error(at, v + " does not divide " + what + " = " + std::to_string(extent) +
                          "; legal vec values: " + legal_vecs(extent, bytes));
    }
}

// Whether the kernel takes the row path of the lowering (rows of the last dim, or a norm), not
// the column-reduction path (a reduction over an inner dim), where rows_per_block means nothing.
bool row_path(const Kernel& kn) {
    const bool norm = kn.row_op == RowOp::kLayerNorm || kn.row_op == RowOp::kRmsNorm ||
                      kn.row_op == RowOp::kGroupNorm;
    if (over_is_set(kn)) return false;  // a set of dims: the column-reduction family
    const auto axis = row_axis(kn);
    return norm || !axis || *axis + 1 == kn.args.at(0).dims.size();
}

// Where the lowering keeps a block's rows (row_holding in check.h): a passes-1 row that fits
// on chip in no way, or a smem_stage that cannot stage one vector a thread, is refused.
void check_row_holding(const Kernel& kn, const KernelFacts& facts, int bytes, int per_row,
                       const DeviceLimits& limits, Reporter& rep) {
    const RowwiseConfig& c = kn.rowwise;
    if (facts.row_len <= 0 || per_row <= 0 || c.split < 1) return;
    const int vec = widest_vec(c.vec, facts.row_len);  // the lowering's width
    const int64_t budget = limits.smem_per_block_optin_bytes - kRowStaticSmemReserve;
    const RowHolding h = row_holding(facts.row_len, c.split, vec, per_row, c.rows_per_block,
                                     bytes, c.passes, c.smem_stage, budget);
    if (h.fits) return;
    if (c.passes == 1) {
        rep.error(knob_loc(kn, "passes"),
                  "passes 1 caches each row: " + std::to_string(h.vectors * vec) + " values per "
                  "thread" + (c.smem_stage ? " staged in shared memory"
                                           : ", " + std::to_string(h.items * vec) +
                                                 " of them in registers") +
                  ", and " + std::to_string(c.rows_per_block) + " row(s) of " +
                  std::to_string(h.chunk) + " values need " + kib(h.smem_bytes()) +
                  " of shared memory; the " + limits.name + " allows " + kib(budget) + " (" +
                  kib(limits.smem_per_block_optin_bytes) + " opt-in less " +
                  kib(kRowStaticSmemReserve) + " of static shared memory): use passes 2, a "
                  "larger split or fewer rows_per_block");
    } else {
        rep.error(knob_loc(kn, "smem_stage"),
                  "smem_stage: one vector per thread of " + std::to_string(c.rows_per_block) +
                      " row(s) is " + kib(h.vector_bytes) + ", more than the " + kib(budget) +
                      " of shared memory the " + limits.name + " allows: drop smem_stage or use "
                      "fewer threads");
    }
}

}  // namespace

RowHolding row_holding(int64_t row_len, int split, int vec, int per_row, int rows_per_block,
                       int elem_bytes, int passes, bool smem_stage, int64_t smem_budget) {
    RowHolding h;
    h.chunk = ceil_div(ceil_div(row_len, split), vec) * vec;
    h.vectors = ceil_div(h.chunk, int64_t(per_row) * vec);
    h.vector_bytes = int64_t(rows_per_block) * per_row * vec * elem_bytes;
    if (passes == 1 && !smem_stage && h.vectors * vec <= kMaxRowRegValues) {
        h.items = h.vectors;
    } else if (passes == 1) {
        if (!smem_stage && h.vectors * h.vector_bytes > smem_budget)
            h.items = row_reg_values_beside_stage(rows_per_block * per_row) / vec;
        h.staged = h.vectors - h.items;
        h.fits = h.smem_bytes() <= smem_budget;
    } else if (smem_stage) {
        h.staged = std::min(h.vectors, smem_budget / h.vector_bytes);
        h.fits = h.staged > 0;
    }
    return h;
}

void check_legality_rowwise(const Kernel& kn, const KernelFacts& facts,
                            const CheckResult& tensors, const DeviceLimits& limits,
                            Reporter& rep) {
    const RowwiseConfig& c = kn.rowwise;
    const std::string op(to_string(kn.row_op));
    const ResolvedTensor* x = tensors.find_tensor(kn.args.at(0).name);
    const int bytes = x ? dtype_bytes(x->dtype) : 4;
    const bool threads_ok = check_threads(kn, "threads", c.threads, limits, rep);
    if (c.split < 1 || c.split > kMaxRowSplit)
        rep.error(knob_loc(kn, "split"), "split must be 1.." + std::to_string(kMaxRowSplit));
    const int64_t len = facts.row_len / std::max(1, c.split);
    check_vec(kn, c.vec, bytes, facts.row_len % std::max(1, c.split) == 0 ? len : facts.row_len,
              c.split > 1 ? "the row length per split" : "the row length", rep);
    const bool softmax_family = kn.row_op == RowOp::kSoftmax || kn.row_op == RowOp::kLogSoftmax ||
                                kn.row_op == RowOp::kLogsumexp;
    if (c.online && !softmax_family) {
        rep.error(knob_loc(kn, "online"), "online applies to softmax, log_softmax and logsumexp, "
                                          "not " + op);
    }
    const bool norm = kn.row_op == RowOp::kLayerNorm || kn.row_op == RowOp::kRmsNorm ||
                      kn.row_op == RowOp::kGroupNorm || kn.row_op == RowOp::kL1Normalize ||
                      kn.row_op == RowOp::kL2Normalize;
    if (kn.eps && !norm) rep.error(knob_loc(kn, "eps"), "eps applies to norms, not " + op);
    const bool scan = kn.row_op == RowOp::kCumsum || kn.row_op == RowOp::kCumprod;
    if (c.reverse && !scan) rep.error(knob_loc(kn, "reverse"), "reverse applies to scans, not " + op);
    if (c.exclusive && !scan)
        rep.error(knob_loc(kn, "exclusive"), "exclusive applies to scans, not " + op);
    if (kn.groups && kn.row_op != RowOp::kGroupNorm)
        rep.error(knob_loc(kn, "groups"), "groups applies to group_norm, not " + op);
    if (c.passes != 1 && c.passes != 2) rep.error(knob_loc(kn, "passes"), "passes must be 1 or 2");

    if (!threads_ok) return;
    const SourceLoc rpb_at = knob_loc(kn, "rows_per_block");
    if (c.rows_per_block < 1 || c.rows_per_block > 64) {
        rep.error(rpb_at, "rows_per_block must be 1..64");
        return;
    }
    const int per_row = c.threads / c.rows_per_block;
    if (c.threads % c.rows_per_block != 0 || !(per_row % 32 == 0 || is_pow2(per_row))) {
        rep.error(rpb_at, "rows_per_block " + std::to_string(c.rows_per_block) + " with threads " +
                              std::to_string(c.threads) + ": each row gets threads / rows_per_block "
                              "threads, which must be whole warps or a power of two below 32");
        return;
    }
    if (c.split > 1 && c.rows_per_block != 1 && row_path(kn)) {
        rep.error(rpb_at, "rows_per_block " + std::to_string(c.rows_per_block) + " with split " +
                              std::to_string(c.split) + ": a split row is spread over a cluster "
                              "of split blocks, so each block holds one row; use rows_per_block "
                              "1, or split 1");
        return;
    }
    if (!row_path(kn)) return;  // a column reduction: neither rows_per_block nor caching apply
    if (facts.rows > 0 && ceil_div(facts.rows, c.rows_per_block) * c.split > kMaxGridX) {
        rep.error(rpb_at, std::to_string(facts.rows) + " rows over rows_per_block " +
                              std::to_string(c.rows_per_block) + " and split " +
                              std::to_string(c.split) + " need more than 2^31 - 1 blocks; use "
                              "more rows_per_block");
    }
    // A scan streams its row tile by tile (kernels/scan.cuh): nothing is held on chip.
    if (scan) return;
    check_row_holding(kn, facts, bytes, per_row, limits, rep);
}
void check_legality_map(const Kernel& kn, const KernelFacts& facts, const DeviceLimits& limits,
                        Reporter& rep) {
    const MapConfig& c = kn.map;
    check_threads(kn, "block", c.block, limits, rep);
    if (c.items_per_thread < 1 || c.items_per_thread > 16)
        rep.error(knob_loc(kn, "items"), "items must be 1..16");
    // Vectors must not straddle a row of the innermost dim (broadcast operands restart there).
    check_vec(kn, c.vec, facts.max_elem_bytes, facts.last_extent,
              "the innermost dim " + (facts.value_dims.empty() ? std::string("(scalar)")
                                                               : facts.value_dims.back()),
              rep);
    // The lowering's grid: enough blocks for the scalar path (grid_stride caps it).
    if (!c.grid_stride && c.block > 0 && c.items_per_thread > 0 &&
        ceil_div(facts.numel, int64_t(c.block) * c.items_per_thread) > kMaxGridX) {
        rep.error(knob_loc(kn, "items"),
                  std::to_string(facts.numel) + " elements over block " +
                      std::to_string(c.block) + " x items " + std::to_string(c.items_per_thread) +
                      " need more than 2^31 - 1 blocks; use more items or grid_stride");
    }
}

}  // namespace kforge::dsl
