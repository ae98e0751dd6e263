// Knob rules of the fusion planner for conv2d kernels (planner/knobs.h): candidate
// configurations, preferred first.
#include <algorithm>

#include "codegen/lower_conv.h"
#include "planner/knobs.h"

namespace kforge::planner::detail {

// Rules (conv2d: CUTLASS's sm80 implicit-GEMM convolution, multistage, and on sm_90 for the
// dense 2-D / 1-D fprop (f.hopper) CUTLASS 3.x's sm90 one,
// schedule tma_ws, tiles 128x128, 128x64, 64x128 (the least padded filters first, then the most
// CTAs first where SMs idle), tile K one 128-byte row):
//  - math as the gemm's: bf16/f16 -> the same; f32 -> tf32x3 under fp32_strict, else tf32;
//  - tiles (tile K 32: an f32 row of 128 bytes, the crosswise layout's most): f16/bf16
//    128x128x32, then 128x64x32, 64x64x32; f32 128x64x32 then 64x64x32 (3xTF32 keeps three
//    operand fragments live: the smaller warp tiles); stages 3; where the first tile leaves
//    SMs idle (fewer CTAs than SMs), the tile with the most CTAs first, as the gemm's list;
//    128x32x32 first for 32 filters or fewer; iterator few_channels where the padded channels
//    are fewer than tile K (dense fprop: f.channels).
// Rules (schedule direct, dsl/conv_direct.h): tile N the filters rounded up to 8, 16, 32, at
// most 64 (groups: the largest of 64, 32, 16, 8 that divides a group's filters); tile M 128
// (256 under 32 filters: at least 64 threads); tile K 16 channels a step, one step in flight
// where they are all of a group's channels, else two; then the same at tile K 8 (a patch too
// large for shared memory at 16).
std::vector<dsl::GemmConfig> conv_direct_candidates(const ConvDirectFacts& f) {
    const int64_t k = std::max<int64_t>(1, f.filters);
    int tn = k <= 8 ? 8 : k <= 16 ? 16 : k <= 32 ? 32 : 64;
    if (f.groups > 1)
        for (int t : {64, 32, 16, 8})
            if (k % t == 0) {
                tn = t;
                break;
            }
    std::vector<dsl::GemmConfig> out;
    for (int tk : {16, 8}) {
        dsl::GemmConfig c = dsl::conv2d_default_config();
        c.schedule = dsl::Schedule::kDirect;
        c.math = dsl::MathMode::kF32Simt;
        c.tile_m = tn < 32 ? 256 : 128, c.tile_n = tn, c.tile_k = tk;
        c.stages = f.channels > 0 && f.channels <= tk ? 1 : 2;
        out.push_back(c);
    }
    return out;
}

std::vector<dsl::GemmConfig> conv2d_candidates(const GemmShape& s, PrecisionPolicy policy,
                                               const dsl::DeviceLimits& limits,
                                               const ConvCandidateFacts& f) {
    using dsl::MathMode;
    const MathMode math = seed_math(policy, s.dtype);
    auto ctas = [&](const std::pair<int, int>& t) {
        return ceil_div(s.m, t.first) * ceil_div(s.n, t.second);
    };
    std::vector<dsl::GemmConfig> hopper;
    if (f.hopper && limits.cc_major >= 9 && math != MathMode::kF32Simt) {
        const int tile_k = s.dtype == DType::kF32 ? 32 : 64;  // one 128-byte row
        std::vector<std::pair<int, int>> tiles = {{128, 128}, {128, 64}, {64, 128}};
        // the filters a tile N pads to first: 64 filters in a tile N of 128 run twice the MMA
        // work (ResNet's 64-filter 3x3 at 128x128: 1642 us, 22.5 TFLOPS, H100, session 28)
        auto padded = [&](const std::pair<int, int>& t) { return ceil_div(s.n, t.second) * t.second; };
        const bool idle = ctas(tiles.front()) < limits.sm_count;
        std::stable_sort(tiles.begin(), tiles.end(), [&](const auto& a, const auto& b) {
            if (padded(a) != padded(b)) return padded(a) < padded(b);
            return idle && ctas(a) > ctas(b);
        });
        for (auto [tm, tn] : tiles) {
            dsl::GemmConfig c = dsl::conv2d_default_config();
            c.tile_m = tm, c.tile_n = tn, c.tile_k = tile_k, c.stages = 3;
            c.schedule = dsl::Schedule::kTmaWarpSpecialized;
            c.math = math;
            hopper.push_back(c);
        }
    }
    std::vector<std::pair<int, int>> tiles = {{128, 64}, {64, 64}};
    if (s.dtype != DType::kF32) tiles.insert(tiles.begin(), {128, 128});
    // few filters (K <= 32: LeNet5's 6 and 16) fill a tile N of 32 (16 does not build), not 64
    if (f.filters > 0 && f.filters <= 32) tiles.insert(tiles.begin(), {128, 32});
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
        // channels padded to 16 bytes below tile K: the few-channels iterator walks the
        // flattened R*S*C instead of a mostly-zero tile-K step per filter position
        if (f.channels > 0 && math != MathMode::kF32Simt &&
            conv_round_up(f.channels, codegen::conv_channel_multiple(s.dtype)) < c.tile_k)
            c.iterator = dsl::ConvIterator::kFewChannels;
        out.push_back(c);
    }
    // The Hopper form first where the channels fill its tile-K steps (kConvHopperMinChannels)
    // in one chunk, after the multistage list otherwise (the search still tries it). On the H200
    // (bench/calls/c7, KernelBench L1 55: C 64, 3x3, 615 GFLOP) 9.37 ms against 13.06 ms on
    // multistage, every gate passed (profile median 4.0e-6).
    const bool hopper_first =
        f.hopper && f.channels >= kConvHopperMinChannels && f.hopper_chunks == 1;
    out.insert(hopper_first ? out.begin() : out.end(), hopper.begin(), hopper.end());
    return out;
}

