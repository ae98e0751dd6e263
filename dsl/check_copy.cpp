// The checker's side of copy kernels: which problem shape op a `copy cat(X0[..], X1[..])`
// kernel computes (problem/copy_op.h's find_copy_op: its op word, its inputs in order, the one
// whose output the chain stores), the expression node the problem's op and the kernel both
// build (ExprGraph::gather: the op's attributes as numbers, the output's dims), and the
// legality of its knobs.
#include "dsl/check_internal.h"
#include "problem/copy_op.h"
#include "problem/shape_ops.h"

#include <algorithm>

namespace kforge::dsl {

bool distinct_names(const std::vector<std::string>& dims) {
    for (size_t i = 0; i < dims.size(); ++i)
        for (size_t j = i + 1; j < dims.size(); ++j)
            if (dims[i] == dims[j]) return false;
    return true;
}

int free_permute_node(ExprGraph& g, int x, const Kernel& kn, Reporter& rep) {
    const std::vector<std::string> in = named_dims(kn.args.at(0).dims);
    std::vector<std::string> out;
    for (const ChainOp& c : kn.chain)
        if (c.kind == ChainOpKind::kStore && c.tensor) {
            out = named_dims(c.tensor->dims);
            break;
        }
    if (kn.copy_op == OpKind::kExpand) {  // every input dim kept, the others broadcast
        bool within = distinct_names(out);
        for (const std::string& d : in)
            within = within && std::find(out.begin(), out.end(), d) != out.end();
        if (!within) {
            rep.error(kn.loc, "copy expand(" + ref_text(kn.args.at(0)) + "): no expand op of the "
                                  "problem reads " + kn.args.at(0).name + ", and an expand of "
                                  "the program's own must store distinct dim names that include "
                                  "its input's (stores " + dims_text(out) + ")");
            return -1;
        }
        return g.relabel(x, out);
    }
    std::vector<std::string> a = in, b = out;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (!distinct_names(in) || a != b) {
        rep.error(kn.loc, "copy permute(" + ref_text(kn.args.at(0)) +
                              "): no permute op of the problem reads " + kn.args.at(0).name +
                              ", and a permute of the program's own must read distinct dim names "
                              "and store a reordering of them (stores " + dims_text(out) + ")");
        return -1;
    }
    return g.relabel(x, out);
}

int copy_node(ExprGraph& g, std::vector<int> in, const Op& op, const Problem& problem,
              const Origin& origin) {
    const Tensor* x = problem.find_tensor(op.inputs.at(0));
    const Tensor* y = problem.find_tensor(op.output);
    std::vector<double> params;
    const OpAttrs& a = op.attrs;
    switch (op.kind) {
        case OpKind::kPermute:
            for (int64_t p : a.perm) params.push_back(static_cast<double>(p));
            break;
        case OpKind::kSlice: {
            const SliceRange r = slice_range(a, x ? x->shape.at(static_cast<size_t>(a.axis)) : 0);
            params = {static_cast<double>(a.axis), static_cast<double>(r.start),
                      static_cast<double>(r.step), static_cast<double>(r.count)};
            break;
        }
        case OpKind::kCat: params = {static_cast<double>(a.axis)}; break;
        case OpKind::kPad:
            for (const auto& p : a.pads) {
                params.push_back(static_cast<double>(p[0]));
                params.push_back(static_cast<double>(p[1]));
            }
            params.push_back(a.scalar);
            break;
        default: break;  // reshape, expand: the output's dims say it all
    }
    std::vector<std::string> dims;
    for (size_t i = 0; y && i < y->shape.size(); ++i) dims.push_back(dim_text(*y, i));
    // a rank view (a reshape or expand of axes of extent 1) is the problem's value too: a copy
    // kernel that writes one out (an expand read by a merging reshape: x.repeat) relabels it
    if ((op.kind == OpKind::kReshape || op.kind == OpKind::kExpand) && is_rank_view(problem, op))
        return g.relabel(in.at(0), named_dims(dims));
    if (op.kind == OpKind::kPermute && distinct_names(named_dims(dims)))
        return g.relabel(in.at(0), named_dims(dims));  // kernels index by names: the same value
    return g.gather(std::move(in), std::string(to_string(op.kind)), std::move(params),
                    named_dims(dims), origin);
}

std::vector<int> copy_inputs(ExprGraph& g, std::vector<int> args, const Op& op, const Kernel& kn,
                             const Problem& problem, const Origin& origin) {
    for (size_t i = 0; i < args.size() && i < op.inputs.size() && i < kn.args.size(); ++i)
        for (const Op* r : views_between(problem, kn.args[i].name, op.inputs[i]))
            if (!is_rank_view(problem, *r))  // a rank view (expand too) is its input's value
                args[i] = copy_node(g, {args[i]}, *r, problem, origin);
    return args;
}

const Op* copy_kernel_op(const Problem& problem, const Kernel& kn, Reporter& rep) {
    std::vector<std::string> inputs;
    std::string head = "copy " + std::string(to_string(kn.copy_op)) + "(";
    for (const TensorRef& a : kn.args) {
        head += (inputs.empty() ? "" : ", ") + ref_text(a);
        inputs.push_back(a.name);
    }
    head += ")";
    const std::string stored = first_store(kn);
    // a permute or expand storing a tensor the problem lacks computes no problem op: a free one
    const bool own = (kn.copy_op == OpKind::kPermute || kn.copy_op == OpKind::kExpand) &&
                     kn.args.size() == 1;
    if (own && problem.find_tensor(stored) == nullptr) return nullptr;
    std::vector<std::string> reads;  // the chain's operands: other kernels' values
    for (const ChainOp& c : kn.chain)
        if (c.kind != ChainOpKind::kStore && c.tensor) reads.push_back(c.tensor->name);
    if (const Op* op = find_copy_op(problem, kn.copy_op, inputs, stored, reads)) return op;
    if (own) return nullptr;  // a free permute or expand
    std::string list;
    for (const Op& op : problem.ops) {
        if (op.kind != kn.copy_op) continue;
        list += (list.empty() ? "" : ", ") + op.json_path + " " + std::string(to_string(op.kind)) + "(";
        for (size_t i = 0; i < op.inputs.size(); ++i) list += (i ? ", " : "") + op.inputs[i];
        list += ")";
    }
    rep.error(kn.loc, head + ": no " + std::string(to_string(kn.copy_op)) +
                          " op of the problem reads exactly these tensors" +
                          (list.empty() ? " (the problem has none)" : " (the problem has " + list + ")") +
                          "; a copy kernel computes one of the problem's shape ops from its inputs, "
                          "in their order");
    return nullptr;
}

void check_legality_copy(const Kernel& kn, const DeviceLimits& limits, Reporter& rep) {
    const CopyConfig& c = kn.copy;
    if (c.threads < 32 || c.threads > limits.max_threads_per_block || c.threads % 32 != 0) {
        rep.error(knob_loc(kn, "threads"),
                  "threads must be a multiple of 32 in 32.." +
                      std::to_string(limits.max_threads_per_block) + ", got " +
                      std::to_string(c.threads));
    }
    if (c.vec != 1 && c.vec != 2 && c.vec != 4 && c.vec != 8)
        rep.error(knob_loc(kn, "vec"), "vec must be 1, 2, 4 or 8");
}

}  // namespace kforge::dsl
