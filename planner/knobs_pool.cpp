// Knob rules of the fusion planner for pool kernels (planner/knobs.h).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

#include "planner/knobs.h"
#include "problem/pool.h"

namespace kforge::planner::detail {
namespace {

// Input rows a tile of `rows` outputs along an axis loads (rows in some output's window), per
// output: kernel 4 stride 1 loads 4 rows for 1 output, 7 for 4.
double rows_per_output(const PoolAxis& a, int rows) {
    const int64_t span = (rows - 1) * a.stride + (a.kernel - 1) * a.dilation + 1;
    int64_t used = 0;
    for (int64_t j = 0; j < span; ++j) {
        bool in = false;
        for (int64_t r = 0; r < rows && !in; ++r) {
            const int64_t u = j - r * a.stride;
            in = u >= 0 && u % a.dilation == 0 && u / a.dilation < a.kernel;
        }
        used += in;
    }
    return double(used) / double(rows);
}

}  // namespace

// Rules. max_pool / avg_pool of up to 256 taps, a plane under 2^31 elements and under 2^30
// outputs (kernels/pool.cuh's 32-bit indices): a thread per tile (pool_tiles), 256 threads;
// - vec: the widest load (4, 2) the input row's length is a multiple of; items: the fewest
//   consecutive outputs along the last axis whose step (items x stride) is a multiple of vec, so
//   neighbouring threads' loads are contiguous (stride 1: 4 outputs from float4 loads); a step
//   past 8 elements (strided windows far apart) or fewer than 4 outputs on the axis: vec 1 and
//   items 1, scalar loads a warp apart by the stride;
// - rows: 1, 2 or 4 consecutive outputs along the next axis, the fewest input rows per output
//   where that saves a fifth (windows overlapping there, stride < kernel: kernel 4 stride 1
//   loads 7 rows for 4 outputs instead of 16).
// Else (adaptive windows, larger windows, global pooling) pool_outputs: windows of 64+ taps split
// over lanes (8 up to 512 taps, then a warp: coalesced reads of the window's rows instead of a
// thread streaming its own region), 2 consecutive outputs per group where the last axis has at
// least 2 outputs and there are more than 8 waves of blocks at one.
// The safe candidate: 128 threads, 1 output each, scalar loads, the same lanes.
std::vector<dsl::PoolConfig> pool_candidates(OpKind kind, const std::vector<PoolAxis>& axes,
                                             int64_t planes, int64_t outputs,
                                             const dsl::DeviceLimits& limits) {
    const int64_t taps = pool_window_size(kind, axes);
    const PoolAxis last = axes.empty() ? PoolAxis{} : axes.back();
    const PoolAxis next = axes.size() < 2 ? PoolAxis{} : axes[axes.size() - 2];
    int64_t plane_in = 1;
    for (const PoolAxis& a : axes) plane_in *= a.in;
    const int64_t int_max = std::numeric_limits<int32_t>::max();
    const bool tiled = (kind == OpKind::kMaxPool || kind == OpKind::kAvgPool) && taps <= 256 &&
                       plane_in <= int_max && outputs <= (int64_t{1} << 30);
    dsl::PoolConfig c;
    c.threads = 256;
    dsl::PoolConfig safe;
    safe.threads = 128;
    safe.items = 1;
    if (tiled) {
        for (int vec : {4, 2}) {
            if (last.in % vec != 0 || last.out < 4) continue;
            const int items = vec / int(std::gcd<int64_t>(vec, last.stride));
            if (items * last.stride > 8) continue;
            c.vec = vec;
            c.items = items;
            break;
        }
        double best = rows_per_output(next, 1);
        for (int rows : {2, 4}) {
            if (rows > next.out) break;
            const double per = rows_per_output(next, rows);
            if (per <= 0.8 * rows_per_output(next, 1) && per < best) {
                best = per;
                c.rows = rows;
            }
        }
        return {c, safe};
    }
    c.lanes = taps >= 512 ? 32 : taps >= 64 ? 8 : 1;
    const int64_t groups_per_wave = int64_t{limits.sm_count} * 8 * (c.threads / c.lanes);
    c.items = last.out >= 2 && outputs >= groups_per_wave * 2 ? 2 : 1;
    safe.lanes = c.lanes;
    return {c, safe};
}

}  // namespace kforge::planner::detail
