// The index math of kernels/conv_layout.cuh, run on the host through the same __host__ __device__
// phase functions the device kernels call: every block of the launch grid gathers its tile (all
// 32 x 8 threads), then scatters it (all threads), as around the kernels' __syncthreads. The
// results must equal direct loops, every destination element written exactly once, the padded
// channels and filters zero, and the writes of consecutive threads consecutive in memory.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/conv_layout.cuh"

namespace kforge {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::vector<float> random_values(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = u(rng);
    return v;
}

// Runs the channels-last launch (grid ceil(HW/32) x ceil(Cp/32) x images) on the host.
// Returns dst [images, HW, Cp]; `writes` counts the stores per element.
std::vector<float> run_channels_last(const std::vector<float>& src, int64_t C, int64_t HW,
                                     int64_t Cp, int64_t images, int64_t images_valid,
                                     std::vector<int>& writes, bool& coalesced) {
    std::vector<float> dst(static_cast<size_t>(images * HW * Cp), -99.0f);
    writes.assign(dst.size(), 0);
    coalesced = true;
    float tile[kConvTile][kConvTile + 1];
    for (int64_t bz = 0; bz < images; ++bz)
        for (int64_t by = 0; by < ceil_div(Cp, kConvTile); ++by)
            for (int64_t bx = 0; bx < ceil_div(HW, kConvTile); ++bx) {
                const ConvBlock b{bx, by, bz};
                for (int y = 0; y < kConvTileRows; ++y)
                    for (int x = 0; x < kConvTile; ++x)
                        channels_last_gather(
                            [&](int64_t o) {
                                EXPECT_LT(o, int64_t(src.size()));
                                return src[static_cast<size_t>(o)];
                            },
                            tile, C, HW, images_valid, b, x, y);
                for (int tid = 0; tid < kConvThreads; ++tid) {
                    int64_t last = -1;  // this thread's previous store
                    channels_last_scatter(
                        [&](int64_t o, float v) {
                            ASSERT_GE(o, 0);
                            ASSERT_LT(o, int64_t(dst.size()));
                            dst[static_cast<size_t>(o)] = v;
                            ++writes[static_cast<size_t>(o)];
                            last = o;
                        },
                        tile, HW, Cp, b, tid);
                    (void)last;
                }
                // lanes 0..31 of the first warp store consecutive addresses (first round): one
                // span when Cp <= 32, else runs of the tile's channels (one row each)
                const int64_t run = std::min<int64_t>(kConvTile, Cp - by * kConvTile);
                std::vector<int64_t> first(kConvTile, -1);
                for (int tid = 0; tid < kConvTile; ++tid) {
                    bool done = false;
                    channels_last_scatter(
                        [&](int64_t o, float) {
                            if (!done) first[static_cast<size_t>(tid)] = o, done = true;
                        },
                        tile, HW, Cp, b, tid);
                }
                for (int t = 1; t < kConvTile; ++t)
                    if (first[t] >= 0 && first[t] != first[t - 1] + 1 && (Cp <= kConvTile || t % run != 0))
                        coalesced = false;
            }
    return dst;
}

void check_channels_last(int64_t images, int64_t images_valid, int64_t C, int64_t HW,
                         int64_t Cp) {
    SCOPED_TRACE("images " + std::to_string(images) + " (" + std::to_string(images_valid) +
                 " valid), C " + std::to_string(C) + " -> " + std::to_string(Cp) + ", HW " +
                 std::to_string(HW));
    const std::vector<float> src = random_values(images_valid * C * HW, 7);
    std::vector<int> writes;
    bool coalesced = false;
    const std::vector<float> dst =
        run_channels_last(src, C, HW, Cp, images, images_valid, writes, coalesced);
    for (int64_t n = 0; n < images; ++n)
        for (int64_t p = 0; p < HW; ++p)
            for (int64_t c = 0; c < Cp; ++c) {
                const size_t o = static_cast<size_t>((n * HW + p) * Cp + c);
                const float want =
                    (n < images_valid && c < C) ? src[static_cast<size_t>((n * C + c) * HW + p)] : 0.0f;
                ASSERT_EQ(writes[o], 1) << "n " << n << " p " << p << " c " << c;
                ASSERT_EQ(dst[o], want) << "n " << n << " p " << p << " c " << c;
            }
    EXPECT_TRUE(coalesced);
}

TEST(ConvLayout, InputNchwToPaddedNhwc) {
    check_channels_last(2, 2, 3, 17 * 19, 4);     // C = 3 (images) padded to 4 f32
    check_channels_last(1, 1, 3, 5 * 7, 8);       // padded to 8 (f16/bf16)
    check_channels_last(2, 2, 64, 9 * 9, 64);     // C = Cp = 64: two channel tiles
    check_channels_last(1, 1, 37, 33, 40);        // both axes with partial tiles
}

TEST(ConvLayout, WeightKcrsToPaddedKrsc) {
    // w [K=10, C=3, R*S=9] -> [Kp=12, 9, 4]: filters 10 and 11 all zero
    check_channels_last(12, 10, 3, 9, 4);
    check_channels_last(8, 5, 70, 25, 72);
}

TEST(ConvLayout, PaddingRoundsUp) {
    EXPECT_EQ(conv_round_up(3, 4), 4);
    EXPECT_EQ(conv_round_up(4, 4), 4);
    EXPECT_EQ(conv_round_up(3, 8), 8);
    EXPECT_EQ(conv_round_up(10, 4), 12);
    EXPECT_EQ(conv_round_up(1, 1), 1);
}

// ys [N, PQ, Kp] -> y [N, K, PQ] (NCHW): every y element emitted once with its ys value, none
// of the padded filters, and a warp's lanes emit consecutive indices.
void check_output(int64_t N, int64_t K, int64_t PQ, int64_t Kp) {
    SCOPED_TRACE("N " + std::to_string(N) + " K " + std::to_string(K) + " PQ " +
                 std::to_string(PQ) + " Kp " + std::to_string(Kp));
    const std::vector<float> ys = random_values(N * PQ * Kp, 11);
    std::vector<float> y(static_cast<size_t>(N * K * PQ), -99.0f);
    std::vector<int> writes(y.size(), 0);
    float tile[kConvTile][kConvTile + 1];
    for (int64_t bz = 0; bz < N; ++bz)
        for (int64_t by = 0; by < ceil_div(K, kConvTile); ++by)
            for (int64_t bx = 0; bx < ceil_div(PQ, kConvTile); ++bx) {
                const ConvBlock b{bx, by, bz};
                for (int ty = 0; ty < kConvTileRows; ++ty)
                    for (int tx = 0; tx < kConvTile; ++tx)
                        output_gather(
                            [&](int64_t o) {
                                EXPECT_LT(o, int64_t(ys.size()));
                                EXPECT_LT(o % Kp, K);  // padded filters are never read
                                return ys[static_cast<size_t>(o)];
                            },
                            tile, K, PQ, Kp, b, tx, ty);
                for (int ty = 0; ty < kConvTileRows; ++ty) {
                    std::vector<int64_t> first(kConvTile, -1);
                    for (int tx = 0; tx < kConvTile; ++tx)
                        output_scatter(
                            [&](int64_t i, float v) {
                                ASSERT_GE(i, 0);
                                ASSERT_LT(i, int64_t(y.size()));
                                y[static_cast<size_t>(i)] = v;
                                ++writes[static_cast<size_t>(i)];
                                if (first[static_cast<size_t>(tx)] < 0) first[static_cast<size_t>(tx)] = i;
                            },
                            tile, K, PQ, b, tx, ty);
                    for (int t = 1; t < kConvTile; ++t)
                        if (first[t] >= 0) EXPECT_EQ(first[t], first[t - 1] + 1);
                }
            }
    for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k)
            for (int64_t p = 0; p < PQ; ++p) {
                const size_t i = static_cast<size_t>((n * K + k) * PQ + p);
                ASSERT_EQ(writes[i], 1) << n << " " << k << " " << p;
                ASSERT_EQ(y[i], ys[static_cast<size_t>((n * PQ + p) * Kp + k)]) << n << " " << k << " " << p;
            }
}

