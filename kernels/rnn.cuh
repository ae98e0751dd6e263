// Recurrent layers (lstm, gru; problem/rnn.h) as two launches per layer (codegen/lower_rnn.cpp):
//
//   rnn_project  the time-parallel input projection of every step at once, P[d][t][b][g*H + j] =
//                b_ih[g*H + j] + sum_k in[t][b][k] W_ih[d][g*H + j][k]: a 64x64 tile per CTA,
//                16-deep K slices in shared memory, 4x4 outputs per thread (256 threads), fp32.
//   rnn_layer    a persistent kernel: CTA c of direction d owns hidden units j0 = c*U .. j0+U-1 of
//                every gate and keeps their W_hh rows in shared memory for the whole sequence.
//                Per step: stage h_{t-1} (all B x H, from the double-buffered global state), the
//                gate sums W_hh h over the CTA's rows, the cell update (gates fused), h_t written
//                to the state, the layer's output and (last step) h_n / c_n; then a grid-wide
//                barrier (an arrival counter) so that every CTA sees the whole h_t.
//
// The grid barrier needs every CTA resident (the checker holds the CTAs to one per SM). The
// phases are separate functions so that a host test can run them in order without a GPU.
#pragma once

#include "kernels/cstdint.cuh"

#ifndef KFORGE_RNN_SPIN_PAUSE
#define KFORGE_RNN_SPIN_PAUSE() __nanosleep(20)
#endif
#ifndef KFORGE_RNN_LOAD_CG
#define KFORGE_RNN_LOAD_CG(p) __ldcg(p)
#endif

namespace kforge {

__device__ __forceinline__ float rnn_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// C[m][n] = bias[n] + sum_k A[m][k] W[n][k] for m < M (row m = step t = m / B, batch b = m % B,
// at a + t * a_t + b * a_b), n < N, k < K; blockIdx.x tiles N, blockIdx.y tiles M; 256 threads.
struct RnnProjTile {
    float a[16][68];
    float w[16][68];
};

__device__ __forceinline__ void rnn_project_load(RnnProjTile& s, const float* __restrict__ a,
                                                 int64_t a_t, int64_t a_b, int64_t B,
                                                 const float* __restrict__ w, int64_t M,
                                                 int64_t N, int64_t K, int64_t k0, int tid) {
    const int64_t m0 = int64_t(blockIdx.y) * 64, n0 = int64_t(blockIdx.x) * 64;
    for (int i = tid; i < 1024; i += 256) {
        const int r = i / 16, c = i % 16;
        const int64_t m = m0 + r, n = n0 + r, k = k0 + c;
        s.a[c][r] = (m < M && k < K) ? a[(m / B) * a_t + (m % B) * a_b + k] : 0.0f;
        s.w[c][r] = (n < N && k < K) ? w[n * K + k] : 0.0f;
    }
}

__device__ __forceinline__ void rnn_project_fma(const RnnProjTile& s, float (&acc)[4][4], int tid) {
    const int tx = tid % 16, ty = tid / 16;
    for (int c = 0; c < 16; ++c) {
        float av[4], wv[4];
        for (int i = 0; i < 4; ++i) {
            av[i] = s.a[c][ty + 16 * i];
            wv[i] = s.w[c][tx + 16 * i];
        }
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], wv[j], acc[i][j]);
    }
}

__device__ __forceinline__ void rnn_project_store(const float (&acc)[4][4],
                                                  const float* __restrict__ bias,
                                                  float* __restrict__ p, int64_t M, int64_t N,
                                                  int tid) {
    const int tx = tid % 16, ty = tid / 16;
    const int64_t m0 = int64_t(blockIdx.y) * 64, n0 = int64_t(blockIdx.x) * 64;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
            const int64_t m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
            if (m < M && n < N) p[m * N + n] = acc[i][j] + (bias ? bias[n] : 0.0f);
        }
}

__device__ __forceinline__ void rnn_project(RnnProjTile& s, const float* __restrict__ a,
                                            int64_t a_t, int64_t a_b, int64_t B,
                                            const float* __restrict__ w,
                                            const float* __restrict__ bias, float* __restrict__ p,
                                            int64_t M, int64_t N, int64_t K) {
    const int tid = int(threadIdx.x);
    float acc[4][4];
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
    for (int64_t k0 = 0; k0 < K; k0 += 16) {
        rnn_project_load(s, a, a_t, a_b, B, w, M, N, K, k0, tid);
        __syncthreads();
        rnn_project_fma(s, acc, tid);
        __syncthreads();
    }
    rnn_project_store(acc, bias, p, M, N, tid);
}

// One layer's operands for the recurrent kernel. Pointers are this layer's: h0 / c0 / hn / cn at
// the layer's first slot (direction d adds d * B * H), whh / bhh per direction (bhh null without
// bias), proj [D][T][B][G*H], hstate [D][2][B][H], out element (t, b, d*H + j) at
// t * out_t + b * out_b + d * H + j.
struct RnnLayer {
    const float* h0;
    const float* c0;
    const float* whh[2];
    const float* bhh[2];
    const float* proj;
    float* hstate;
    unsigned* sync;
    float* out;
    int64_t out_t, out_b;
    float* hn;
    float* cn;
};

