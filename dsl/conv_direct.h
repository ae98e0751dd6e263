// The direct convolution (`schedule direct` on a conv2d kernel; kernels/conv_direct.cuh) stated
// once for the checker, the lowering, the time model and the planner: which convolutions it
// runs and how a tile MxNxK becomes threads, a spatial tile and shared memory.
//
// tile M: output positions a block (kTileP rows of kTileQ along the output's last dim), N:
// filters a block, K: channels a staged step (min(K, C / groups)); `stages` steps in flight (at
// most the steps there are). A thread holds kConvDirectFilters filters (N below 8: all N) at
// kConvDirectPositions positions, so a block has M / 4 * N / 8 threads. f32 operands, math
// f32_simt (the products are exact f32 FMAs). Groups: a block's filters lie in one group (tile N
// divides the filters per group), whose channels it reads.
//
// A transposed convolution runs as the convolution it equals: stride 1 over its input with
// stride - 1 zeros inserted between neighbours (`up`), padded by dilation * (taps - 1) - padding
// (output_padding only lengthens the output), with the filter flipped and read [C, K, ..]: the
// zeros are multiplied (stride^dims the products), as CUTLASS's zero-insertion dgrad does.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "common/expected.h"
#include "problem/problem.h"

namespace kforge::dsl {

inline constexpr int kConvDirectPositions = 4;  // positions a thread
inline constexpr int kConvDirectFilters = 8;    // filters a thread (at most)

// What the direct convolution needs of the problem's conv op.
struct ConvDirectShape {
    int64_t c = 1, k = 1;                                 // channels, filters (all groups)
    int64_t groups = 1;
    int64_t t = 1, r = 1, s = 1;                          // taps (D, H, W)
    int64_t stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dil[3] = {1, 1, 1};  // D, H, W
    int64_t up[3] = {1, 1, 1};                            // transposed: the zero insertion
    bool transposed = false;
    int64_t d = 1, h = 1, w = 1;                          // input extents (before insertion)
    int64_t z = 1, p = 1, q = 1;                          // output extents
    int64_t n = 1;
};

struct ConvDirectTiling {
    int tile_p = 1, tile_q = 1, tile_n = 1, tile_c = 1, stages = 1;
    int fk = 1, fp = kConvDirectPositions, threads = 0;
    int patch_t = 1, patch_h = 1, patch_w = 1;
    int64_t stage_floats = 0;  // one stage: the patch (padded to 4 floats) and the weights
    int64_t smem_bytes = 0;
    std::array<int64_t, 3> grid = {1, 1, 1};  // at the shape the tiling was chosen for
};

// The op's shape, or why the direct convolution does not run it.
inline Expected<ConvDirectShape> conv_direct_shape(const Op& op, const Problem& problem) {
    const int rank = spatial_rank(op.kind);
    if (rank < 1 || rank > 3 || op.inputs.size() < 2)
        return make_error("schedule direct", "runs convolutions of 1-3 spatial dims");
    const Tensor* x = problem.find_tensor(op.inputs[0]);
    const Tensor* w = problem.find_tensor(op.inputs[1]);
    const Tensor* y = problem.find_tensor(op.output);
    const size_t n = static_cast<size_t>(rank) + 2;
    if (!x || !w || !y || x->shape.size() != n || w->shape.size() != n || y->shape.size() != n)
        return make_error("schedule direct", "the conv op's operands are not " +
                                                 std::to_string(n) + "-D");
    if (x->dtype != DType::kF32 || w->dtype != DType::kF32)
        return make_error("schedule direct", "takes f32 operands (x and w are " +
                                                 std::string(to_string(x->dtype)) + ", " +
                                                 std::string(to_string(w->dtype)) + ")");
    ConvDirectShape g;
    g.n = x->shape[0], g.c = x->shape[1], g.k = y->shape[1], g.groups = op.attrs.groups;
    if (g.groups < 1 || g.c % g.groups != 0 || g.k % g.groups != 0)
        return make_error("schedule direct", "groups " + std::to_string(g.groups) +
                                                 " do not divide the channels and filters");
    g.transposed = is_conv_transpose(op.kind);
    const size_t first = 3 - static_cast<size_t>(rank);  // D, H, W slots the op fills
    for (size_t i = 0; i < static_cast<size_t>(rank); ++i) {
        const size_t a = first + i;
        g.stride[a] = op.attrs.stride.at(i), g.pad[a] = op.attrs.padding.at(i);
        g.dil[a] = op.attrs.dilation.at(i);
    }
    if (g.transposed)  // the equal convolution: stride 1 over the zero-inserted input
        for (size_t i = 0; i < static_cast<size_t>(rank); ++i) {
            const size_t a = first + i;
            g.up[a] = g.stride[a];
            g.stride[a] = 1;
            g.pad[a] = g.dil[a] * (w->shape[2 + i] - 1) - g.pad[a];
        }
    int64_t* in[3] = {&g.d, &g.h, &g.w};
    int64_t* taps[3] = {&g.t, &g.r, &g.s};
    int64_t* out[3] = {&g.z, &g.p, &g.q};
    for (size_t i = 0; i < static_cast<size_t>(rank); ++i) {
        *in[first + i] = x->shape[2 + i];
        *taps[first + i] = w->shape[2 + i];
        *out[first + i] = y->shape[2 + i];
    }
    return g;
}

// The blocks of shape `g` under a spatial tile of tile_p x tile_q positions and tile_n filters
// (x: spatial tiles, Q fastest; y: filter tiles; z: images x output depth), or why CUDA cannot
// launch them (y and z at most 65535).
inline Expected<std::array<int64_t, 3>> conv_direct_grid(const ConvDirectShape& g, int tile_p,
                                                         int tile_q, int tile_n) {
    const std::array<int64_t, 3> grid = {
        (g.p + tile_p - 1) / tile_p * ((g.q + tile_q - 1) / tile_q),
        (g.k + tile_n - 1) / tile_n, g.n * g.z};
    if (grid[0] > 0x7fffffff || grid[1] > 65535 || grid[2] > 65535)
        return make_error("schedule direct", "a grid of " + std::to_string(grid[0]) + " x " +
                                                 std::to_string(grid[1]) + " x " +
                                                 std::to_string(grid[2]) +
                                                 " blocks (y: filter tiles, z: images x output "
                                                 "depth, at most 65535 each)");
    return grid;
}

// The launch of tile MxNxK with `stages`, or why it does not fit (smem_limit: the device's
// opt-in shared memory a block).
inline Expected<ConvDirectTiling> conv_direct_tiling(const ConvDirectShape& g, int tile_m,
                                                     int tile_n, int tile_k, int stages,
                                                     int64_t smem_limit) {
    const std::string tile = "tile " + std::to_string(tile_m) + "x" + std::to_string(tile_n) +
                             "x" + std::to_string(tile_k) + " with schedule direct";
    ConvDirectTiling t;
    if (tile_m < 64 || tile_m % 64 != 0)
        return make_error(tile, "tile M (output positions a block) a multiple of 64");
    if (tile_n < 1 || (tile_n > kConvDirectFilters && tile_n % kConvDirectFilters != 0))
        return make_error(tile, "tile N (filters a block) up to 8, or a multiple of 8");
    if (tile_k < 1) return make_error(tile, "tile K (channels a step) at least 1");
    const int64_t group_filters = g.k / g.groups, group_channels = g.c / g.groups;
    if (g.groups > 1 && group_filters % tile_n != 0)
        return make_error(tile, "tile N dividing the " + std::to_string(group_filters) +
                                    " filters of a group (a block's filters lie in one group)");
    t.tile_n = tile_n;
    t.fk = std::min(tile_n, kConvDirectFilters);
    t.threads = tile_m / kConvDirectPositions * (tile_n / t.fk);
    if (t.threads % 32 != 0 || t.threads > 1024)
        return make_error(tile, std::to_string(t.threads) + " threads (M / 4 * N / 8): a block "
                                "takes a multiple of 32, at most 1024");
    // the spatial tile: all M along Q where the output has one row (1-D), else the row
    // length of 8..128 that pads the fewest positions (32 on ties: a warp's row)
    if (g.p == 1) {
        t.tile_q = tile_m, t.tile_p = 1;
    } else {
        int64_t best = -1;
        for (int q : {32, 16, 64, 8, 128}) {
            if (q > tile_m) continue;
            const int p = tile_m / q;
            const int64_t padded = (g.q + q - 1) / q * q * ((g.p + p - 1) / p * p);
            if (best < 0 || padded < best) best = padded, t.tile_q = q, t.tile_p = p;
        }
    }
    t.tile_c = static_cast<int>(std::min<int64_t>(tile_k, group_channels));
    const int64_t steps = (group_channels + t.tile_c - 1) / t.tile_c;
    t.stages = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(stages, steps)));
    t.patch_t = static_cast<int>((g.t - 1) * g.dil[0] + 1);  // one output depth a block
    t.patch_h = static_cast<int>((t.tile_p - 1) * g.stride[1] + (g.r - 1) * g.dil[1] + 1);
    t.patch_w = static_cast<int>((t.tile_q - 1) * g.stride[2] + (g.s - 1) * g.dil[2] + 1);
    const int64_t patch = int64_t(t.tile_c) * t.patch_t * t.patch_h * t.patch_w;
    const int64_t weights = int64_t(t.tile_c) * g.t * g.r * g.s * tile_n;
    t.stage_floats = (patch + 3) / 4 * 4 + weights;
    t.smem_bytes = t.stage_floats * 4 * t.stages;
    if (t.smem_bytes > smem_limit)
        return make_error(tile, "stages " + std::to_string(t.stages) + " of " +
                                    std::to_string(t.stage_floats * 4) + " bytes (a patch of " +
                                    std::to_string(t.tile_c) + " channels x " +
                                    std::to_string(t.patch_t * t.patch_h * t.patch_w) +
                                    " positions and its weights) exceed the " +
                                    std::to_string(smem_limit / 1024) +
                                    " KiB of shared memory a block: use a smaller tile K or M, "
                                    "or fewer stages");
    auto grid = conv_direct_grid(g, t.tile_p, t.tile_q, tile_n);
    if (!grid) return make_error(tile, grid.error().message);
    t.grid = *grid;
    return t;
}

}  // namespace kforge::dsl
