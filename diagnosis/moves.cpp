// The moves table (diagnosis/moves.h). Each class lists its moves in the order the diagnosis
// proposer tries them; the advice a kernel's diagnosis shows is the same list filtered by the
// kernel's kind. The knob names are the kernel language's (dsl/knobs.cpp).
#include "diagnosis/moves.h"

#include <map>

#include "dsl/knobs.h"

namespace kforge {
namespace {

using dsl::KernelKind;
using Moves = std::vector<DirectedMove>;
constexpr KernelKind kGemm = KernelKind::kGemm;
constexpr KernelKind kRowwise = KernelKind::kRowwise;
constexpr KernelKind kMap = KernelKind::kMap;
constexpr KernelKind kPool = KernelKind::kPool;
constexpr KernelKind kAttention = KernelKind::kAttention;

DirectedMove up(KernelKind kind, std::string knob, std::string reason) {
    return {kind, std::move(knob), 1, "", std::move(reason)};
}
DirectedMove down(KernelKind kind, std::string knob, std::string reason) {
    return {kind, std::move(knob), -1, "", std::move(reason)};
}
DirectedMove set(KernelKind kind, std::string knob, std::string word, std::string reason) {
    return {kind, std::move(knob), 0, std::move(word), std::move(reason)};
}
DirectedMove advice(KernelKind kind, std::string text) { return {kind, "", 0, "", std::move(text)}; }

// More bytes in flight: a memory-bound kernel far from its DRAM roofline.
Moves memory_moves() {
    return {
        up(kRowwise, "vec", "wider vector accesses"),
        up(kMap, "vec", "wider vector accesses"),
        up(kMap, "items", "more bytes in flight per thread"),
        up(kPool, "items", "neighbouring outputs share input rows: fewer loads per output"),
        up(kRowwise, "rows_per_block", "more rows per block"),
        down(kRowwise, "passes", "keep the row on chip (one pass)"),
        // last: where the moves above are refused (f32 at 16 bytes already, a row too long to
        // keep), more CTAs per row put more bytes in flight
        up(kRowwise, "split", "more CTAs per row, more bytes in flight"),
    };
}

Moves spill_moves() {
    return {
        down(kGemm, "tile", "smaller tiles"),
        down(kGemm, "stages", "fewer stages"),
        down(kRowwise, "rows_per_block", "fewer rows per block"),
        up(kRowwise, "threads", "more threads share the row"),
        up(kRowwise, "passes", "re-read the row instead of caching it"),
        // cooperative splits the tile's accumulators over two consumer warpgroups
        set(kGemm, "schedule", "cooperative", "two consumer warpgroups share the accumulators"),
        down(kMap, "items", "fewer vectors per thread, fewer live registers"),
        down(kMap, "vec", "narrower vectors, fewer live registers"),
        down(kPool, "items", "fewer outputs per thread, fewer live registers"),
    };
}

Moves dram_moves() {
    Moves m = memory_moves();
    // A GEMM that streams DRAM: bigger tiles read each operand fewer times, and a wider raster
    // swizzle keeps the operand tiles of neighbouring CTAs in L2 (CUTLASS's threadblock swizzle).
    m.push_back(up(kGemm, "tile", "bigger tiles read each operand fewer times"));
    m.push_back(up(kGemm, "swizzle", "a wider raster swizzle keeps operand tiles in L2"));
    m.push_back(advice(kGemm, "fuse the consumer ops into the epilogue { ... } (one pass over DRAM)"));
    m.push_back(advice(kRowwise, "fuse into the producer's epilogue (gemm epilogue chain)"));
    m.push_back(advice(kMap, "fuse into the producer's epilogue (gemm epilogue chain)"));
    return m;
}

Moves l2_moves() {
    return {
        up(kGemm, "cluster", "a larger cluster multicasts tiles, fewer L2 reads"),
        up(kGemm, "swizzle", "a wider raster swizzle reuses L2 lines"),
        up(kGemm, "tile", "bigger tiles read each operand fewer times"),
        up(kRowwise, "rows_per_block", "the rows of a block share broadcast operands"),
        down(kRowwise, "passes", "one pass over the row, no re-read"),
        up(kMap, "items", "fewer, fuller memory transactions"),
        up(kPool, "items", "neighbouring windows reuse the lines they load"),
        set(kGemm, "raster", "along_m", "the other raster order reuses the other operand in L2"),
        set(kGemm, "raster", "along_n", "the other raster order reuses the other operand in L2"),
        up(kRowwise, "vec", "wider accesses, fewer L2 transactions"),
        up(kMap, "vec", "wider accesses, fewer L2 transactions"),
    };
}

Moves shared_memory_moves() {
    return {
        up(kRowwise, "threads", "more threads share the row's reduction"),
        up(kRowwise, "vec", "wider accesses, fewer shared-memory passes"),
        up(kGemm, "tile", "bigger tiles, more math per shared-memory byte"),
        set(kGemm, "schedule", "pingpong", "ping-pong overlaps epilogue and mainloop"),
        set(kGemm, "schedule", "tma_ws", "TMA writes swizzled shared memory, no bank conflicts"),
        // kforge's WMMA attention stages scores and probabilities in shared memory
        set(kAttention, "impl", "cutlass_fmha",
            "CUTLASS's Hopper FMHA keeps the scores in registers (wgmma, TMA)"),
        set(kAttention, "impl", "cutlass_mea",
            "CUTLASS's memory-efficient attention keeps the scores in registers (masks, f32)"),
    };
}

Moves uncoalesced_moves() {
    return {
        up(kRowwise, "vec", "wider contiguous accesses"),
        up(kMap, "vec", "wider contiguous accesses"),
        down(kRowwise, "rows_per_block", "one row per block, contiguous lanes"),
        set(kGemm, "schedule", "tma_ws", "TMA copies whole tiles, no per-thread coalescing"),
        advice(kGemm, "operand layouts with K contiguous (row A, col B)"),
        advice(kRowwise, "reduce over the contiguous (last) dim"),
    };
}

// Low achieved occupancy. A GEMM runs one CTA per SM by design (CUTLASS), so its answer is a
// deeper pipeline and more, smaller tiles - not fewer stages for a second CTA.
Moves low_occupancy_moves() {
    return {
        down(kRowwise, "rows_per_block", "more blocks"),
        up(kRowwise, "split", "split rows over more blocks"),
        down(kMap, "block", "smaller blocks, more of them"),
        down(kPool, "threads", "smaller blocks, more of them"),
        down(kGemm, "tile", "smaller tiles, more CTAs"),
        up(kGemm, "stages", "deeper pipeline hides latency"),
        up(kRowwise, "threads", "more warps per block"),
        up(kMap, "vec", "more bytes in flight per thread hide latency"),
        set(kAttention, "impl", "cutlass_fmha",
            "CUTLASS's Hopper FMHA: warp-specialized TMA loads hide latency"),
    };
}

Moves tail_moves() {
    return {
        set(kGemm, "schedule", "stream_k", "stream-K balances the tail"),
        up(kGemm, "splitk", "split K over more CTAs"),
        down(kGemm, "tile", "smaller tiles, finer waves"),
        down(kRowwise, "rows_per_block", "finer blocks"),
        up(kRowwise, "split", "more CTAs per row fill the last wave"),
        down(kMap, "block", "smaller blocks, finer waves"),
    };
}

// The profiler measured the issue pipes busy: the kernel is bound by its instructions.
Moves simt_moves() {
    return {
        set(kGemm, "math", "tf32x3", "3xTF32 on tensor cores instead of f32 SIMT"),
        up(kMap, "grid_stride",
           "a grid-stride loop pays index math and block setup once per thread"),
        up(kMap, "block", "larger blocks, fewer block setups"),
        up(kMap, "items", "more elements per thread share its setup"),
        up(kRowwise, "vec", "wider accesses, fewer address instructions"),
        down(kRowwise, "threads", "fewer threads per row, shorter reduction trees"),
        // one tf32 pass where the precision policy allows it (the checker refuses it under
        // fp32_strict)
        set(kGemm, "math", "tf32", "one tf32 pass where the precision policy allows"),
        up(kMap, "vec", "wider accesses, fewer address instructions"),
    };
}

Moves tensor_moves() {
    return {
        up(kGemm, "tile", "bigger tiles keep the tensor pipe fed"),
        set(kGemm, "schedule", "pingpong", "ping-pong overlaps epilogue and mainloop"),
        up(kGemm, "cluster", "larger cluster, multicast operand loads"),
        set(kAttention, "impl", "cutlass_fmha", "CUTLASS's Hopper FMHA: wgmma instead of WMMA"),
        set(kAttention, "impl", "cutlass_mea",
            "CUTLASS's memory-efficient attention: mma.sync from registers instead of WMMA"),
        set(kAttention, "fmha_schedule", "pingpong",
            "ping-pong overlaps one warpgroup's softmax with the other's products"),
    };
}

const std::map<Bottleneck, Moves>& table() {
    static const std::map<Bottleneck, Moves> t{
        {Bottleneck::kDramBound, dram_moves()},
        {Bottleneck::kL2Bound, l2_moves()},
        {Bottleneck::kTensorComputeBound, tensor_moves()},
        {Bottleneck::kSimtComputeBound, simt_moves()},
        {Bottleneck::kLatencyBoundLowOccupancy, low_occupancy_moves()},
        {Bottleneck::kLaunchTailBound, tail_moves()},
        {Bottleneck::kSharedMemoryBound, shared_memory_moves()},
        {Bottleneck::kSpillBound, spill_moves()},
        {Bottleneck::kUncoalescedMemory, uncoalesced_moves()},
        {Bottleneck::kUnknown, {}},
    };
    return t;
}

}  // namespace

std::string move_text(const DirectedMove& m) {
    if (!m.is_knob_move()) return m.reason;
    std::string value;
    if (!m.word.empty()) {
        value = m.word;
    } else {
        const dsl::KnobSpec* spec = dsl::find_knob(m.kind, m.knob);
        const bool flag = spec && spec->kind == dsl::KnobValueKind::kFlag;
        value = flag ? (m.direction > 0 ? "on" : "off") : (m.direction > 0 ? "up" : "down");
    }
    return m.knob + " " + value + (m.reason.empty() ? "" : " (" + m.reason + ")");
}

const std::vector<DirectedMove>& moves_for(Bottleneck b) { return table().at(b); }

std::vector<DirectedMove> moves_for(Bottleneck b, dsl::KernelKind kind) {
    std::vector<DirectedMove> out;
    for (const DirectedMove& m : moves_for(b))
        if (m.kind == kind) out.push_back(m);
    return out;
}

const std::vector<DirectedMove>& roofline_moves(BoundKind kind) {
    static const Moves memory = memory_moves();
    static const Moves compute{
        up(kGemm, "tile", "bigger tiles"),
        up(kGemm, "stages", "more stages"),
        up(kGemm, "cluster", "larger cluster"),
        set(kGemm, "schedule", "pingpong", "ping-pong consumers"),
    };
    return kind == BoundKind::kMemory ? memory : compute;
}

}  // namespace kforge
