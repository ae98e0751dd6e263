// The memory plan of a lowered program: every plan buffer (program intermediates and kernel
// workspaces, codegen/launch_plan.h BufferDecl) gets an offset in one device arena, and buffers
// whose lifetimes do not overlap share space. Runs after lowering (codegen/lower.cpp calls
// plan_memory on the finished plan); the runtime's launch path (runtime/), the CUDA device and
// exported programs place the buffers at these offsets.
//
// A buffer's lifetime is the inclusive range of launches (plan order, one stream) that name it
// (a tensor or workspace param, or a param builder's tensor): from its first write to its last
// read. Two buffers named by one launch therefore never share bytes, so a kernel reading one
// buffer and writing another never finds them aliased; there is no in-place reuse (a kernel
// writing where its input lived): codegen marks no kernel as safe for it. A zero_init buffer,
// zeroed once before the whole sequence, and a buffer no launch names live over every launch.
// Placement is greedy by size (largest first), each buffer in the smallest gap between the
// buffers already placed whose lifetimes overlap its own (best fit), offsets aligned to 256 B.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/launch_plan.h"
#include "common/expected.h"
#include "problem/problem.h"

namespace kforge::codegen {

inline constexpr int64_t kArenaAlignment = 256;

struct BufferLifetime {
    size_t first_launch = 0;  // index into LaunchPlan::kernels
    size_t last_launch = 0;   // inclusive
    bool overlaps(const BufferLifetime& o) const {
        return first_launch <= o.last_launch && o.first_launch <= last_launch;
    }
};

// Per plan buffer (same order as plan.buffers), its lifetime over plan.kernels.
std::vector<BufferLifetime> buffer_lifetimes(const LaunchPlan& plan);

// Bytes of one plan buffer (dtype x shape), and rounded up to the arena's alignment.
int64_t buffer_bytes(const BufferDecl& b);

// Assigns plan.buffers[i].offset and fills plan.memory (arena, the same buffers without reuse,
// the problem's inputs, parameters and outputs as `problem` has them, and their sum, the peak).
void plan_memory(LaunchPlan& plan, const Problem& problem);

// The offsets alone (the arena's layout for a plan that carries none, e.g. an older plan.json
// or a plan built by hand): plan_memory's placement, nothing else filled in.
void assign_arena_offsets(LaunchPlan& plan);

// Checks a plan's offsets: every buffer placed, aligned, inside the arena, and no two buffers
// whose lifetimes overlap sharing a byte. An error names the buffers (plan.json .buffers).
Status check_memory_plan(const LaunchPlan& plan);

// One line for people: "peak 12.5 MiB = inputs/outputs 8 MiB + arena 4.5 MiB (6 buffers, 9 MiB
// without reuse)".
std::string describe_memory_plan(const LaunchPlan& plan);

}  // namespace kforge::codegen
