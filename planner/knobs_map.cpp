// Knob rules of the fusion planner for map kernels (planner/knobs.h).
#include "planner/knobs.h"

namespace kforge::planner::detail {

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

}  // namespace kforge::planner::detail
