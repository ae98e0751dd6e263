#include "perfmodel/attention_time.h"

#include <algorithm>
#include <cmath>

#include "dsl/attention.h"
#include "dsl/attention_fmha.h"
#include "dsl/attention_mea.h"
#include "problem/tri_mask.h"

namespace kforge::perfmodel {

Expected<SimKernelTime> attention_time(const dsl::Kernel& k, const Problem& problem,
                                       const Ceilings& ceil, int sm_count) {
    SimKernelTime t{k.name};
    if (k.args.size() < 3) return make_error(k.name, "attention kernel without Q, K and V");
    const Tensor* q = problem.find_tensor(k.args[0].name);
    const Tensor* kt = problem.find_tensor(k.args[1].name);
    const Tensor* v = problem.find_tensor(k.args[2].name);
    if (!q || !kt || !v || q->shape.size() < 2)
        return make_error(k.name, "attention operands are not problem tensors");
    const size_t r = q->shape.size();
    const double batch = static_cast<double>(q->numel() / (q->shape[r - 2] * q->shape[r - 1]));
    const double s = static_cast<double>(q->shape[r - 2]), e = static_cast<double>(q->shape[r - 1]);
    const double l = static_cast<double>(kt->shape[r - 2]), f = static_cast<double>(v->shape[r - 1]);
    const dsl::AttentionMath math = dsl::attention_math(q->dtype, problem.policy, k.attention.f32_cores);
    const DType op = math.operand;
    // a structured mask's fully masked tiles are skipped (problem/tri_mask.h)
    t.flops = 2.0 * batch * s * l * (e + f) *
              tri_mask_density(k.attention.tri_mask, k.attention.tri_diagonal,
                               q->shape[r - 2], kt->shape[r - 2]);
    const double elem = dtype_bytes(q->dtype);
    const bool fmha = k.attention.impl == dsl::AttentionImpl::kCutlassFmha;
    const bool mea = k.attention.impl == dsl::AttentionImpl::kCutlassMea;
    const double tiles_m = std::ceil(s / (fmha  ? k.attention.fmha_m
                                          : mea ? k.attention.mea_m
                                                : k.attention.tile_m));
    const double kv = batch * l * (e + f) * elem;
    t.bytes = batch * s * (e + f) * elem + kv;
    if (k.args.size() > 3)
        if (const Tensor* m = problem.find_tensor(k.args[3].name)) t.bytes += m->bytes();
    if (fmha) t.bytes += batch * s * 4.0;  // the rows' log-sum-exp CUTLASS's kernel writes
    if (mea && dsl::mea_max_k(k.attention.mea_n, q->shape[r - 1], v->shape[r - 1]) >
                   k.attention.mea_n) {
        // head dims past the key tile: O's f32 accumulator (in global memory, L2-resident at
        // best) is read and written once a key tile after the first
        const double key_tiles = std::ceil(l / k.attention.mea_n);
        t.bytes += (key_tiles - 1) * batch * s * f * 4.0 * 2.0;
    }
    const double ctas = tiles_m * batch;
    const double waves = std::ceil(ctas / std::max(1, sm_count));
    // the last wave's idle SMs; the ping-pong FMHA is persistent (one CTA per SM takes tiles)
    const double fill = fmha && k.attention.fmha_schedule == dsl::FmhaSchedule::kPingpong
                            ? std::min(1.0, ctas / std::max(1, sm_count))
                            : ctas / (waves * std::max(1, sm_count));
    // a third of the TF32 rate for 3xTF32's three products. 16-bit: the WMMA kernel measured
    // 4-5% of the H100's bf16 peak (bench/attention/results/2026-12-06-h100.md: 1410 us for
    // 68.7 GFLOP at d64, 3433 us for 137 GFLOP at d128); CUTLASS's warp-specialized FMHA is
    // priced at 40% (FlashAttention-3-like kernels reach 40-60% at d64-d128; not yet measured
    // here), its plain TMA schedule at 25%, and a 32-wide head at 60% of that (short k-loops)
    // CUTLASS's memory-efficient attention (mma.sync, FlashAttention-2-like) at 25% of the
    // 16-bit peak and, at f32 (3xTF32, its operands' only form), 12% of the TF32 rate; the
    // WMMA kernel's 3xTF32 measured 2.8x slower than it (PyTorch's efficient backend, H100,
    // session 23: bench/attention/results/2026-12-07-h100.md), so 4%
    const double tensor16 = fmha ? (k.attention.fmha_schedule == dsl::FmhaSchedule::kTma ? 0.25 : 0.4) *
                                       (k.attention.fmha_d == 32 ? 0.6 : 1.0)
                            : mea ? 0.25
                                  : 0.05;
    const bool f32_in = q->dtype == DType::kF32;
    const double peak = mea && f32_in ? ceil.peak(ComputeUnit::kTf32Tensor) * 0.12
                        : mea ? ceil.peak(q->dtype == DType::kF16 ? ComputeUnit::kFp16Tensor
                                                                   : ComputeUnit::kBf16Tensor) *
                                    tensor16
                        : math.math == 0   ? ceil.peak(ComputeUnit::kFp32Simt) * 0.25
                        : math.math == 1 ? ceil.peak(ComputeUnit::kTf32Tensor) * 0.3
                        : math.math == 3 ? ceil.peak(ComputeUnit::kTf32Tensor) * 0.04
                        : op == DType::kF16 ? ceil.peak(ComputeUnit::kFp16Tensor) * tensor16
                                            : ceil.peak(ComputeUnit::kBf16Tensor) * tensor16;
    if (peak <= 0) return make_error(k.name, "no peak for the attention operands on this device");
    const double compute_s = t.flops / (peak * fill);
    const double memory_s = t.bytes / ceil.dram_bytes_per_s +
                            (tiles_m - 1) * kv / (ceil.dram_bytes_per_s * 3.0);
    t.compute_bound = compute_s > memory_s;
    t.time_ns = std::max(compute_s, memory_s) * 1e9;
    return t;
}

}  // namespace kforge::perfmodel