// Rules (groups > 1; the constraints are CUTLASS's, codegen/lower_conv_forms.cpp):
//  - depthwise (groups = C = K) of f32 operands: the direct convolution under math f32_simt
//    first (exact f32 FMA, every policy): tile M 64 (an 8x8 output tile; 1x64 for conv1d),
//    tile N the most channels per CTA of 64, 32, 16 that divide C (else 16, C padded with zero
//    channels: 83's 8 channels), tile K 16, stages 3; the
//    iterator auto (stride and dilation compiled in) and, for filters over 5x5 (which spill with
//    compiled-in taps, CUTLASS's example 46 says), iterator optimized first;
//  - then the tensor-op group fprop at the policy's math, tile N 64 (tile M 128, then 64; the
//    conv2d tiles known to build: a narrower tile N leaves the 2x2 warps fewer operand accesses
//    than threads, a static assertion in CUTLASS's thread maps): one group per CTA (the
//    optimized iterator) where 64 divides the filters per group K / groups, several groups per
//    CTA where they divide 64 (the MMA work grows with 64 / (K / groups): depthwise pays 64x);
//    none otherwise (the planner refuses it); tile K 32 where a group has 32+ channels, else 16
//    (tile K past the group's channels multiplies zeros).
std::vector<dsl::GemmConfig> grouped_conv_candidates(const GemmShape& s, int64_t groups, int64_t c,
                                                     int64_t k, int64_t taps, PrecisionPolicy policy,
                                                     const dsl::DeviceLimits& limits) {
    (void)limits;
    std::vector<dsl::GemmConfig> out;
    if (groups == c && k == c && s.dtype == DType::kF32) {
        for (int tn : {64, 32, 16}) {
            if (c % tn != 0 && tn != 16) continue;  // else C padded with zero channels to 16
            dsl::GemmConfig d = dsl::conv2d_default_config();
            d.tile_m = 64, d.tile_n = tn, d.tile_k = 16, d.stages = 3;
            d.math = dsl::MathMode::kF32Simt;
            dsl::GemmConfig o = d;
            o.iterator = dsl::ConvIterator::kOptimized;
            if (taps > 25) {
                out.push_back(o);
                out.push_back(d);
            } else {
                out.push_back(d);
                out.push_back(o);
            }
            break;
        }
    }
    const int64_t kg = k / groups, cg = c / groups;
    if (kg % 64 == 0 || 64 % kg == 0) {
        for (int tm : {128, 64}) {
            dsl::GemmConfig g = dsl::conv2d_default_config();
            g.tile_m = tm, g.tile_n = 64, g.tile_k = cg >= 32 ? 32 : 16, g.stages = 3;
            g.math = seed_math(policy, s.dtype);
            out.push_back(g);
        }
    }
    return out;
}

}  // namespace kforge::planner::detail
