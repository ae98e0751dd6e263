#include "sol/kernel_bounds.h"

#include <algorithm>
#include <set>

namespace kforge {

Expected<Problem> sub_problem(const Problem& problem, const std::vector<size_t>& ops,
                              const std::vector<std::string>& stores) {
    if (ops.empty()) return make_error(problem.name, "a kernel bound needs at least one op");
    Problem sub = problem;
    sub.ops.clear();
    std::set<std::string> produced, read;
    for (size_t i : ops) {
        if (i >= problem.ops.size())
            return make_error(problem.name, "op index " + std::to_string(i) + " out of range");
        sub.ops.push_back(problem.ops[i]);
        produced.insert(problem.ops[i].output);
    }
    for (const Op& op : sub.ops)
        for (const std::string& in : op.inputs) read.insert(in);
    sub.outputs.clear();
    for (const std::string& s : stores)
        if (produced.count(s)) sub.outputs.push_back(s);
    // no store among the ops' outputs (a program-private store): the last op's output stands
    // for what the kernel writes
    if (sub.outputs.empty()) sub.outputs.push_back(sub.ops.back().output);
    sub.tensors.clear();
    for (const Tensor& t : problem.tensors) {
        Tensor c = t;
        bool is_output =
            std::find(sub.outputs.begin(), sub.outputs.end(), t.name) != sub.outputs.end();
        if (produced.count(t.name)) c.role = is_output ? TensorRole::kOutput
                                                       : TensorRole::kIntermediate;
        else if (read.count(t.name))
            c.role = t.role == TensorRole::kParam ? TensorRole::kParam : TensorRole::kInput;
        else
            continue;
        sub.tensors.push_back(std::move(c));
    }
    // inputs and params first (Problem::tensors' order)
    std::stable_partition(sub.tensors.begin(), sub.tensors.end(), [](const Tensor& t) {
        return t.role == TensorRole::kInput || t.role == TensorRole::kParam;
    });
    sub.index_tensors();
    return sub;
}

Expected<Bounds> kernel_bounds(const Problem& problem, const std::vector<size_t>& ops,
                               const std::vector<std::string>& stores, const Ceilings& ceilings) {
    auto sub = sub_problem(problem, ops, stores);
    if (!sub) return sub.error();
    return compute_bounds(*sub, ceilings);
}

}  // namespace kforge
