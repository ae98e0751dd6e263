// The moves a GEMM's shape asks of its launch knobs (codegen/launch_knobs.h: split-K, stream-K,
// raster, swizzle: on a sm90 GEMM they change no compiled code), read from the problem's dims
// and the device's SM count, without a profile:
//   too few output tiles to fill the SMs, with a K long enough to split (at least
//   kSplitMinKTiles k-tiles per split): split K over more CTAs, or stream-K
//   a last wave that runs at most half full (1 to 4 waves): stream-K balances the tail
// They are the shape's reading of what ncu calls launch_tail_bound (profile/diagnose.cpp: grid
// below the SM count, or a short last wave), so the diagnosis proposer makes them also where no
// profile exists (no ncu, the ptxas fallback) and can put them first: from a kernel compiled with
// the stream-K scheduler they cost no compile.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "diagnosis/moves.h"
#include "dsl/ast.h"
#include "problem/problem.h"

namespace kforge::search {

// A split needs this many k-tiles (tile K steps) in each part to be worth its fixup.
inline constexpr int64_t kSplitMinKTiles = 4;

// The GEMM of kernel `k` at the problem's dims: M, N from its first store (batch = the leading
// dims), K from operand A, and its output tiles at the kernel's tile size.
struct GemmWaves {
    int64_t m = 0, n = 0, k = 0, batch = 1;
    int64_t tiles = 0;      // ceil(M / tile_m) * ceil(N / tile_n) * batch
    int64_t k_tiles = 0;    // ceil(K / tile_k)
    double waves = 0;       // tiles / SMs
};
// nullopt when `k` is not a gemm or a dim is unknown.
std::optional<GemmWaves> gemm_waves(const dsl::Kernel& k, const Problem& problem, int sm_count);

// The launch-knob moves the shape of each GEMM kernel of `program` asks for (see above), with
// the reason in numbers ("k0: 16 output tiles for 132 SMs, 256 k-tiles: ..."); none when every
// GEMM fills its waves.
std::vector<DirectedMove> gemm_shape_moves(const dsl::Program& program, const Problem& problem,
                                           int sm_count);

}  // namespace kforge::search
