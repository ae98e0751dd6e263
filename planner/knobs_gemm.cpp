// Knob rules of the fusion planner for gemm kernels (planner/knobs.h): candidate configurations,
// preferred first. The planner takes the first candidate that checks and lowers (planner/plan.cpp),
// so the later entries are the safe fallbacks (smaller tile, stages auto, multistage).
#include <algorithm>
#include <tuple>

#include "planner/knobs.h"

namespace kforge::planner::detail {
namespace {

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
//  - Hopper (sm_90), tf32x3, once 128x128 tiles fill the SMs and the operands' staging is under
//    half the GEMM's time (below that the two staging launches and copies outweigh wgmma's
//    gain): cooperative 128x128x32, cluster 2x1 if M
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
//  - a batch of small matrices that fill less than half a 128x128 tile: the multistage tiles
//    first, the fullest first (64x64 for a [64,16] output), then the rules above.
std::vector<dsl::GemmConfig> gemm_candidates(const GemmShape& s, PrecisionPolicy policy,
                                             const dsl::DeviceLimits& limits,
                                             const SeedOptions& options) {
    using dsl::MathMode;
    using dsl::Schedule;
    const int bytes = dtype_bytes(s.dtype);
    const MathMode math = seed_math(policy, s.dtype);
    std::vector<dsl::GemmConfig> out;
    const int64_t m_tiles = ceil_div(s.m, 128);
    const int64_t square = s.l * m_tiles * ceil_div(s.n, 128);
    const int cm = m_tiles >= 2 && limits.cluster_max >= 2 ? 2 : 1;
    // Many small matrices (Mamba-2's chunked [64,64] x [64,16] products, L = 32768): a 128x128
    // tile would be mostly empty, so the multistage tiles go first, the fullest tile first.
    const int64_t fill_128 = s.m * s.n * 100 / (m_tiles * 128 * ceil_div(s.n, 128) * 128);
    // (the multistage kernel's grid z holds at most 65535 batches)
    const bool small_matrices = s.l > 1 && s.l <= 65535 && fill_128 < 50 && limits.cc_major >= 8;
    if (small_matrices) {
        std::vector<std::tuple<int, int, int>> tiles = {{64, 64, 3}, {128, 64, 3}, {128, 128, 4}};
        const auto fill = [&](const std::tuple<int, int, int>& t) {
            const int64_t tm = std::get<0>(t), tn = std::get<1>(t);
            return s.m * s.n * 100 / (ceil_div(s.m, tm) * tm * ceil_div(s.n, tn) * tn);
        };
        std::stable_sort(tiles.begin(), tiles.end(),
                         [&](const auto& a, const auto& b) { return fill(a) > fill(b); });
        for (auto [tm, tn, st] : tiles)
            out.push_back(config(tm, tn, 32, 1, Schedule::kMultistage, math, st, 8));
    }
    // 3xTF32 on wgmma stages A and B as tf32 parts first: each element of M*K and N*K read once
    // and written three times (16 bytes) before 6MNK tf32 products; with ~400 TFLOPS of tf32
    // wgmma against 3.35-4.8 TB/s that staging is ~300 (1/M + 1/N) of the GEMM's time, and the
    // multistage kernel (which splits in registers, reading each operand once) runs at ~0.6-0.75
    // of wgmma's rate: from half the GEMM's time in staging on, multistage goes first.
    // ShallowWideMLP (M 128, N 32768, K 16384-32768: 550 GFLOP) took 17.9 ms on the H100 in
    // session 26, ~the 60 GB of staging traffic; at M = N = 4096 the share is 0.15.
    const bool staging_bound =
        300.0 * (1.0 / static_cast<double>(s.m) + 1.0 / static_cast<double>(s.n)) > 0.5;
    if (limits.cc_major >= 9 && math == MathMode::kTf32x3 && square >= limits.sm_count &&
        !staging_bound) {
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
    if (limits.cc_major >= 8 && !small_matrices) {
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

}  // namespace kforge::planner::detail
