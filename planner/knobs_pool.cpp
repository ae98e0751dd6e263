// Knob rules of the fusion planner for pool kernels (planner/knobs.h).
#include "planner/knobs.h"

namespace kforge::planner::detail {

// Rules: 256 threads; windows of 64+ taps (global pooling, large adaptive or avg windows) split
// over lanes (8 up to 512 taps, then a warp: coalesced reads of the window's rows instead of
// a thread streaming its own region); 2 consecutive outputs per group (neighbouring windows
// share input rows) where the last axis has at least 2 outputs and there are more than 8 waves
// of blocks at one; the safe candidate: 128 threads, 1 output each, the same lanes.
std::vector<dsl::PoolConfig> pool_candidates(int64_t outputs, int64_t last_out, int64_t taps,
                                             const dsl::DeviceLimits& limits) {
    dsl::PoolConfig c;
    c.threads = 256;
    c.lanes = taps >= 512 ? 32 : taps >= 64 ? 8 : 1;
    const int64_t groups_per_wave = int64_t{limits.sm_count} * 8 * (c.threads / c.lanes);
    c.items = last_out >= 2 && outputs >= groups_per_wave * 2 ? 2 : 1;
    dsl::PoolConfig safe;
    safe.threads = 128;
    safe.items = 1;
    safe.lanes = c.lanes;
    return {c, safe};
}

}  // namespace kforge::planner::detail
