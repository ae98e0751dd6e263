// parallel_for: the project's one worker pool (compile jobs, precompile batches), and
// parallel_chunks over it for large arrays (input generation, output comparison, conversions).
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

// Elements per job when parallel_chunks splits a large array (full-shape tensors reach 10^9).
inline constexpr size_t kParallelChunk = size_t{1} << 20;

// The number of chunks of `chunk` elements that cover [0, n).
inline size_t chunk_count(size_t n, size_t chunk = kParallelChunk) { return (n + chunk - 1) / chunk; }

// Calls fn(k, begin, end) for chunk k = [begin, end) of the chunks of `chunk` elements that cover
// [0, n), on one thread per core (parallel_for). Chunk k always covers the same elements, so a
// caller can keep per-chunk results in a vector of chunk_count(n, chunk) and merge them in order.
template <class Fn>
void parallel_chunks(size_t n, Fn&& fn, size_t chunk = kParallelChunk) {
    parallel_for(chunk_count(n, chunk), 0,
                 [&](size_t k) { fn(k, k * chunk, std::min(n, (k + 1) * chunk)); });
}

}  // namespace kforge