// The recurrent CTA's phases. Shared memory (floats): W [G*U][H+1] (padded rows: the threads
// of a warp read different rows without bank conflicts), hs [B][H], gx [B][G*U], gh [B][G*U],
// cs [B][U].
template <bool LSTM, int64_t T, int64_t B, int64_t H, int D, int U, int THREADS>
struct RnnCell {
    static constexpr int G = LSTM ? 4 : 3;
    static constexpr int64_t kSteps = T;
    static constexpr int64_t C = (H + U - 1) / U;  // CTAs per direction
    static constexpr int64_t WS = H + 1;
    static constexpr int64_t kW = 0, kHs = G * U * WS, kGx = kHs + B * H, kGh = kGx + B * G * U,
                             kCs = kGh + B * G * U, kSmemFloats = kCs + B * U;

    __device__ static void init(const RnnLayer& a, float* s, int cta, int tid) {
        const int d = int(cta / C);
        const int64_t j0 = (cta % C) * U;
        const float* whh = a.whh[d];
        for (int64_t e = tid; e < G * U * H; e += THREADS) {
            const int64_t row = e / H, k = e % H, g = row / U, j = j0 + row % U;
            s[kW + row * WS + k] = j < H ? whh[(g * H + j) * H + k] : 0.0f;
        }
        if (LSTM)
            for (int64_t e = tid; e < B * U; e += THREADS) {
                const int64_t b = e / U, j = j0 + e % U;
                s[kCs + e] = j < H ? a.c0[(d * B + b) * H + j] : 0.0f;
            }
    }

    __device__ static void stage(const RnnLayer& a, float* s, int cta, int tid, int64_t step) {
        const int d = int(cta / C);
        if (step == 0) {
            for (int64_t e = tid; e < B * H; e += THREADS) s[kHs + e] = a.h0[d * B * H + e];
            return;
        }
        const float* src = a.hstate + (d * 2 + (step & 1)) * B * H;
        for (int64_t e = tid; e < B * H; e += THREADS) s[kHs + e] = KFORGE_RNN_LOAD_CG(src + e);
    }

    __device__ static void gates(const RnnLayer& a, float* s, int cta, int tid, int64_t step) {
        const int d = int(cta / C);
        const int64_t j0 = (cta % C) * U, t = d == 0 ? step : T - 1 - step;
        const float* bhh = a.bhh[d];
        const float* proj = a.proj + (d * T + t) * B * G * H;
        for (int64_t e = tid; e < B * G * U; e += THREADS) {
            const int64_t b = e / (G * U), r = e % (G * U), g = r / U, j = j0 + r % U;
            if (j >= H) continue;
            const float* w = s + kW + r * WS;
            const float* h = s + kHs + b * H;
            float acc = 0.0f;
            for (int64_t k = 0; k < H; ++k) acc = fmaf(w[k], h[k], acc);
            s[kGx + e] = proj[b * G * H + g * H + j];
            s[kGh + e] = acc + (bhh ? bhh[g * H + j] : 0.0f);
        }
    }

    __device__ static void cell(const RnnLayer& a, float* s, int cta, int tid, int64_t step) {
        const int d = int(cta / C);
        const int64_t j0 = (cta % C) * U, t = d == 0 ? step : T - 1 - step;
        for (int64_t e = tid; e < B * U; e += THREADS) {
            const int64_t b = e / U, u = e % U, j = j0 + u;
            if (j >= H) continue;
            const float* gx = s + kGx + b * G * U + u;
            const float* gh = s + kGh + b * G * U + u;
            float h, c = 0.0f;
            if (LSTM) {
                const float ig = rnn_sigmoid(gx[0] + gh[0]);
                const float fg = rnn_sigmoid(gx[U] + gh[U]);
                const float gg = tanhf(gx[2 * U] + gh[2 * U]);
                const float og = rnn_sigmoid(gx[3 * U] + gh[3 * U]);
                c = fg * s[kCs + e] + ig * gg;
                s[kCs + e] = c;
                h = og * tanhf(c);
            } else {
                const float rg = rnn_sigmoid(gx[0] + gh[0]);
                const float zg = rnn_sigmoid(gx[U] + gh[U]);
                const float ng = tanhf(gx[2 * U] + rg * gh[2 * U]);
                h = (1.0f - zg) * ng + zg * s[kHs + b * H + j];
            }
            a.hstate[(d * 2 + ((step + 1) & 1)) * B * H + b * H + j] = h;
            a.out[t * a.out_t + b * a.out_b + d * H + j] = h;
            if (step == T - 1) {
                if (a.hn) a.hn[(d * B + b) * H + j] = h;
                if (LSTM && a.cn) a.cn[(d * B + b) * H + j] = c;
            }
        }
    }
};

// Every CTA of the grid has arrived `target` times in all (the counter starts at 0: a zeroed
// workspace word per layer).
__device__ __forceinline__ void rnn_grid_sync(unsigned* sync, unsigned target) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(sync, 1u);
        while (*static_cast<volatile unsigned*>(sync) < target) KFORGE_RNN_SPIN_PAUSE();
        __threadfence();
    }
    __syncthreads();
}

template <class Cell, int THREADS>
__device__ __forceinline__ void rnn_layer(const RnnLayer& a, float* smem) {
    const int cta = int(blockIdx.x), tid = int(threadIdx.x);
    Cell::init(a, smem, cta, tid);
    for (int64_t step = 0; step < Cell::kSteps; ++step) {
        __syncthreads();
        Cell::stage(a, smem, cta, tid, step);
        __syncthreads();
        Cell::gates(a, smem, cta, tid, step);
        __syncthreads();
        Cell::cell(a, smem, cta, tid, step);
        rnn_grid_sync(a.sync, unsigned(step + 1) * gridDim.x);
    }
}

}  // namespace kforge
