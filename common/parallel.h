// parallel_for: the project's one worker pool (compile jobs, precompile batches, input chunks).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace kforge {

// Calls fn(i) once for every i in [0, n), on up to `workers` threads (<= 0: one per core) that
// take the next index from a shared counter; returns when every call has returned. With one
// worker (or n <= 1) everything runs on the calling thread. fn must be safe to call concurrently
// for distinct i and must not throw.
template <class Fn>
void parallel_for(size_t n, int workers, Fn&& fn) {
    size_t w = workers > 0 ? static_cast<size_t>(workers)
                           : std::max<size_t>(1, std::thread::hardware_concurrency());
    w = std::min(w, n);
    if (w <= 1) {
        for (size_t i = 0; i < n; ++i) fn(i);
        return;
    }
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    pool.reserve(w);
    for (size_t t = 0; t < w; ++t)
        pool.emplace_back([&] {
            for (size_t i = next++; i < n; i = next++) fn(i);
        });
    for (std::thread& t : pool) t.join();
}

}  // namespace kforge
