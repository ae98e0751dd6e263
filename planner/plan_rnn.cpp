// planner/plan_rnn.h.
#include "planner/plan_rnn.h"

#include <algorithm>

#include "planner/partition.h"
#include "problem/rnn.h"

namespace kforge::planner::detail {

std::vector<dsl::RnnConfig> rnn_candidates(bool lstm, int64_t batch, int64_t hidden, int64_t dirs,
                                           const dsl::DeviceLimits& limits) {
    std::vector<dsl::RnnConfig> out;
    const int64_t gates = lstm ? 4 : 3;
    for (int units = 1; units <= 64; units *= 2) {
        const int64_t ctas = dirs * ((hidden + units - 1) / units);
        if (ctas > limits.sm_count) continue;
        if (rnn_recurrent_smem_bytes(lstm, batch, hidden, units) >
            limits.smem_per_block_optin_bytes)
            break;
        dsl::RnnConfig c;
        c.units = units;
        const int64_t items = batch * gates * units;
        c.threads = int(std::clamp<int64_t>((items + 31) / 32 * 32, 64,
                                            std::min(512, limits.max_threads_per_block)));
        out.push_back(c);
        if (out.size() == 3) break;
    }
    return out;
}

Status add_rnn(Planner& pl, const Op& op) {
    for (const std::string& name : op.inputs)
        if (pl.dtype_of(name) != DType::kF32)
            return not_expressible(op, "an rnn kernel takes f32 operands; " + name + " is " +
                                           std::string(to_string(pl.dtype_of(name))));
    const Tensor& x = pl.tensor(op.inputs[0]);
    const Tensor& h0 = pl.tensor(op.inputs[1]);
    const RnnGeometry g = rnn_geometry(op, x.shape, h0.shape);
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kRnn;
    kn.rnn_op = op.kind;
    for (size_t i = 0; i < rnn_state_count(op.kind); ++i) kn.args.push_back(pl.ref(op.inputs[i]));
    dsl::ChainOp store = stmt(dsl::ChainOpKind::kStore);
    store.tensor = pl.ref(op.output);
    kn.chain.push_back(store);
    pl.available.insert(op.output);
    pl.stored_dtype[op.output] = DType::kF32;
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind))};
    for (const dsl::RnnConfig& c : rnn_candidates(g.lstm, g.batch, g.hidden, g.dirs, pl.limits)) {
        kn.rnn = c;
        pk.candidates.push_back(kn);
    }
    if (pk.candidates.empty())
        return not_expressible(op, "no rnn configuration fits: " + std::to_string(g.dirs) +
                                       " direction(s) of H = " + std::to_string(g.hidden) +
                                       " need more CTAs than SMs or W_hh rows beyond shared memory");
    pl.kernels.push_back(std::move(pk));
    return Ok{};
}

}  // namespace kforge::planner::detail
