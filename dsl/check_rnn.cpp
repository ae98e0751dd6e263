// dsl/check_rnn.h, and the rnn kernel's knobs (units, threads).
#include "dsl/check_rnn.h"

#include "dsl/check_internal.h"
#include "dsl/knobs.h"
#include "problem/rnn.h"

namespace kforge::dsl {
namespace {

std::vector<std::string> out_dims(const Op& op, const Problem& problem) {
    std::vector<std::string> dims;
    if (const Tensor* y = problem.find_tensor(op.output))
        for (size_t i = 0; i < y->shape.size(); ++i) dims.push_back(dim_text(*y, i));
    return named_dims(dims);
}

std::string refs_text(const std::vector<TensorRef>& refs) {
    std::string s;
    for (const TensorRef& r : refs) s += (s.empty() ? "" : ", ") + r.name;
    return s;
}

KnobValue one(int v) {
    KnobValue k;
    k.ints = {v};
    return k;
}

}  // namespace

std::vector<KnobSpec> rnn_knobs() {
    return {
        {"units", KnobValueKind::kInts, {}, {IntDomain{{}, 1, 64, 1}}, {}, "8",
         "hidden units per recurrent CTA (CTAs per layer and direction = ceil(H / units))",
         [](Kernel& k, const KnobValue& v) { k.rnn.units = int(v.ints.at(0)); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return one(k.rnn.units); }},
        {"threads", KnobValueKind::kInts, {}, {IntDomain{{}, 32, 1024, 32}}, {}, "256",
         "threads per CTA (the projection's and the recurrent kernel's)",
         [](Kernel& k, const KnobValue& v) { k.rnn.threads = int(v.ints.at(0)); return std::string(); },
         [](const Kernel& k) -> std::optional<KnobValue> { return one(k.rnn.threads); }},
    };
}

int rnn_node(ExprGraph& g, const std::vector<int>& in, const Op& op, const Problem& problem,
             const Origin& origin) {
    const OpAttrs& a = op.attrs;
    const int operands = g.apply("rnn_operands", in, {}, {}, false, origin);
    return g.pool(operands, std::string(to_string(op.kind)),
                  {double(a.num_layers), a.bidirectional ? 1.0 : 0.0, a.batch_first ? 1.0 : 0.0,
                   a.rnn_bias ? 1.0 : 0.0, double(static_cast<int>(a.rnn_result))},
                  out_dims(op, problem), origin);
}

const Op* rnn_kernel_op(const Problem& problem, const Kernel& kn, Reporter& rep) {
    const std::string stored = first_store(kn);
    const Op* first = nullptr;
    std::string list;
    for (const Op& op : problem.ops) {
        if (!is_rnn(op.kind)) continue;
        list += (list.empty() ? "" : ", ") + op.json_path + " " + std::string(to_string(op.kind)) +
                "(" + op.inputs[0] + ", " + op.inputs[1] + (op.kind == OpKind::kLstm ? ", " + op.inputs[2] : "") + ")";
        if (op.kind != kn.rnn_op || kn.args.size() != rnn_state_count(op.kind)) continue;
        bool same = true;
        for (size_t i = 0; i < kn.args.size(); ++i) same = same && kn.args[i].name == op.inputs[i];
        if (!same) continue;
        if (op.output == stored) return &op;
        if (!first) first = &op;
    }
    if (first) return first;
    rep.error(kn.loc, "rnn " + std::string(to_string(kn.rnn_op)) + ": no " +
                          std::string(to_string(kn.rnn_op)) + " op of the problem reads " +
                          (kn.args.empty() ? std::string("these tensors") : refs_text(kn.args)) +
                          (list.empty() ? " (the problem has no lstm or gru op)"
                                        : " as x, h0" + std::string(kn.rnn_op == OpKind::kLstm ? ", c0" : "") +
                                              " (the problem has " + list + ")"));
    return nullptr;
}

std::optional<int> rnn_kernel_expr(Sem& sem, const Kernel& kn, int k) {
    const Op* op = rnn_kernel_op(sem.problem, kn, sem.reporter);
    std::vector<int> in;
    for (const TensorRef& a : kn.args)
        if (auto x = sem.read(a, k)) in.push_back(*x);
    if (!op || in.size() != kn.args.size()) return std::nullopt;
    for (size_t i = kn.args.size(); i < op->inputs.size(); ++i) {  // the weights, by name
        const Tensor* t = sem.problem.find_tensor(op->inputs[i]);
        if (!t) return std::nullopt;
        TensorRef ref;
        ref.name = t->name;
        ref.loc = kn.loc;
        for (size_t d = 0; d < t->shape.size(); ++d) ref.dims.push_back(dim_text(*t, d));
        auto w = sem.read(ref, k);
        if (!w) return std::nullopt;
        in.push_back(*w);
    }
    return rnn_node(sem.graph, in, *op, sem.problem,
                    Origin{Reporter::loc_text(kn.loc), kn.args[0].name, op_display(*op, sem.problem)});
}

void check_legality_rnn(const Kernel& kn, const Problem& problem, const DeviceLimits& limits,
                        Reporter& rep) {
    const RnnConfig& c = kn.rnn;
    if (c.threads < 32 || c.threads > limits.max_threads_per_block || c.threads % 32 != 0)
        rep.error(knob_loc(kn, "threads"), "threads must be a multiple of 32 in 32.." +
                                               std::to_string(limits.max_threads_per_block) +
                                               ", got " + std::to_string(c.threads));
    if (c.units < 1 || c.units > 64)
        rep.error(knob_loc(kn, "units"), "units must be in 1..64, got " + std::to_string(c.units));
    size_t stores = 0;
    for (const ChainOp& s : kn.chain) {
        if (s.kind == ChainOpKind::kStore) ++stores;
        else
            rep.error(s.loc, "an rnn kernel's chain is one store of the op's result; `" +
                                 std::string(to_string(s.kind)) +
                                 "` belongs in a map kernel that reads the stored result");
    }
    if (stores != 1) rep.error(kn.loc, "an rnn kernel stores its result once");
    CheckOptions quiet;
    CheckResult ignored;
    Reporter none(quiet, ignored);
    const Op* op = rnn_kernel_op(problem, kn, none);
    if (!op) return;
    for (const std::string& name : op->inputs) {
        const Tensor* t = problem.find_tensor(name);
        if (t && t->dtype != DType::kF32) {
            rep.error(kn.loc, "rnn kernels take f32 operands; " + name + " is " +
                                  std::string(to_string(t->dtype)));
            return;
        }
    }
    const Tensor* x = problem.find_tensor(op->inputs[0]);
    const Tensor* h0 = problem.find_tensor(op->inputs[1]);
    if (!x || !h0) return;
    const RnnGeometry g = rnn_geometry(*op, x->shape, h0->shape);
    const int64_t ctas = g.dirs * ((g.hidden + c.units - 1) / c.units);
    if (ctas > limits.sm_count)
        rep.error(knob_loc(kn, "units"),
                  "units " + std::to_string(c.units) + " gives " + std::to_string(ctas) +
                      " recurrent CTAs (" + std::to_string(g.dirs) + " direction(s) x ceil(H " +
                      std::to_string(g.hidden) + " / units)); the persistent kernel's grid "
                      "barrier needs every CTA resident: at most one per SM, " +
                      std::to_string(limits.sm_count) + " on the " + limits.name);
    const int64_t smem = rnn_recurrent_smem_bytes(g.lstm, g.batch, g.hidden, c.units);
    if (smem > limits.smem_per_block_optin_bytes)
        rep.error(knob_loc(kn, "units"),
                  "units " + std::to_string(c.units) + " needs " + std::to_string(smem / 1024) +
                      " KiB of shared memory per CTA (W_hh rows, h, gates); the " + limits.name +
                      " allows " + std::to_string(limits.smem_per_block_optin_bytes / 1024) +
                      " KiB: fewer units");
}

}  // namespace kforge::dsl
