#include "perfmodel/attention_time.h"

#include <algorithm>
#include <cmath>

#include "dsl/attention.h"

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
    t.flops = 2.0 * batch * s * l * (e + f);
    const double elem = dtype_bytes(q->dtype);
    const double tiles_m = std::ceil(s / k.attention.tile_m);
    const double kv = batch * l * (e + f) * elem;
    t.bytes = batch * s * (e + f) * elem + kv;
    if (k.args.size() > 3)
        if (const Tensor* m = problem.find_tensor(k.args[3].name)) t.bytes += m->bytes();
    const double ctas = tiles_m * batch;
    const double waves = std::ceil(ctas / std::max(1, sm_count));
    const double fill = ctas / (waves * std::max(1, sm_count));  // the last wave's idle SMs
    // a third of the TF32 rate for 3xTF32's three products
    const double peak = math.math == 0   ? ceil.peak(ComputeUnit::kFp32Simt) * 0.25
                        : math.math == 1 ? ceil.peak(ComputeUnit::kTf32Tensor) * 0.3
                        : math.math == 3 ? ceil.peak(ComputeUnit::kTf32Tensor) * 0.1
                        : op == DType::kF16 ? ceil.peak(ComputeUnit::kFp16Tensor) * 0.3
                                            : ceil.peak(ComputeUnit::kBf16Tensor) * 0.3;
    if (peak <= 0) return make_error(k.name, "no peak for the attention operands on this device");
    const double compute_s = t.flops / (peak * fill);
    const double memory_s = t.bytes / ceil.dram_bytes_per_s +
                            (tiles_m - 1) * kv / (ceil.dram_bytes_per_s * 3.0);
    t.compute_bound = compute_s > memory_s;
    t.time_ns = std::max(compute_s, memory_s) * 1e9;
    return t;
}

}  // namespace kforge::perfmodel
