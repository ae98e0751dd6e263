// perfmodel/rnn_time.h.
#include "perfmodel/rnn_time.h"

#include <algorithm>
#include <cmath>

#include "problem/rnn.h"

namespace kforge::perfmodel {

Expected<SimKernelTime> rnn_time(const dsl::Kernel& k, const Problem& problem,
                                 const Ceilings& ceil) {
    SimKernelTime t{k.name};
    const Op* op = nullptr;
    for (const Op& o : problem.ops)
        if (o.kind == k.rnn_op && !k.args.empty() && o.inputs[0] == k.args[0].name && !op) op = &o;
    if (!op) return make_error(k.name, "no lstm / gru op of the problem reads the kernel's x");
    const Tensor* x = problem.find_tensor(op->inputs[0]);
    const Tensor* h0 = problem.find_tensor(op->inputs[1]);
    if (!x || !h0) return make_error(k.name, "rnn operands missing");
    const RnnGeometry g = rnn_geometry(*op, x->shape, h0->shape);
    const double rows = double(g.seq) * double(g.batch), gh = double(g.gates * g.hidden);
    const double units = double(k.rnn.units), threads = double(k.rnn.threads);
    double time_s = 0;
    for (int64_t l = 0; l < g.layers; ++l) {
        const double proj_flops = 2.0 * rows * double(g.dirs) * gh * double(g.layer_input(l));
        const double proj_bytes =
            4.0 * (rows * double(g.layer_input(l)) + double(g.dirs) * gh * double(g.layer_input(l)) +
                   rows * double(g.dirs) * gh);
        time_s += std::max(proj_flops / (ceil.peak(ComputeUnit::kFp32Simt) * kRnnProjectionEfficiency),
                           proj_bytes / ceil.dram_bytes_per_s);
        const double passes = std::ceil(double(g.batch) * double(g.gates) * units / threads);
        const double gates_s = passes * double(g.hidden) * kRnnCyclesPerFma / kRnnCoreClockHz;
        time_s += double(g.seq) * (kRnnStepStageS + gates_s + kRnnStepBarrierS);
        t.flops += proj_flops + 2.0 * rows * double(g.dirs) * gh * double(g.hidden);
        t.bytes += proj_bytes;
    }
    t.compute_bound = true;  // latency-bound: neither DRAM nor a pipe is busy
    t.time_ns = time_s * 1e9;
    return t;
}

}  // namespace kforge::perfmodel
