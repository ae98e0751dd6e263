// A CPU emulation of the CUDA subset the GPU reference kernels use (reference/gpu_reference*.cpp),
// so that tests/reference/gpu_reference_emulated_test.cpp can run the generated kernels on a machine
// without a GPU. Blocks run one after another; the threads of a block are ucontext coroutines
// switched at __syncthreads / __syncthreads_or (block barrier) and __shfl_down_sync (warp
// barrier; lanes resume in increasing order, so a lane reads the higher lane's value before that
// lane can overwrite it). __shared__ is `static` (one block at a time). Test code only.
#pragma once

#include <ucontext.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using std::isinf;
using std::isnan;

struct kf_uint3 {
    unsigned x = 0, y = 0, z = 0;
};

struct KfEmuThread {
    ucontext_t context;
    kf_uint3 index;
    int state = 0;  // 0 runnable, 1 at the block barrier, 2 at a warp barrier, 3 done
    int flag = 0;
    double shuffle = 0;
};

struct KfEmu {
    ucontext_t scheduler;
    std::vector<KfEmuThread> threads;
    std::vector<std::vector<char>> stacks;
    int current = 0;
    int block_or = 0;
    void (*entry)(double**) = nullptr;
    double** args = nullptr;
};

inline KfEmu& kf_emu() {
    static KfEmu emu;
    return emu;
}

static kf_uint3 blockIdx, blockDim, gridDim;
#define threadIdx (kf_emu().threads[kf_emu().current].index)

inline void kf_emu_wait(int state) {
    KfEmu& e = kf_emu();
    e.threads[e.current].state = state;
    swapcontext(&e.threads[e.current].context, &e.scheduler);
}

inline void __syncthreads() { kf_emu_wait(1); }

inline int __syncthreads_or(int predicate) {
    kf_emu().threads[kf_emu().current].flag = predicate ? 1 : 0;
    kf_emu_wait(1);
    return kf_emu().block_or;
}

inline double __shfl_down_sync(unsigned, double v, int offset) {
    KfEmu& e = kf_emu();
    int me = e.current;
    e.threads[me].shuffle = v;
    kf_emu_wait(2);
    int lane = me % 32;
    return lane + offset < 32 ? kf_emu().threads[me + offset].shuffle : v;
}

inline double __longlong_as_double(long long bits) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

// Threads switch only at barriers and shuffles, so a read-modify-write is atomic here.
inline unsigned atomicAdd(unsigned* p, unsigned v) {
    const unsigned old = *p;
    *p += v;
    return old;
}
inline void __threadfence() {}

#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(n)

inline void kf_emu_trampoline() {
    KfEmu& e = kf_emu();
    e.entry(e.args);
    e.threads[e.current].state = 3;
    swapcontext(&e.threads[e.current].context, &e.scheduler);
}

// Runs one kernel (through `entry`, which unpacks `args`) over the whole grid; false on a
// deadlock (threads waiting at barriers that can never be released).
inline bool kf_emu_launch(void (*entry)(double**), double** args, const unsigned grid[3],
                          unsigned threads) {
    KfEmu& e = kf_emu();
    e.entry = entry;
    e.args = args;
    e.threads.assign(threads, KfEmuThread{});
    e.stacks.resize(threads);
    gridDim = {grid[0], grid[1], grid[2]};
    blockDim = {threads, 1, 1};
    for (unsigned bz = 0; bz < grid[2]; ++bz)
        for (unsigned by = 0; by < grid[1]; ++by)
            for (unsigned bx = 0; bx < grid[0]; ++bx) {
                blockIdx = {bx, by, bz};
                for (unsigned t = 0; t < threads; ++t) {
                    KfEmuThread& th = e.threads[t];
                    th = KfEmuThread{};
                    th.index = {t, 0, 0};
                    e.stacks[t].resize(256 * 1024);
                    getcontext(&th.context);
                    th.context.uc_stack.ss_sp = e.stacks[t].data();
                    th.context.uc_stack.ss_size = e.stacks[t].size();
                    th.context.uc_link = nullptr;
                    makecontext(&th.context, kf_emu_trampoline, 0);
                }
                for (;;) {
                    for (unsigned t = 0; t < threads; ++t) {
                        if (e.threads[t].state != 0) continue;
                        e.current = static_cast<int>(t);
                        swapcontext(&e.scheduler, &e.threads[t].context);
                    }
                    bool released = false;
                    for (unsigned w = 0; w < threads; w += 32) {  // warp barriers
                        bool all = true, any = false;
                        for (unsigned t = w; t < w + 32 && t < threads; ++t) {
                            if (e.threads[t].state == 3) continue;
                            all = all && e.threads[t].state == 2;
                            any = true;
                        }
                        if (!all || !any) continue;
                        for (unsigned t = w; t < w + 32 && t < threads; ++t)
                            if (e.threads[t].state == 2) e.threads[t].state = 0;
                        released = true;
                    }
                    if (released) continue;
                    int waiting = 0, done = 0, flag = 0;
                    for (const KfEmuThread& th : e.threads) {
                        waiting += th.state == 1;
                        done += th.state == 3;
                        flag |= th.state == 1 ? th.flag : 0;
                    }
                    if (done == static_cast<int>(threads)) break;
                    if (waiting + done != static_cast<int>(threads) || done > 0) return false;
                    e.block_or = flag;
                    for (KfEmuThread& th : e.threads) {
                        th.state = 0;
                        th.flag = 0;
                    }
                }
            }
    return true;
}
