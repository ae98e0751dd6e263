// The checker's side of pool kernels: which problem op a `pool max(X[..])` kernel computes, its
// attributes as expression numbers (the problem's op and the kernel build the same node), and
// the legality of its knobs.
#include "dsl/check_internal.h"
#include "problem/pool.h"

namespace kforge::dsl {

std::vector<double> pool_params(const OpAttrs& a) {
    std::vector<double> p;
    for (const auto* v : {&a.kernel_size, &a.stride, &a.padding, &a.dilation, &a.output_size}) {
        for (int64_t e : *v) p.push_back(static_cast<double>(e));
        p.push_back(-1.0);  // separator: the lists have the spatial rank's length
    }
    p.push_back(a.ceil_mode ? 1.0 : 0.0);
    p.push_back(a.count_include_pad ? 1.0 : 0.0);
    p.push_back(static_cast<double>(a.divisor_override));
    return p;
}

const Op* pool_kernel_op(const Problem& problem, const Kernel& kn, Reporter& rep) {
    const TensorRef& x = kn.args.at(0);
    const std::string head = "pool " + std::string(pool_word(kn.pool_op)) + "(" + ref_text(x) + ")";
    const std::string stored = first_store(kn);
    const Op* first = nullptr;
    std::string list;
    for (const Op& op : problem.ops) {
        if (!is_pool(op.kind)) continue;
        list += (list.empty() ? "" : ", ") + op.json_path + " " + std::string(to_string(op.kind)) +
                "(" + op.inputs[0] + ")";
        if (op.kind != kn.pool_op || op.inputs[0] != x.name) continue;
        if (op.output == stored) return &op;
        if (!first) first = &op;
    }
    if (first) return first;
    rep.error(kn.loc, head + ": no " + std::string(to_string(kn.pool_op)) + " op of the problem reads " +
                          x.name + (list.empty() ? " (the problem has no pool op)"
                                                 : " (the problem has " + list + ")") +
                          "; a pool kernel computes one of the problem's pool ops from its input");
    return nullptr;
}

void check_legality_pool(const Kernel& kn, const DeviceLimits& limits, Reporter& rep) {
    const PoolConfig& c = kn.pool;
    if (c.threads < 32 || c.threads > limits.max_threads_per_block || c.threads % 32 != 0) {
        rep.error(knob_loc(kn, "threads"),
                  "threads must be a multiple of 32 in 32.." +
                      std::to_string(limits.max_threads_per_block) + ", got " +
                      std::to_string(c.threads));
    }
    if (c.items != 1 && c.items != 2 && c.items != 4 && c.items != 8)
        rep.error(knob_loc(kn, "items"), "items must be 1, 2, 4 or 8");
    if (c.lanes < 1 || c.lanes > 32 || (c.lanes & (c.lanes - 1)) != 0)
        rep.error(knob_loc(kn, "lanes"), "lanes must be 1, 2, 4, 8, 16 or 32");
    if (c.rows != 1 && c.rows != 2 && c.rows != 4 && c.rows != 8)
        rep.error(knob_loc(kn, "rows"), "rows must be 1, 2, 4 or 8");
    if (c.vec != 1 && c.vec != 2 && c.vec != 4)
        rep.error(knob_loc(kn, "vec"), "vec must be 1, 2 or 4");
    const bool tiled = (kn.pool_op == OpKind::kMaxPool || kn.pool_op == OpKind::kAvgPool) &&
                       c.lanes == 1;
    if (!tiled && (c.rows != 1 || c.vec != 1))
        rep.error(knob_loc(kn, c.rows != 1 ? "rows" : "vec"),
                  "rows and vec apply to max and avg pools with lanes 1 (a thread's tile of "
                  "outputs); this kernel splits windows over lanes or pools adaptively");
}

}  // namespace kforge::dsl