TEST(ConvLayout, OutputNpqkToNchw) {
    check_output(2, 10, 90, 12);   // the codegen tests' shape
    check_output(1, 64, 49, 64);   // 7x7 maps, two filter tiles
    check_output(3, 33, 64, 36);   // partial filter tile, exact position tiles
}

// Zero insertion (a strided, dilated transposed convolution run as a unit-stride dgrad): every
// block of the x staging launch over the upsampled positions gathers and scatters on the host;
// dst [images, Du*Hu*Wu, Cp] holds x at the positions whose coordinates are multiples of their
// strides, zero elsewhere and in the padded channels, each element written once.
TEST(ConvLayout, ChannelsLastWithZerosInsertedEqualsDirectLoops) {
    struct Case {
        int64_t c, cp, d, h, w, sd, sh, sw;
    };
    for (const Case& k : {Case{3, 4, 1, 5, 7, 1, 2, 3}, Case{6, 8, 3, 4, 2, 2, 2, 2},
                          Case{33, 36, 1, 1, 40, 1, 1, 2}}) {
        SCOPED_TRACE(testing::Message() << "C " << k.c << " D,H,W " << k.d << "," << k.h << ","
                                        << k.w << " strides " << k.sd << "," << k.sh << "," << k.sw);
        const ConvUpsample u{k.d, k.h, k.w, k.sd, k.sh, k.sw};
        const int64_t du = (k.d - 1) * k.sd + 1, hu = (k.h - 1) * k.sh + 1,
                      wu = (k.w - 1) * k.sw + 1, HW = du * hu * wu, images = 2;
        const std::vector<float> src = random_values(images * k.c * k.d * k.h * k.w, 7);
        std::vector<float> dst(static_cast<size_t>(images * HW * k.cp), -99.0f);
        std::vector<int> writes(dst.size(), 0);
        float tile[kConvTile][kConvTile + 1];
        for (int64_t bz = 0; bz < images; ++bz)
            for (int64_t by = 0; by < ceil_div(k.cp, kConvTile); ++by)
                for (int64_t bx = 0; bx < ceil_div(HW, kConvTile); ++bx) {
                    const ConvBlock b{bx, by, bz};
                    for (int y = 0; y < kConvTileRows; ++y)
                        for (int x = 0; x < kConvTile; ++x)
                            channels_last_gather_upsampled(
                                [&](int64_t o) { return src.at(static_cast<size_t>(o)); }, tile,
                                k.c, u, images, b, x, y);
                    for (int tid = 0; tid < kConvThreads; ++tid)
                        channels_last_scatter(
                            [&](int64_t o, float v) {
                                dst.at(static_cast<size_t>(o)) = v;
                                ++writes.at(static_cast<size_t>(o));
                            },
                            tile, HW, k.cp, b, tid);
                }
        for (int64_t n = 0; n < images; ++n)
            for (int64_t z = 0; z < du; ++z)
                for (int64_t y = 0; y < hu; ++y)
                    for (int64_t x = 0; x < wu; ++x)
                        for (int64_t c = 0; c < k.cp; ++c) {
                            const bool on = z % k.sd == 0 && y % k.sh == 0 && x % k.sw == 0;
                            const float want =
                                on && c < k.c
                                    ? src[static_cast<size_t>(
                                          (((n * k.c + c) * k.d + z / k.sd) * k.h + y / k.sh) *
                                              k.w + x / k.sw)]
                                    : 0.0f;
                            const size_t i = static_cast<size_t>(
                                (n * HW + (z * hu + y) * wu + x) * k.cp + c);
                            ASSERT_EQ(dst[i], want) << n << " " << z << " " << y << " " << x << " " << c;
                            ASSERT_EQ(writes[i], 1);
                        }
    }
}

