// Liveness and arena placement of a plan's buffers (codegen/memory_plan.h).
#include "codegen/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>

namespace kforge::codegen {
namespace {

int64_t align_up(int64_t v) { return (v + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

// The arena extent a buffer takes: its bytes rounded up to the alignment, 1 byte at least (an
// empty buffer still gets a distinct, valid pointer).
int64_t extent(const BufferDecl& b) { return align_up(std::max<int64_t>(buffer_bytes(b), 1)); }

std::string mib(int64_t bytes) {
    char buf[32];
    if (bytes < (int64_t{1} << 20))
        std::snprintf(buf, sizeof buf, "%.1f KiB", double(bytes) / 1024.0);
    else
        std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1 << 20));
    return buf;
}

}  // namespace

int64_t buffer_bytes(const BufferDecl& b) {
    int64_t n = dtype_bytes(b.dtype);
    for (int64_t d : b.shape) n *= d;
    return n;
}

std::vector<BufferLifetime> buffer_lifetimes(const LaunchPlan& plan) {
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < plan.buffers.size(); ++i) index.emplace(plan.buffers[i].name, i);
    const size_t last = plan.kernels.empty() ? 0 : plan.kernels.size() - 1;
    std::vector<bool> named(plan.buffers.size(), false);
    std::vector<BufferLifetime> life(plan.buffers.size());
    auto use = [&](const std::string& name, size_t launch) {
        auto it = index.find(name);
        if (it == index.end()) return;  // a problem tensor, not a plan buffer
        BufferLifetime& l = life[it->second];
        if (!named[it->second]) l = {launch, launch};
        named[it->second] = true;
        l.first_launch = std::min(l.first_launch, launch);
        l.last_launch = std::max(l.last_launch, launch);
    };
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
        for (const KernelParam& p : plan.kernels[k].params)
            if (p.kind == ParamKind::kTensor || p.kind == ParamKind::kWorkspace) use(p.name, k);
        for (const std::string& t : plan.kernels[k].builder_tensors) use(t, k);
    }
    for (size_t i = 0; i < plan.buffers.size(); ++i)
        if (!named[i] || plan.buffers[i].zero_init) life[i] = {0, last};
    return life;
}

void assign_arena_offsets(LaunchPlan& plan) {
    const std::vector<BufferLifetime> life = buffer_lifetimes(plan);
    std::vector<size_t> order(plan.buffers.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return extent(plan.buffers[a]) > extent(plan.buffers[b]);
    });
    struct Span {
        int64_t begin, end;
    };
    std::vector<size_t> placed;
    int64_t arena = 0, unshared = 0;
    for (size_t i : order) {
        const int64_t size = extent(plan.buffers[i]);
        unshared += size;
        std::vector<Span> taken;  // the placed buffers live at the same time, by offset
        for (size_t j : placed)
            if (life[i].overlaps(life[j]))
                taken.push_back({plan.buffers[j].offset, plan.buffers[j].offset + extent(plan.buffers[j])});
        std::sort(taken.begin(), taken.end(), [](Span a, Span b) { return a.begin < b.begin; });
        int64_t best = -1, best_gap = 0, at = 0;
        for (const Span& s : taken) {
            const int64_t gap = s.begin - at;
            if (gap >= size && (best < 0 || gap < best_gap)) best = at, best_gap = gap;
            at = std::max(at, s.end);
        }
        plan.buffers[i].offset = best >= 0 ? best : at;
        arena = std::max(arena, plan.buffers[i].offset + size);
        placed.push_back(i);
    }
    plan.memory.alignment = kArenaAlignment;
    plan.memory.arena_bytes = arena;
    plan.memory.unshared_bytes = unshared;
    plan.memory.peak_bytes = plan.memory.io_bytes + arena;
}

void plan_memory(LaunchPlan& plan, const Problem& problem) {
    int64_t io = 0;
    for (const Tensor& t : problem.tensors)
        if (t.role != TensorRole::kIntermediate) io += t.numel() * dtype_bytes(t.dtype);
    plan.memory.io_bytes = io;
    assign_arena_offsets(plan);
}

Status check_memory_plan(const LaunchPlan& plan) {
    const std::vector<BufferLifetime> life = buffer_lifetimes(plan);
    auto where = [](size_t i) { return "plan.json .buffers[" + std::to_string(i) + "]"; };
    for (size_t i = 0; i < plan.buffers.size(); ++i) {
        const BufferDecl& b = plan.buffers[i];
        if (b.offset < 0) return make_error(where(i), b.name + " has no arena offset");
        if (b.offset % kArenaAlignment != 0)
            return make_error(where(i), b.name + " at offset " + std::to_string(b.offset) +
                                            " is not " + std::to_string(kArenaAlignment) +
                                            "-byte aligned");
        if (b.offset + buffer_bytes(b) > plan.memory.arena_bytes)
            return make_error(where(i), b.name + " ends past the arena (" +
                                            std::to_string(plan.memory.arena_bytes) + " bytes)");
        for (size_t j = 0; j < i; ++j) {
            const BufferDecl& o = plan.buffers[j];
            const bool bytes_overlap = b.offset < o.offset + std::max<int64_t>(buffer_bytes(o), 1) &&
                                       o.offset < b.offset + std::max<int64_t>(buffer_bytes(b), 1);
            if (bytes_overlap && life[i].overlaps(life[j]))
                return make_error(where(i), b.name + " shares arena bytes with " + o.name +
                                                " while both are live (launches " +
                                                std::to_string(life[i].first_launch) + ".." +
                                                std::to_string(life[i].last_launch) + " and " +
                                                std::to_string(life[j].first_launch) + ".." +
                                                std::to_string(life[j].last_launch) + ")");
        }
    }
    return Ok{};
}

std::string describe_memory_plan(const LaunchPlan& plan) {
    const MemoryTotals& m = plan.memory;
    return "peak " + mib(m.peak_bytes) + " = inputs/outputs " + mib(m.io_bytes) + " + arena " +
           mib(m.arena_bytes) + " (" + std::to_string(plan.buffers.size()) + " buffers, " +
           mib(m.unshared_bytes) + " without reuse)";
}

}  // namespace kforge::codegen
