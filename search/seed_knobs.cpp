// Knob rules of the fusion planner: each kernel's candidate configurations, preferred first.
// The partition (seed.cpp) takes the first candidate that checks and lowers, so the later
// entries are the safe fallbacks (smaller tile, stages auto, multistage, smaller vec, passes 2).
#include <algorithm>
#include <tuple>

#include "search/seed_internal.h"

namespace kforge::search::detail {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t next_pow2(int64_t v) {
    int64_t p = 1;
    while (p < v) p *= 2;
    return p;
}

// Largest of 8/4/2/1 that divides `extent` with at most 16 bytes per access.
int vec_for(int64_t extent, int bytes) {
    for (int v : {8, 4, 2, 1})
        if (v * bytes <= 16 && extent % v == 0) return v;
    return 1;
}

dsl::GemmConfig config(int tm, int tn, int tk, int cm, dsl::Schedule schedule, dsl::MathMode math,
                       int stages, int swizzle) {
    dsl::GemmConfig c;
    c.tile_m = tm;
    c.tile_n = tn;
    c.tile_k = tk;
    c.cluster_m = cm;
    c.cluster_n = 1;
    c.schedule = schedule;
    c.math = math;
    c.stages = stages;
    c.raster = dsl::Raster::kAlongN;
    c.swizzle = swizzle;
    return c;
}

}  // namespace

// Rules:
//  - math: bf16/f16 operands -> the same; f32 -> tf32x3 under fp32_strict, else tf32 (on the
//    Hopper schedules MN-major operands are staged K-major, and tf32x3 runs as one tf32 GEMM
//    over K' = 3K of staged hi/lo parts with a promoted accumulator, codegen/gemm_stage.h).
//  - Hopper (sm_90), tf32x3, once 128x128 tiles fill the SMs (below that the two staging
//    launches and copies outweigh wgmma's gain): cooperative 128x128x32, cluster 2x1 if M
//    allows - on the H200 at 4096^3 1.25 ms with staging against 1.36 ms for 128x192 and
//    2.69 ms for cuBLAS SGEMM (bench/kernels/tf32x3_accum, 2026-12-01); larger tiles spill the
//    doubled accumulator (dsl/check_legality.cpp) - then cluster 1x1, then the multistage list.
//  - Hopper (sm_90) with another tensor-core math, tile K = 128 bytes of operand:
//      K <= 128                                   -> pingpong 128x128, cluster 2x1
//      fewer 128x128 tiles than SMs and K >= 4096 -> cooperative 128x128, cluster 1x1, splitk
//        the largest power of two (<= 16, K / split >= 2048) whose CTAs fit in one wave, when
//        that is at least 2 (gemm_large_k_bf16, 1024^2 x 131072 on the H200, 2026-12-01:
//        splitk 2 335.6 us = 102% of cuBLAS, stream_k 525.9 us); else stream_k 128x128
//      at least one wave of 128x256 tiles         -> cooperative 128x256, cluster 2x1
//      otherwise                                  -> cooperative 128x128 (cluster 2x1 if M allows)
//    then the safer cooperative 128x128 cluster 1x1, tma_ws 64x128, and the multistage list.
//  - multistage (the fallback, or before sm_90): 128x128x32 stages 4, 128x64x32 stages 3,
//    64x64x32.
std::vector<dsl::GemmConfig> gemm_candidates(const GemmShape& s, PrecisionPolicy policy,
                                             const dsl::DeviceLimits& limits,
                                             const SeedOptions& options) {
    using dsl::MathMode;
    using dsl::Schedule;
    const int bytes = dtype_bytes(s.dtype);
    MathMode math = s.dtype == DType::kBF16  ? MathMode::kBf16
                    : s.dtype == DType::kF16 ? MathMode::kF16
                    : policy == PrecisionPolicy::kFp32Strict ? MathMode::kTf32x3
                                                             : MathMode::kTf32;
    std::vector<dsl::GemmConfig> out;
    const int64_t m_tiles = ceil_div(s.m, 128);
    const int64_t square = s.l * m_tiles * ceil_div(s.n, 128);
    const int cm = m_tiles >= 2 && limits.cluster_max >= 2 ? 2 : 1;
    if (limits.cc_major >= 9 && math == MathMode::kTf32x3 && square >= limits.sm_count) {
        out.push_back(config(128, 128, 32, cm, Schedule::kCooperative, math, 0, 8));
        if (cm > 1) out.push_back(config(128, 128, 32, 1, Schedule::kCooperative, math, 0, 8));
    }
    const bool tma = limits.cc_major >= 9 && math != MathMode::kTf32x3;
    if (tma) {
        const int tk = 128 / bytes;
        const int64_t wide = s.l * m_tiles * ceil_div(s.n, 256);
        const bool want_wide = options.gemm_tiles == SeedGemmTiles::kWide ||
                               (options.gemm_tiles == SeedGemmTiles::kAuto && wide >= limits.sm_count);
        if (s.k <= 128 && options.gemm_tiles == SeedGemmTiles::kAuto) {
            out.push_back(config(128, 128, tk, cm, Schedule::kPingpong, math, 0, 8));
        } else if (square < limits.sm_count && s.k >= 4096 &&
                   options.gemm_tiles == SeedGemmTiles::kAuto) {
            // Split K in whole waves where at least two splits fit; stream-K for the rest.
            int split = 1;
            while (split < 16 && square * split * 2 <= limits.sm_count && s.k / (split * 2) >= 2048)
                split *= 2;
            if (split > 1) {
                dsl::GemmConfig c = config(128, 128, tk, 1, Schedule::kCooperative, math, 0, 1);
                c.split_k = split;
                out.push_back(c);
            }
            out.push_back(config(128, 128, tk, 1, Schedule::kStreamK, math, 0, 1));
        } else if (want_wide) {
            out.push_back(config(128, 256, tk, cm, Schedule::kCooperative, math, 0, 8));
        } else {
            out.push_back(config(128, 128, tk, cm, Schedule::kCooperative, math, 0, 8));
        }
        out.push_back(config(128, 128, tk, 1, Schedule::kCooperative, math, 0, 8));
        out.push_back(config(64, 128, tk, 1, Schedule::kTmaWarpSpecialized, math, 0, 1));
    }
    if (limits.cc_major >= 8) {
        // Largest tile first while it still fills the SMs; for a problem too small for that
        // (a few CTAs of 128x128 on 132 SMs), the tile with the most CTAs first.
        std::vector<std::tuple<int, int, int>> tiles = {{128, 128, 4}, {128, 64, 3}, {64, 64, 3}};
        auto ctas = [&](const std::tuple<int, int, int>& t) {
            return s.l * ceil_div(s.m, std::get<0>(t)) * ceil_div(s.n, std::get<1>(t));
        };
        if (ctas(tiles.front()) < limits.sm_count) {
            std::stable_sort(tiles.begin(), tiles.end(), [&](const auto& a, const auto& b) {
                const bool fa = ctas(a) >= limits.sm_count, fb = ctas(b) >= limits.sm_count;
                if (fa != fb) return fa;
                return !fa && ctas(a) > ctas(b);
            });
        }
        for (auto [tm, tn, st] : tiles)
            out.push_back(config(tm, tn, 32, 1, Schedule::kMultistage, math, st, 8));
    }
    return out;
}

