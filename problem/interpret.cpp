// interpret() and rebind_dims(): input checks, the memory guard and op dispatch.
#include "problem/interpret.h"

#include "problem/interpret_ops.h"
#include "problem/spec.h"

namespace kforge {

namespace interp {

AxisSplit axis_split(const OpArgs& a) {
    const std::vector<int64_t>& shape = a.inputs[0]->shape;
    const size_t axis = static_cast<size_t>(a.op.attrs.axis);
    AxisSplit s;
    s.len = shape[axis];
    for (size_t i = 0; i < axis; ++i) s.outer *= shape[i];
    for (size_t i = axis + 1; i < shape.size(); ++i) s.inner *= shape[i];
    return s;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_shape,
                                       const std::vector<int64_t>& out_shape) {
    std::vector<int64_t> strides(out_shape.size(), 0);
    int64_t stride = 1;
    size_t offset = out_shape.size() - in_shape.size();
    for (size_t i = in_shape.size(); i-- > 0;) {
        strides[i + offset] = in_shape[i] == 1 ? 0 : stride;
        stride *= in_shape[i];
    }
    return strides;
}

}  // namespace interp

Expected<TensorValues> interpret(const Problem& problem, const TensorValues& inputs,
                                 int64_t max_elements) {
    int64_t total = 0;
    for (const Tensor& t : problem.tensors) total += t.numel();
    if (total > max_elements) {
        return make_error("", "the interpreter would hold " + std::to_string(total) +
                                  " elements, above its limit of " + std::to_string(max_elements) +
                                  "; interpret the problem at smaller dims (rebind_dims)");
    }
    TensorValues values;
    for (const Tensor* t : problem.graph_inputs()) {
        auto it = inputs.find(t->name);
        if (it == inputs.end()) {
            return make_error("inputs." + t->name, "no values given for input \"" + t->name + "\"");
        }
        if (static_cast<int64_t>(it->second.size()) != t->numel()) {
            return make_error("inputs." + t->name,
                              "expected " + std::to_string(t->numel()) + " values, got " +
                                  std::to_string(it->second.size()));
        }
        values[t->name] = it->second;
    }
    for (const auto& [name, data] : inputs) {
        const Tensor* t = problem.find_tensor(name);
        if (t == nullptr || t->role == TensorRole::kIntermediate || t->role == TensorRole::kOutput) {
            return make_error("inputs." + name, "\"" + name + "\" is not an input of problem \"" +
                                                    problem.name + "\"");
        }
    }
    for (const Op& op : problem.ops) {
        const Tensor* out = problem.find_tensor(op.output);
        if (out == nullptr) return make_error(op.json_path, "output tensor is not in the problem");
        interp::OpArgs args{op, {}, {}, *out};
        for (const std::string& name : op.inputs) {
            const Tensor* t = problem.find_tensor(name);
            auto it = values.find(name);
            if (t == nullptr || it == values.end()) {
                return make_error(op.json_path, "operand \"" + name + "\" is not computed yet");
            }
            args.inputs.push_back(t);
            args.data.push_back(&it->second);
        }
        if (interp::is_index_op(op.kind)) {  // interpret_index.cpp
            auto v = interp::eval_index(args);
            if (!v) return v.error();
            values[op.output] = std::move(*v);
            continue;
        }
        switch (op_class(op.kind)) {
            case OpClass::kMatrix: values[op.output] = interp::eval_matrix(args); break;
            case OpClass::kElementwise: values[op.output] = interp::eval_elementwise(args); break;
            case OpClass::kReduction: values[op.output] = interp::eval_reduction(args); break;
            case OpClass::kRowwise:
                values[op.output] = (op.kind == OpKind::kLayerNorm || op.kind == OpKind::kRmsNorm ||
                                     op.kind == OpKind::kGroupNorm)
                                        ? interp::eval_norm(args)
                                    : (op.kind == OpKind::kL1Normalize ||
                                       op.kind == OpKind::kL2Normalize)
                                        ? interp::eval_normalize(args)
                                    : (op.kind == OpKind::kCumsum || op.kind == OpKind::kCumprod)
                                        ? interp::eval_scan(args)
                                        : interp::eval_reduction(args);
                break;
            case OpClass::kConv: values[op.output] = interp::eval_conv(args); break;
            case OpClass::kShape: values[op.output] = interp::eval_shape(args); break;
            case OpClass::kPool: values[op.output] = interp::eval_pool(args); break;
            case OpClass::kRecurrent: values[op.output] = interp::eval_rnn(args); break;
        }
    }
    TensorValues outputs;
    for (const std::string& name : problem.outputs) outputs[name] = std::move(values[name]);
    return outputs;
}

Expected<Problem> rebind_dims(const Problem& problem,
                              const std::map<std::string, int64_t>& new_dims) {
    auto spec = problem_to_json(problem);
    for (const auto& [name, value] : new_dims) {
        if (problem.dims.count(name) == 0) {
            std::string known;
            for (const auto& [k, v] : problem.dims) known += (known.empty() ? "" : ", ") + k;
            return make_error("dims." + name, "unknown dim \"" + name + "\"; known dims: " + known);
        }
        if (problem.derived_dims.count(name) != 0) {
            return make_error("dims." + name, "dim \"" + name + "\" is derived (a conv2d's " +
                                                  "output size): re-bind the dims it is " +
                                                  "computed from instead");
        }
        if (value <= 0 || value > kMaxDimValue) {
            return make_error("dims." + name, "dim \"" + name + "\" = " + std::to_string(value) +
                                                  "; expected a positive integer of at most 2^40");
        }
        spec["dims"][name] = value;
    }
    return parse_problem(spec.dump(), problem.name + " (rebound dims)");
}

}  // namespace kforge