// A grouped transposed convolution's weight w [C, Kg, R*S] staged as the dense block-diagonal
// KRSC filter [Cp, R*S, Kp]: image ci holds w[ci, co - g*Kg] at filters co of its group g =
// ci / Cg, zero at every other filter, in the padded images and filters; each element once.
TEST(ConvLayout, BlockDiagonalWeightEqualsDirectLoops) {
    struct Case {
        int64_t c, cp, groups, kg, kp, rs;
    };
    for (const Case& k : {Case{8, 8, 4, 3, 12, 9}, Case{6, 8, 3, 5, 16, 2},
                          Case{64, 64, 2, 40, 80, 27}}) {
        SCOPED_TRACE(testing::Message() << "C " << k.c << " groups " << k.groups << " Kg " << k.kg);
        const int64_t cg = k.c / k.groups;
        const std::vector<float> src = random_values(k.c * k.kg * k.rs, 11);
        std::vector<float> dst(static_cast<size_t>(k.cp * k.rs * k.kp), -99.0f);
        std::vector<int> writes(dst.size(), 0);
        float tile[kConvTile][kConvTile + 1];
        for (int64_t bz = 0; bz < k.cp; ++bz)
            for (int64_t by = 0; by < ceil_div(k.kp, kConvTile); ++by)
                for (int64_t bx = 0; bx < ceil_div(k.rs, kConvTile); ++bx) {
                    const ConvBlock b{bx, by, bz};
                    for (int y = 0; y < kConvTileRows; ++y)
                        for (int x = 0; x < kConvTile; ++x)
                            channels_last_gather_block_diagonal(
                                [&](int64_t o) { return src.at(static_cast<size_t>(o)); }, tile,
                                k.kg, cg, k.rs, k.c, b, x, y);
                    for (int tid = 0; tid < kConvThreads; ++tid)
                        channels_last_scatter(
                            [&](int64_t o, float v) {
                                dst.at(static_cast<size_t>(o)) = v;
                                ++writes.at(static_cast<size_t>(o));
                            },
                            tile, k.rs, k.kp, b, tid);
                }
        for (int64_t ci = 0; ci < k.cp; ++ci)
            for (int64_t t = 0; t < k.rs; ++t)
                for (int64_t co = 0; co < k.kp; ++co) {
                    const int64_t local = co - ci / cg * k.kg;
                    const float want = ci < k.c && local >= 0 && local < k.kg
                                           ? src[static_cast<size_t>((ci * k.kg + local) * k.rs + t)]
                                           : 0.0f;
                    const size_t i = static_cast<size_t>((ci * k.rs + t) * k.kp + co);
                    ASSERT_EQ(dst[i], want) << ci << " " << t << " " << co;
                    ASSERT_EQ(writes[i], 1);
                }
    }
}

