// The graph half of parse_problem(): tensor names, a stable topological order, shape inference
// in that order, dangling intermediates and outputs.
#include <functional>
#include <queue>
#include <unordered_map>

#include "problem/spec_internal.h"

namespace kforge::spec {
namespace {

// Checks that each op writes a new name and reads a defined one; returns the producer of each
// op-written tensor (op index in spec order).
Expected<std::unordered_map<std::string, size_t>> check_names(const Problem& p) {
    std::unordered_map<std::string, size_t> producer;
    std::vector<std::string> known;
    for (const Tensor& t : p.tensors) known.push_back(t.name);
    for (size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        if (p.find_tensor(op.output) != nullptr) {
            return make_error(op.json_path + ".output",
                              "tensor " + quote(op.output) + " is defined twice: it is an input");
        }
        auto [it, fresh] = producer.emplace(op.output, i);
        if (!fresh) {
            return make_error(op.json_path + ".output",
                              "tensor " + quote(op.output) + " is defined twice: " +
                                  p.ops[it->second].json_path + " also writes it");
        }
        known.push_back(op.output);
    }
    for (const Op& op : p.ops) {
        for (size_t k = 0; k < op.inputs.size(); ++k) {
            if (p.find_tensor(op.inputs[k]) == nullptr && producer.count(op.inputs[k]) == 0) {
                return make_error(op.json_path + ".inputs[" + std::to_string(k) + "]",
                                  "unknown tensor " + quote(op.inputs[k]) +
                                      "; known tensors: " + join(known));
            }
        }
    }
    return producer;
}

Status check_outputs(const Problem& p, const std::unordered_map<std::string, size_t>& producer) {
    std::vector<std::string> produced;
    for (const Op& op : p.ops) produced.push_back(op.output);
    for (size_t i = 0; i < p.outputs.size(); ++i) {
        const std::string& name = p.outputs[i];
        if (producer.count(name) != 0) continue;
        std::string path = "outputs[" + std::to_string(i) + "]";
        if (p.find_tensor(name) != nullptr) {
            return make_error(path, "output " + quote(name) +
                                        " is a graph input, not produced by the graph");
        }
        return make_error(path, "output " + quote(name) + " is not produced by the graph; " +
                                    "tensors the graph produces: " + join(produced));
    }
    return Ok{};
}

// Kahn's algorithm, always taking the lowest spec index that is ready: a graph already in
// order keeps its order.
Expected<std::vector<size_t>> topological_order(
    const Problem& p, const std::unordered_map<std::string, size_t>& producer) {
    size_t n = p.ops.size();
    std::vector<size_t> pending(n, 0);
    std::vector<std::vector<size_t>> consumers(n);
    for (size_t i = 0; i < n; ++i) {
        for (const std::string& in : p.ops[i].inputs) {
            auto it = producer.find(in);
            if (it == producer.end()) continue;
            ++pending[i];
            consumers[it->second].push_back(i);
        }
    }
    std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
    for (size_t i = 0; i < n; ++i) {
        if (pending[i] == 0) ready.push(i);
    }
    std::vector<size_t> order;
    while (!ready.empty()) {
        size_t i = ready.top();
        ready.pop();
        order.push_back(i);
        for (size_t c : consumers[i]) {
            if (--pending[c] == 0) ready.push(c);
        }
    }
    if (order.size() == n) return order;
    std::vector<std::string> stuck;
    size_t first = n;
    for (size_t i = 0; i < n; ++i) {
        if (pending[i] == 0) continue;
        stuck.push_back(p.ops[i].json_path);
        first = std::min(first, i);
    }
    const Op& op = p.ops[first];
    size_t k = 0;
    while (k < op.inputs.size() &&
           (producer.count(op.inputs[k]) == 0 || pending[producer.at(op.inputs[k])] == 0)) {
        ++k;
    }
    k = std::min(k, op.inputs.size() - 1);
    return make_error(op.json_path + ".inputs[" + std::to_string(k) + "]",
                      "cycle: " + quote(op.inputs[k]) + " is written by " +
                          p.ops[producer.at(op.inputs[k])].json_path +
                          ", which depends on this op; no order of the graph fixes it (ops in " +
                          "or behind the cycle: " + join(stuck) + ")");
}

Status check_dangling(const Problem& p, const std::unordered_map<std::string, size_t>& producer) {
    std::vector<bool> needed(p.ops.size(), false);
    std::vector<size_t> work;
    for (const std::string& out : p.outputs) work.push_back(producer.at(out));
    while (!work.empty()) {
        size_t i = work.back();
        work.pop_back();
        if (needed[i]) continue;
        needed[i] = true;
        for (const std::string& in : p.ops[i].inputs) {
            auto it = producer.find(in);
            if (it != producer.end()) work.push_back(it->second);
        }
    }
    for (size_t i = 0; i < p.ops.size(); ++i) {
        if (needed[i]) continue;
        return make_error(p.ops[i].json_path + ".output",
                          "dangling tensor " + quote(p.ops[i].output) +
                              ": no output depends on it; outputs: " + join(p.outputs));
    }
    return Ok{};
}

// An input whose shape names a derived dim not resolved at parse time (extent 0): the extents
// that p.dims now has filled in, checked against the limits once whole. Whether it is whole.
Expected<bool> fill_pending(const Problem& p, Tensor& t) {
    bool whole = true, filled = false;
    for (size_t i = 0; i < t.shape.size(); ++i) {
        if (t.shape[i] != 0) continue;
        auto it = p.dims.find(t.dim_names[i]);
        if (it == p.dims.end()) {
            whole = false;
            continue;
        }
        t.shape[i] = it->second;
        filled = true;
    }
    if (filled && whole) {
        if (auto s = check_shape_limits(t.shape, "inputs." + t.name + ".shape"); !s)
            return s.error();
    }
    return whole;
}

// The first unknown name of a derived dim that nothing resolved.
Error unresolved_dim(const Problem& p) {
    for (const auto& [name, text] : p.dim_exprs) {
        if (p.dims.count(name) != 0) continue;
        for (const std::string& n : dim_expr_names(text)) {
            if (p.dims.count(n) != 0) continue;
            return make_error("dims." + name,
                              "the expression " + quote(text) + " names " + quote(n) +
                                  ", which is neither a dim nor one that the graph derives (a "
                                  "conv's or pool's out_dims, a reshape's product)");
        }
    }
    return make_error("dims", "internal: no unresolved dim");
}

}  // namespace

Status build_graph(Problem& p) {
    auto producer = check_names(p);
    if (!producer) return producer.error();
    if (auto s = check_outputs(p, *producer); !s) return s;
    auto order = topological_order(p, *producer);
    if (!order) return order.error();
    if (auto s = check_dangling(p, *producer); !s) return s;

    std::vector<Op> sorted;
    std::unordered_map<std::string, Tensor> defined;
    for (const Tensor& t : p.tensors) defined.emplace(t.name, t);
    std::vector<Tensor> intermediates;
    for (size_t i : *order) {
        Op op = p.ops[i];
        // derived dims of dims the ops before derived, and the inputs whose shapes name them
        if (auto s = resolve_dim_exprs(p); !s) return s;
        std::vector<const Tensor*> inputs;
        for (const std::string& name : op.inputs) {
            Tensor& t = defined.at(name);
            auto whole = fill_pending(p, t);
            if (!whole) return whole.error();
            if (!*whole) {
                for (size_t k = 0; k < t.shape.size(); ++k) {
                    if (t.shape[k] != 0) continue;
                    const std::string& d = t.dim_names[k];
                    return make_error(op.json_path + ".inputs",
                                      "input " + quote(name) + " names the derived dim " +
                                          quote(d) + " = " + quote(p.dim_exprs.at(d)) +
                                          ", whose dims no op before this one derives");
                }
            }
            inputs.push_back(&t);
        }
        auto out = infer_op(op, inputs, p.dims, p.derived_dims);
        if (!out) return out.error();
        if (auto s = check_shape_limits(out->shape, op.json_path + ".output"); !s) return s;
        for (const std::string& o : p.outputs) {
            if (o == op.output) out->role = TensorRole::kOutput;
        }
        intermediates.push_back(*out);
        defined.emplace(out->name, std::move(*out));
        sorted.push_back(std::move(op));
    }
    p.ops = std::move(sorted);
    if (auto s = resolve_dim_exprs(p); !s) return s;
    for (Tensor& t : p.tensors) {  // the inputs, their pending extents filled in
        t = defined.at(t.name);
        auto whole = fill_pending(p, t);
        if (!whole) return whole.error();
        if (!*whole) return unresolved_dim(p);
    }
    for (const auto& [name, text] : p.dim_exprs)
        if (p.dims.count(name) == 0) return unresolved_dim(p);
    for (Tensor& t : p.tensors)  // every dim known: the fan_ins valued
        if (auto s = value_fan_in(t, p.dims); !s) return s;
    for (Tensor& t : intermediates) p.tensors.push_back(std::move(t));
    p.index_tensors();
    return Ok{};
}

}  // namespace kforge::spec
