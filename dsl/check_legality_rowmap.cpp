// Legality of rowwise and map kernels: block shape, vector width vs dtype and extents, row-op
// options, and the shared memory / registers of one-pass row caching.
//
// Decision (rows_per_block): `threads` is the block size; a block handles rows_per_block rows,
// each with threads / rows_per_block threads. That share must be a whole number of warps, or a
// power-of-two group inside one warp (reduced with shuffles), so threads must divide evenly.
// One-pass caching keeps a row's f32 values in registers up to kRowRegsPerThread per thread,
// beyond that in shared memory (row_len * 4 bytes per row of the block).
#include <string>

#include "dsl/check_internal.h"

namespace kforge::dsl {
namespace {

constexpr int64_t kRowRegsPerThread = 64;

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

}  // namespace

void check_legality_rowwise(const Kernel& kn, const KernelFacts& facts,
                            const CheckResult& tensors, const DeviceLimits& limits,
                            Reporter& rep) {
    const RowwiseConfig& c = kn.rowwise;
    const std::string op(to_string(kn.row_op));
    const ResolvedTensor* x = tensors.find_tensor(kn.args.at(0).name);
    const int bytes = x ? dtype_bytes(x->dtype) : 4;
    const bool threads_ok = check_threads(kn, "threads", c.threads, limits, rep);
    if (c.split < 1 || c.split > 16) rep.error(knob_loc(kn, "split"), "split must be 1..16");
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
                      kn.row_op == RowOp::kGroupNorm;
    if (kn.eps && !norm) rep.error(knob_loc(kn, "eps"), "eps applies to norms, not " + op);
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
    if (c.passes == 1 && per_row > 0 && len > 0) {
        const int64_t per_thread = (len + per_row - 1) / per_row;
        const int64_t smem = len * 4 * c.rows_per_block;
        if (per_thread > kRowRegsPerThread && smem > limits.smem_per_block_optin_bytes) {
            rep.error(knob_loc(kn, "passes"),
                      "passes 1 caches each row: " + std::to_string(per_thread) + " values per "
                      "thread exceed the " + std::to_string(kRowRegsPerThread) +
                      " kept in registers, and " + std::to_string(c.rows_per_block) + " row(s) of " +
                      std::to_string(len) + " f32 need " + kib(smem) + " of shared memory; the " +
                      limits.name + " allows " + kib(limits.smem_per_block_optin_bytes) +
                      ": use passes 2 or fewer rows_per_block");
        }
    }
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
}

}  // namespace kforge::dsl
