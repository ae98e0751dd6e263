// Knob rules of the fusion planner for pool kernels (planner/knobs.h).
#include "planner/knobs.h"

namespace kforge::planner::detail {

// Rules: 256 threads; 2 consecutive outputs per thread (neighbouring windows share input rows)
// where the last axis has at least 2 outputs and there are more than 8 waves of blocks at one;
// the safe candidate: 128 threads, 1 output each.
std::vector<dsl::PoolConfig> pool_candidates(int64_t outputs, int64_t last_out,
                                             const dsl::DeviceLimits& limits) {
    dsl::PoolConfig c;
    c.threads = 256;
    c.items = last_out >= 2 && outputs >= int64_t{limits.sm_count} * 8 * c.threads * 2 ? 2 : 1;
    dsl::PoolConfig safe;
    safe.threads = 128;
    safe.items = 1;
    return {c, safe};
}

}  // namespace kforge::planner::detail
