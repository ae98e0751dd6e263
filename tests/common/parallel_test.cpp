// parallel_for and parallel_chunks (common/parallel.h): every index once, chunks in their places.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "common/parallel.h"

namespace kforge {
namespace {

TEST(ParallelFor, CallsEveryIndexOnce) {
    std::vector<std::atomic<int>> hits(1000);
    parallel_for(hits.size(), 0, [&](size_t i) { ++hits[i]; });
    for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(ParallelChunks, CoverTheRangeOnceWithChunkKAtItsPlace) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{64}, size_t{1001}}) {
        const size_t chunk = 64;
        std::vector<std::atomic<int>> hits(n);
        std::vector<std::pair<size_t, size_t>> ranges(chunk_count(n, chunk));
        parallel_chunks(
            n,
            [&](size_t k, size_t begin, size_t end) {
                ranges[k] = {begin, end};
                for (size_t i = begin; i < end; ++i) ++hits[i];
            },
            chunk);
        for (const auto& h : hits) EXPECT_EQ(h.load(), 1) << n;
        for (size_t k = 0; k < ranges.size(); ++k) {
            EXPECT_EQ(ranges[k].first, k * chunk) << n;
            EXPECT_EQ(ranges[k].second, std::min(n, (k + 1) * chunk)) << n;
        }
    }
    EXPECT_EQ(chunk_count(0), 0u);
    EXPECT_EQ(chunk_count(kParallelChunk + 1), 2u);
}

}  // namespace
}  // namespace kforge
