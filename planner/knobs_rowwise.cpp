// Knob rules of the fusion planner for rowwise kernels (planner/knobs.h): candidate
// configurations, preferred first; the later entries are the safe fallbacks (passes 2, vec 1).
#include <algorithm>

#include "planner/knobs.h"

namespace kforge::planner::detail {

// Rules (n = elements per row, v = largest legal vec):
//  - column reductions: 256 threads, vec dividing the reduced extent, one pass;
//  - short rows (n / v vectors at most 64): about two vectors per thread, a power of two of
//    threads per row, rows_per_block = 512 / threads per row (at most 64), and no online softmax
//    (one pass over registers gains nothing from it). H200, 2026-12-01
//    (bench/kernels/results/h200-2026-12-01-s5/sweep-rowwise_f32.txt): softmax 1M x 128 f32 at
//    16 threads per row in 512-thread blocks 260.8 us, a warp per row in 256 threads 277.2 us,
//    the same with online 315.6 us;
//  - longer rows: about four vectors per thread, 32..256 threads (times rowwise_threads_scale).
//    H200, 2026-12-01 (bench/kernels/results/h200-2026-12-01-s4/bench1.txt): layer_norm
//    32768x8192 bf16 at four vectors per thread 96.5% of copy bandwidth, at two (512 threads)
//    83.7%; rms_norm 65536x4096 bf16 98.6% at four, 97.2% at two;
//  - more than 64 values per thread: a row of at most a third of a block's shared memory stays
//    in one pass (the lowering holds it in shared memory; log_softmax 16384x32000 bf16 at 256
//    threads 86% of copy, against 52.5% for 512 threads holding 62 values each in registers);
//    a longer row is split over a cluster of up to 16 CTAs of 512 threads, each CTA's part at
//    most 64 KiB, and read twice (passes 2, online for the softmax family): the second read of
//    so small a part comes from L2. H200, 2026-12-01 (sweep above): group_norm 32 x 131072 f32
//    split 8, 512 threads, passes 2 359.5 us against 428.8 us holding the part in registers
//    (passes 1) and 514.4 us at 256 threads; softmax 128 x 1M f32 split 16, 512 threads
//    397.5 us against 434.7 us for split 8 at 1024 threads;
//  - few long rows (rows < SMs, n >= 8192): split the row to fill the SMs.
std::vector<dsl::RowwiseConfig> rowwise_candidates(const RowShape& s,
                                                   const dsl::DeviceLimits& limits,
                                                   const SeedOptions& options) {
    std::vector<dsl::RowwiseConfig> out;
    dsl::RowwiseConfig c;
    c.online = s.softmax_family;
    if (s.column) {
        c.threads = 256;
        c.vec = vec_for(s.len, s.elem_bytes);
        out.push_back(c);
    } else {
        const int max_threads = std::min(1024, limits.max_threads_per_block);
        int64_t vecs = ceil_div(s.len, vec_for(s.len, s.elem_bytes));
        const bool short_row = vecs <= 64;
        int64_t tpr = short_row ? next_pow2(ceil_div(vecs, 2))
                                : std::clamp<int64_t>(next_pow2(ceil_div(vecs, 4)), 32, 256);
        if (options.rowwise_threads_scale != 1.0 && tpr >= 32) {
            tpr = std::clamp<int64_t>(static_cast<int64_t>(tpr * options.rowwise_threads_scale), 32,
                                      max_threads);
        }
        int split = 1;
        int passes = 1;
        auto cached = [&](int64_t t, int sp) { return ceil_div(ceil_div(s.len, sp), t); };
        const bool smem_row = s.len * s.elem_bytes <= limits.smem_per_block_optin_bytes / 3;
        if (cached(tpr, 1) > 64 && !smem_row) {
            constexpr int64_t kPartBytes = int64_t{64} << 10;
            tpr = std::min(512, max_threads);
            while (split < dsl::kMaxRowSplit && ceil_div(s.len, split) * s.elem_bytes > kPartBytes)
                split *= 2;
            passes = 2;
        }
        if (split == 1 && s.rows < limits.sm_count && s.len >= 8192 && tpr >= 32) {
            while (split < 8 && s.rows * split * 2 <= limits.sm_count &&
                   s.len % (split * 2) == 0)
                split *= 2;
        }
        while (split > 1 && s.len % split != 0) split /= 2;
        c.split = split;
        c.passes = passes;
        c.online = s.softmax_family && !short_row;
        c.vec = vec_for(s.len / split, s.elem_bytes);
        if (tpr < 128 && split == 1) {
            c.rows_per_block = static_cast<int>(std::min<int64_t>(64, 512 / tpr));
            c.threads = static_cast<int>(tpr) * c.rows_per_block;
        } else {
            c.threads = static_cast<int>(tpr);
        }
        out.push_back(c);
        dsl::RowwiseConfig two = c;
        two.passes = 2;
        out.push_back(two);
        if (passes == 2) {
            // the one-read alternative: the CTA's part held in registers and shared memory
            // together (passes 1), with the fewest CTAs per row that hold it. H200, 2026-12-01
            // (bench/kernels/results/h200-2026-12-01-s7/long_rows.txt): group_norm 1024 x 131072
            // f32 at split 2, 512 threads 313.1 us against 359.0 us for split 8 passes 2; softmax
            // 128 x 1M f32 at split 16 461.3 us against 397.4 us - a seed variant (rowwise_one_read), not the start
            dsl::RowwiseConfig hybrid = c;
            hybrid.threads = std::min(512, max_threads);
            hybrid.rows_per_block = 1;
            hybrid.passes = 1;
            const int64_t budget = limits.smem_per_block_optin_bytes - dsl::kRowStaticSmemReserve;
            for (int sp = 1; sp <= dsl::kMaxRowSplit; sp *= 2) {
                if (s.len % sp != 0) continue;
                const int v = vec_for(s.len / sp, s.elem_bytes);
                if (dsl::row_holding(s.len, sp, v, hybrid.threads, 1, s.elem_bytes, 1, false, budget)
                        .fits) {
                    hybrid.split = sp;
                    hybrid.vec = v;
                    if (options.rowwise_one_read) out.insert(out.begin(), hybrid);
                    else out.push_back(hybrid);
                    break;
                }
            }
        }
        dsl::RowwiseConfig wide = c;
        wide.rows_per_block = 1;
        wide.threads = max_threads;
        wide.split = 1;
        wide.passes = 2;
        wide.vec = vec_for(s.len, s.elem_bytes);
        out.push_back(wide);
    }
    dsl::RowwiseConfig safe;
    safe.threads = 256;
    safe.vec = 1;
    safe.passes = 2;
    safe.online = s.softmax_family;
    out.push_back(safe);
    return out;
}

// Scan (cumsum / cumprod) row kernels stream the row in tiles of threads / rows_per_block x vec
// elements with a running carry (kernels/scan.cuh). Rows of at most two warp tiles take one warp
// or less per row (256 threads a block); longer rows a whole block per row, led by the narrowest
// of 256, 512, 1024 threads that covers the row in one tile, else by 1024 when the rows are few
// (they must still fill the SMs' threads) and 256 when 256-thread rows fill every SM's 2048
// threads (H200 2026-12-02: 4096 rows of 32768 f32, 256 threads 294 us against 1024 threads
// 324 us; 128 such rows 29.7 us against 15.0 us). The first candidate is the seed's; the others
// are the search's. The vector is the widest of at most 16 bytes that divides the row (a row of
// 3, a scan over Mamba-2's chunks, is read one element at a time: a wider vector would cross
// into the next row).
std::vector<dsl::RowwiseConfig> scan_candidates(int64_t rows, int64_t len, int elem_bytes,
                                                int sm_count) {
    dsl::RowwiseConfig base;
    base.vec = vec_for(len, elem_bytes);
    std::vector<dsl::RowwiseConfig> out;
    if (len <= 64 * base.vec) {
        int per_row = 1;
        while (per_row < 32 && int64_t(per_row) * base.vec < len) per_row *= 2;
        dsl::RowwiseConfig c = base;
        c.threads = 256;
        c.rows_per_block = 256 / per_row;
        out.push_back(c);
    }
    constexpr int64_t kThreadsPerSm = 2048;
    int lead = rows * 256 >= int64_t(sm_count) * kThreadsPerSm ? 256 : 1024;
    for (int threads : {256, 512, 1024}) {
        if (int64_t(threads) * base.vec >= len) {
            lead = threads;
            break;
        }
    }
    for (int threads : {lead, 1024, 512, 256}) {
        bool seen = false;
        for (const auto& c : out) seen = seen || (c.threads == threads && c.rows_per_block == 1);
        if (seen) continue;
        dsl::RowwiseConfig c = base;
        c.threads = threads;
        out.push_back(c);
    }
    return out;
}

}  // namespace kforge::planner::detail