// Rules (conv2d: CUTLASS's sm80 implicit-GEMM convolution, multistage only):
//  - math as the gemm's: bf16/f16 -> the same; f32 -> tf32x3 under fp32_strict, else tf32;
//  - tiles (tile K 32: an f32 row of 128 bytes, the crosswise layout's most): f16/bf16
//    128x128x32, then 128x64x32, 64x64x32; f32 128x64x32 then 64x64x32 (3xTF32 keeps three
//    operand fragments live: the smaller warp tiles); stages 3; where the first tile leaves
//    SMs idle (fewer CTAs than SMs), the tile with the most CTAs first, as the gemm's list.
std::vector<dsl::GemmConfig> conv2d_candidates(const GemmShape& s, PrecisionPolicy policy,
                                               const dsl::DeviceLimits& limits) {
    using dsl::MathMode;
    const MathMode math = s.dtype == DType::kBF16  ? MathMode::kBf16
                          : s.dtype == DType::kF16 ? MathMode::kF16
                          : policy == PrecisionPolicy::kFp32Strict ? MathMode::kTf32x3
                                                                   : MathMode::kTf32;
    std::vector<std::pair<int, int>> tiles = {{128, 64}, {64, 64}};
    if (s.dtype != DType::kF32) tiles.insert(tiles.begin(), {128, 128});
    auto ctas = [&](const std::pair<int, int>& t) {
        return ceil_div(s.m, t.first) * ceil_div(s.n, t.second);
    };
    if (ctas(tiles.front()) < limits.sm_count) {
        std::stable_sort(tiles.begin(), tiles.end(), [&](const auto& a, const auto& b) {
            const bool fa = ctas(a) >= limits.sm_count, fb = ctas(b) >= limits.sm_count;
            if (fa != fb) return fa;
            return !fa && ctas(a) > ctas(b);
        });
    }
    std::vector<dsl::GemmConfig> out;
    for (auto [tm, tn] : tiles) {
        dsl::GemmConfig c = dsl::conv2d_default_config();
        c.tile_m = tm;
        c.tile_n = tn;
        c.tile_k = 32;
        c.stages = 3;
        c.math = math;
        out.push_back(c);
    }
    return out;
}

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

// Rules: vec = largest of 8/4/2/1 dividing the innermost dim with at most 16 bytes of the widest
// element per access; block 256; 2 items per thread when there are more than 8 waves of blocks.
std::vector<dsl::MapConfig> map_candidates(int64_t numel, int64_t innermost, int max_elem_bytes,
                                           const dsl::DeviceLimits& limits) {
    dsl::MapConfig c;
    c.block = 256;
    c.vec = vec_for(innermost, max_elem_bytes);
    c.items_per_thread = numel >= int64_t{limits.sm_count} * 8 * c.block * c.vec * 2 ? 2 : 1;
    dsl::MapConfig safe;
    safe.block = 256;
    safe.vec = 1;
    return {c, safe};
}

}  // namespace kforge::search::detail