// conv_split_of: one chunk where the whole channel sum fits max_k products, else chunks of whole
// tile-K steps (32 channels) where 32 fit, else of the 16-byte multiple, as even as that allows;
// parts 1 (no 3xTF32) never chunks; a filter too large for one multiple gives cc 0.
TEST(ConvLayout, SplitChunksTheChannelSum) {
    auto split = [](int64_t c, int64_t taps, int parts) { return conv_split_of(c, taps, parts, 4, 2400); };
    struct Case { int64_t c, taps; int parts; int64_t cc, chunks; };
    for (const Case& k : {Case{256, 9, 3, 64, 4},     // 3x3: 88 fit, 64 (2 steps) in 4 chunks
                          Case{96, 25, 3, 32, 3},     // 5x5: 32 fit exactly
                          Case{100, 9, 3, 64, 2},     // 2 chunks of 64 (50 each, whole steps)
                          Case{3, 121, 3, 4, 1},      // an image's 3 channels, 11x11: one chunk
                          Case{48, 49, 3, 16, 3},     // 7x7: 16 fit, of the 4-channel multiple
                          Case{768, 1, 3, 768, 1},    // 1x1: the whole sum, 2304 products
                          Case{801, 1, 3, 416, 2},    // past 2400: two chunks of 13 steps
                          Case{4096, 9, 1, 4096, 1},  // parts 1: one chunk whatever its length
                          Case{8, 256, 3, 0, 1}}) {   // 16x16 taps: not even 4 channels fit
        const ConvSplit sp = split(k.c, k.taps, k.parts);
        EXPECT_EQ(sp.cc, k.cc) << k.c << " " << k.taps;
        EXPECT_EQ(sp.chunks, k.chunks) << k.c << " " << k.taps;
        if (sp.cc == 0) continue;
        EXPECT_GE(sp.cc * sp.chunks, k.c);
        EXPECT_LT((sp.chunks - 1) * sp.cc, k.c);  // no chunk of padding alone
        EXPECT_EQ(sp.cc % 4, 0);
        if (sp.chunks > 1) EXPECT_LE(k.parts * sp.cc * k.taps, 2400);
    }
}

