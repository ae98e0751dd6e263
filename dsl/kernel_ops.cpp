#include "dsl/kernel_ops.h"

#include <algorithm>
#include <functional>
#include <set>

namespace kforge::dsl {

std::vector<KernelOps> kernel_ops(const Program& program, const Problem& problem) {
    std::set<std::string> available;
    for (const Tensor* t : problem.graph_inputs()) available.insert(t->name);
    auto producer_index = [&](const std::string& tensor) -> std::optional<size_t> {
        for (size_t i = 0; i < problem.ops.size(); ++i)
            if (problem.ops[i].output == tensor) return i;
        return std::nullopt;
    };
    std::vector<KernelOps> out;
    for (const Kernel& k : program.kernels) {
        KernelOps ko{k.name, k.kind, {}, {}};
        for (const ChainOp& c : k.chain)
            if (c.kind == ChainOpKind::kStore && c.tensor && problem.find_tensor(c.tensor->name) &&
                std::find(ko.stores.begin(), ko.stores.end(), c.tensor->name) == ko.stores.end())
                ko.stores.push_back(c.tensor->name);
        std::set<size_t> held;
        std::function<void(const std::string&)> walk = [&](const std::string& tensor) {
            if (available.count(tensor)) return;
            auto op = producer_index(tensor);
            if (!op || !held.insert(*op).second) return;
            for (const std::string& in : problem.ops[*op].inputs) walk(in);
        };
        for (const std::string& s : ko.stores) {
            // a stored tensor is computed here even when an earlier kernel stored it too
            auto op = producer_index(s);
            if (!op || !held.insert(*op).second) continue;
            for (const std::string& in : problem.ops[*op].inputs) walk(in);
        }
        ko.ops.assign(held.begin(), held.end());  // std::set: graph order
        for (const std::string& s : ko.stores) available.insert(s);
        out.push_back(std::move(ko));
    }
    return out;
}

}  // namespace kforge::dsl
