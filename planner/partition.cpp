// The partition of the fusion planner (planner/plan.h): one walk over the ops in topological
// order; matrix ops start gemm kernels (plan_gemm.cpp), convolutions conv2d kernels
// (plan_conv.cpp), reductions/softmax/norms rowwise kernels (plan_rowwise.cpp), other
// element-wise ops map kernels (plan_map.cpp); each kernel's chain then absorbs the element-wise
// consumers of its value (plan_chain.cpp). This file holds the walk and what every family shares:
// the tensors stored so far and the store statement.
// Invariants: a tensor that a later kernel reads was stored by an earlier one; every value of
// a kernel that an op outside it reads, or that is a problem output, is stored by it; a gemm
// chain stores once, at its end (codegen/gemm_spec.cpp).
#include <algorithm>

#include "planner/partition.h"
#include "planner/plan_rnn.h"

namespace kforge::planner::detail {

using dsl::ChainOp;
using dsl::ChainOpKind;

std::vector<std::string> dims_of(const Tensor& t) {
    std::vector<std::string> out;
    for (size_t i = 0; i < t.shape.size(); ++i)
        out.push_back(i < t.dim_names.size() && !t.dim_names[i].empty() ? t.dim_names[i]
                                                                          : std::to_string(t.shape[i]));
    return out;
}

std::vector<std::string> named(const std::vector<std::string>& dims) {
    std::vector<std::string> out;
    for (const auto& d : dims)
        if (d != "1") out.push_back(d);
    return out;
}

Error not_expressible(const Op& op, const std::string& why) {
    return make_error(op.json_path, "not expressible: " + std::string(to_string(op.kind)) + ": " + why);
}

ChainOp stmt(ChainOpKind kind, std::vector<double> numbers) {
    ChainOp c;
    c.kind = kind;
    c.numbers = std::move(numbers);
    return c;
}

bool is_float_storage(DType d) { return d == DType::kF32 || d == DType::kF16 || d == DType::kBF16; }

// The dtype the program stores `name` in: the problem's, or f32 for an intermediate that
// only rowwise/map kernels read when intermediates_f32 is on or `name` is in f32_intermediates.
DType Planner::store_dtype(const std::string& name) const {
    const Tensor& t = tensor(name);
    if (is_output(name) || (!opt.intermediates_f32 && !f32_intermediates.count(name)))
        return t.dtype;
    for (size_t r : readers.at(name)) {  // gemm and conv2d operands share one dtype
        const OpClass c = op_class(p.ops[r].kind);
        if (c == OpClass::kMatrix || c == OpClass::kConv) return t.dtype;
    }
    return DType::kF32;
}

Status Planner::emit_store(dsl::Kernel& kn, DType& value, const std::string& name, const Op& op) {
    const DType d = store_dtype(name);
    if (!is_float_storage(d)) {
        return not_expressible(op, "tensor " + name + " is " + std::string(to_string(d)) +
                                       "; chains store only f32, f16 or bf16");
    }
    if (d != value) {
        ChainOp c = stmt(ChainOpKind::kCast);
        c.cast_to = d;
        kn.chain.push_back(c);
        value = d;
    }
    ChainOp s = stmt(ChainOpKind::kStore);
    s.tensor = ref(name);
    kn.chain.push_back(s);
    available.insert(name);
    stored_dtype[name] = d;
    return Ok{};
}

Expected<std::vector<PlannedKernel>> plan_kernels(const Problem& problem,
                                                  const dsl::DeviceLimits& limits,
                                                  const SeedOptions& options) {
    Planner pl{problem, limits, options, {}, {}, {}, {}, {}};
    for (const Tensor* t : problem.graph_inputs()) pl.available.insert(t->name);
    for (const Tensor& t : problem.tensors) {
        pl.readers[t.name];
        pl.by_name.emplace(t.name, &t);
    }
    for (size_t i = 0; i < problem.ops.size(); ++i)
        for (const auto& in : problem.ops[i].inputs) pl.readers[in].push_back(i);
    pl.done.assign(problem.ops.size(), false);
    for (size_t i = 0; i < problem.ops.size(); ++i) {
        if (pl.done[i]) continue;
        pl.done[i] = true;
        const Op& op = problem.ops[i];
        for (const auto& in : op.inputs) {
            if (!pl.available.count(in))
                return make_error(op.json_path, "internal: input " + in + " was never stored");
        }
        Status st = Ok{};
        if (op.kind == OpKind::kMatmul) {  // plan_attention.cpp
            auto attention = add_attention(pl, i);
            if (!attention) return attention.error();
            if (*attention) continue;
        }
        if (is_index_kernel_op(op)) {  // plan_index.cpp
            if (auto s = add_index_kernel(pl, op); !s) return s.error();
            continue;
        }
        switch (op_class(op.kind)) {
        case OpClass::kMatrix: st = pl.add_gemm(op); break;
        case OpClass::kReduction:
        case OpClass::kRowwise: st = pl.add_rowwise(op); break;
        case OpClass::kElementwise: st = pl.add_map(op); break;
        case OpClass::kConv: st = pl.add_conv2d(op); break;
        case OpClass::kPool: st = pl.add_pool(op); break;
        case OpClass::kRecurrent: st = add_rnn(pl, op); break;  // plan_rnn.cpp
        case OpClass::kShape: st = pl.add_shape(op); break;
        }
        if (!st) return st.error();
    }
    for (size_t k = 0; k < pl.kernels.size(); ++k)
        for (auto& c : pl.kernels[k].candidates) c.name = "k" + std::to_string(k);
    return std::move(pl.kernels);
}

}  // namespace kforge::planner::detail