// The split staging on the host (grid ceil(HW/32) x ceil(chunks*cc/32) x images): channel c of
// image n at position p lands in chunk c / cc at c % cc + part * cc of its row, once per part;
// channels past C and images past images_valid are zero; every element written once.
TEST(ConvLayout, SplitStagingPlacesEveryPart) {
    struct Case { int64_t c, hw, images, valid; ConvSplit sp; };
    for (const Case& k : {Case{70, 45, 2, 2, {32, 3, 3, 2}}, Case{5, 33, 3, 2, {8, 1, 3, 3}},
                          Case{40, 7, 2, 2, {20, 2, 1, 2}}}) {
        const std::vector<float> src = random_values(k.valid * k.c * k.hw, 11);
        const int64_t row = k.sp.parts * k.sp.cc;
        std::vector<float> dst(static_cast<size_t>(k.sp.chunks * k.images * k.hw * row), -99.0f);
        std::vector<int> writes(dst.size(), 0), part_of(dst.size(), -1);
        float tile[kConvTile][kConvTile + 1];
        for (int64_t bz = 0; bz < k.images; ++bz)
            for (int64_t by = 0; by < ceil_div(k.sp.chunks * k.sp.cc, kConvTile); ++by)
                for (int64_t bx = 0; bx < ceil_div(k.hw, kConvTile); ++bx) {
                    const ConvBlock b{bx, by, bz};
                    for (int y = 0; y < kConvTileRows; ++y)
                        for (int x = 0; x < kConvTile; ++x)
                            channels_last_gather([&](int64_t o) { return src.at(size_t(o)); },
                                                 tile, k.c, k.hw, k.valid, b, x, y);
                    for (int tid = 0; tid < kConvThreads; ++tid)
                        channels_last_scatter_split(
                            [&](int64_t o, int part, float v) {
                                dst.at(size_t(o)) = v;
                                ++writes.at(size_t(o));
                                part_of.at(size_t(o)) = part;
                            },
                            tile, k.hw, k.sp, b, tid);
                }
        for (int64_t j = 0; j < k.sp.chunks; ++j)
            for (int64_t n = 0; n < k.images; ++n)
                for (int64_t p = 0; p < k.hw; ++p)
                    for (int part = 0; part < k.sp.parts; ++part)
                        for (int64_t l = 0; l < k.sp.cc; ++l) {
                            const int64_t c = j * k.sp.cc + l;
                            const float want = n < k.valid && c < k.c
                                                   ? src[size_t((n * k.c + c) * k.hw + p)] : 0.0f;
                            const size_t i = size_t(((j * k.images + n) * k.hw + p) * row +
                                                    part * k.sp.cc + l);
                            ASSERT_EQ(dst[i], want) << j << " " << n << " " << p << " " << l;
                            ASSERT_EQ(writes[i], 1);
                            ASSERT_EQ(part_of[i], part);
                        }
    }
}

}  // namespace
}  // namespace kforge
