// Access to one CTA's part of a row: its first vectors cached in registers (RowCfg::ITEMS > 0),
// the next ones staged in shared memory (STAGED > 0: copied once with cp.async, read from there
// by every sweep) and the rest streamed from memory with UNROLL vector loads in flight per
// thread (re-read by every sweep). All in registers (ITEMS only) or registers and shared memory
// together read the row from memory once. Columns are dealt out in vectors
// of VEC: thread `lane` of the row group owns vectors lane, lane + TPR, ... so each warp access
// is contiguous (coalesced). A thread reads back only the staged vectors it copied itself, so
// staging needs no barrier, only cp.async.wait_group. With RowCfg::SWEEP_ALTERNATE, each()
// sweeps the streamed vectors first to last on odd calls and last to first on even calls (the
// staged ones are read from shared memory, whose order does not matter, after the streamed
// ones); the warp accesses of a backward sweep are the same aligned, coalesced vectors.
#pragma once

#include "kernels/common.cuh"

namespace kforge {

// Where this thread's row lies: row index, CTA rank within a split row, column range.
struct RowPlace {
    int64_t row;
    int lane;       // thread within the row group
    int rank;       // CTA within the cluster sharing the row
    bool valid;     // row < rows (row groups past the end still join the reductions)
    int64_t begin;  // this CTA's columns [begin, end); empty for invalid rows
    int64_t end;
};

template <class C> __device__ __forceinline__ RowPlace row_place(int64_t rows, int64_t n) {
    RowPlace p;
    const int group = threadIdx.x / C::TPR;
    p.lane = threadIdx.x % C::TPR;
    p.rank = blockIdx.x % C::SPLIT;
    p.row = int64_t(blockIdx.x / C::SPLIT) * C::RPB + group;
    p.valid = p.row < rows;
    // Split chunks are whole vectors so that each CTA's vectors stay aligned.
    const int64_t chunk = ((n + C::SPLIT - 1) / C::SPLIT + C::VEC - 1) / C::VEC * C::VEC;
    p.begin = min(n, p.rank * chunk);
    p.end = p.valid ? min(n, p.begin + chunk) : p.begin;
    return p;
}

template <class C, typename T> struct RowView {
    const T* __restrict__ row;  // the row's first element
    int64_t begin, end;
    int lane;
    float cache[C::ITEMS > 0 ? C::ITEMS : 1][C::VEC];
    T* stage;           // this row group's shared-memory stage (STAGED > 0)
    bool staged_ready;  // the first sweep has waited for the stage's copies
    int sweeps;         // each() calls so far (constant after inlining: picks the direction)

    // cp.async groups the stage is committed in: the first sweep starts on the first group
    // while the others are still in flight.
    static constexpr int kStageGroups = C::STAGED < 4 ? C::STAGED : 4;

    __device__ __forceinline__ RowView(const T* x, int64_t n, const RowPlace& p)
        : row(x + (p.valid ? p.row * n : 0)), begin(p.begin), end(p.end), lane(p.lane),
          stage(nullptr), staged_ready(false), sweeps(0) {
        if constexpr (C::STAGED > 0) {
            extern __shared__ __align__(16) unsigned char kforge_row_stage[];
            stage = reinterpret_cast<T*>(kforge_row_stage) +
                    int64_t(threadIdx.x / C::TPR) * C::STAGE_ELEMS;
        }
    }

    // Where the staged vectors start in the CTA's part (after the cached ones).
    static constexpr int64_t kStageFrom = int64_t(C::ITEMS) * C::TPR * C::VEC;

    // Issue the copies of this thread's staged vectors (kStageGroups groups), then read its
    // cached vectors, all loads issued before any use.
    __device__ __forceinline__ void load() {
        if constexpr (C::STAGED > 0) {  // first, so the copies are in flight during the loads
#pragma unroll
            for (int g = 0; g < kStageGroups; ++g) {
#pragma unroll 4
                for (int k = g * C::STAGED / kStageGroups; k < (g + 1) * C::STAGED / kStageGroups;
                     ++k) {
                    const int64_t off = int64_t(k * C::TPR + lane) * C::VEC;
                    if (begin + kStageFrom + off < end)
                        copy_async<C::VEC>(stage + off, row + begin + kStageFrom + off);
                }
                cp_async_commit();
            }
        }
        if constexpr (C::ITEMS > 0) {
#pragma unroll
            for (int k = 0; k < C::ITEMS; ++k) {
                const int64_t col = begin + int64_t(k * C::TPR + lane) * C::VEC;
                if (col < end) load_vec<C::VEC>(cache[k], row + col);
            }
        }
    }

    // Call f(const float (&v)[VEC], col) for each of this thread's vectors.
    template <class F> __device__ __forceinline__ void each(F f) {
        if constexpr (C::ITEMS > 0) {  // held on chip entirely: registers, then the stage
#pragma unroll
            for (int k = 0; k < C::ITEMS; ++k) {
                const int64_t col = begin + int64_t(k * C::TPR + lane) * C::VEC;
                if (col < end) f(cache[k], col);
            }
            if constexpr (C::STAGED > 0) staged(f);
        } else {
            constexpr int64_t kStreamFrom = int64_t(C::STAGED) * C::TPR * C::VEC;
            bool backward = false;
            if constexpr (C::SWEEP_ALTERNATE) {
                backward = (sweeps++ & 1) != 0;
                if (backward) stream_backward(f, begin + kStreamFrom);
            }
            if constexpr (C::STAGED > 0) staged(f);
            if (!backward) stream(f, begin + (int64_t(C::STAGED) * C::TPR + lane) * C::VEC);
        }
    }

  private:
    // The staged vectors (from kStageFrom on), read from shared memory; the first sweep waits
    // for their copies group by group.
    template <class F> __device__ __forceinline__ void staged(F f) {
#pragma unroll
        for (int g = 0; g < kStageGroups; ++g) {
            if (!staged_ready) cp_async_wait_upto(kStageGroups - 1 - g);
#pragma unroll 2
            for (int k = g * C::STAGED / kStageGroups; k < (g + 1) * C::STAGED / kStageGroups;
                 ++k) {
                const int64_t off = int64_t(k * C::TPR + lane) * C::VEC;
                if (begin + kStageFrom + off < end) {
                    float v[C::VEC];
                    load_vec<C::VEC>(v, stage + off);
                    f(v, begin + kStageFrom + off);
                }
            }
        }
        staged_ready = true;
    }

    // The vectors from `first` on (this thread's, in steps of TPR vectors), read from memory.
    template <class F> __device__ __forceinline__ void stream(F& f, int64_t first) {
        constexpr int64_t kStep = int64_t(C::TPR) * C::VEC;
        for (int64_t base = first; base < end; base += kStep * C::UNROLL) {
            float buf[C::UNROLL][C::VEC];
#pragma unroll
            for (int u = 0; u < C::UNROLL; ++u) {
                if (base + u * kStep < end) load_vec<C::VEC>(buf[u], row + base + u * kStep);
            }
#pragma unroll
            for (int u = 0; u < C::UNROLL; ++u) {
                if (base + u * kStep < end) f(buf[u], base + u * kStep);
            }
        }
    }

    // The same vectors as stream(f, first + lane * VEC), last step first. Steps are counted
    // from `first` (lane 0's first column) so that all lanes of a warp take the same step at
    // once: lanes past `end` in the last step skip it, as in stream().
    template <class F> __device__ __forceinline__ void stream_backward(F& f, int64_t first) {
        constexpr int64_t kStep = int64_t(C::TPR) * C::VEC;
        const int64_t steps = end > first ? (end - first + kStep - 1) / kStep : 0;
        const int64_t own = int64_t(lane) * C::VEC;
        for (int64_t top = first + (steps - 1) * kStep; top >= first; top -= kStep * C::UNROLL) {
            float buf[C::UNROLL][C::VEC];
#pragma unroll
            for (int u = 0; u < C::UNROLL; ++u) {
                const int64_t col = top - u * kStep + own;
                if (top - u * kStep >= first && col < end) load_vec<C::VEC>(buf[u], row + col);
            }
#pragma unroll
            for (int u = 0; u < C::UNROLL; ++u) {
                const int64_t col = top - u * kStep + own;
                if (top - u * kStep >= first && col < end) f(buf[u], col);
            }
        }
    }
};

}  // namespace kforge
