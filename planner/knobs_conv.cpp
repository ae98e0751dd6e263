// Knob rules of the fusion planner for conv2d kernels (planner/knobs.h): candidate
// configurations, preferred first.
#include <algorithm>

#include "planner/knobs.h"

namespace kforge::planner::detail {

// Rules (conv2d: CUTLASS's sm80 implicit-GEMM convolution, multistage only):
//  - math as the gemm's: bf16/f16 -> the same; f32 -> tf32x3 under fp32_strict, else tf32;
//  - tiles (tile K 32: an f32 row of 128 bytes, the crosswise layout's most): f16/bf16
//    128x128x32, then 128x64x32, 64x64x32; f32 128x64x32 then 64x64x32 (3xTF32 keeps three
//    operand fragments live: the smaller warp tiles); stages 3; where the first tile leaves
//    SMs idle (fewer CTAs than SMs), the tile with the most CTAs first, as the gemm's list.
std::vector<dsl::GemmConfig> conv2d_candidates(const GemmShape& s, PrecisionPolicy policy,
                                               const dsl::DeviceLimits& limits) {
    using dsl::MathMode;
    const MathMode math = seed_math(policy, s.dtype);
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

}  // namespace kforge::planner::detail
