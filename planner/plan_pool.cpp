// Pooling in the fusion planner (planner/partition.h): one pool kernel per pool op, reading the
// op's input as the program stores it (a conv2d kernel's output, say: conv -> pool), whose chain
// absorbs the element-wise ops that follow as a map's does (plan_chain.cpp) and stores them.
#include "planner/knobs.h"
#include "planner/partition.h"
#include "problem/pool.h"

namespace kforge::planner::detail {

Status Planner::add_pool(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& y = tensor(op.output);
    if (x.shape.size() < 3 || x.shape.size() > 5)
        return not_expressible(op, "a pool kernel takes x [N, C, *] with 1-3 spatial axes");
    if (!is_float_storage(dtype_of(x.name)))
        return not_expressible(op, "pool input " + x.name + " must be f32, f16 or bf16");
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kPool;
    kn.pool_op = op.kind;
    kn.args = {ref(x.name)};
    DType value = DType::kF32;
    if (auto st = absorb(kn, op.output, value, op); !st) return st;
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind))};
    const int64_t planes = x.shape[0] * x.shape[1];
    for (const auto& c :
         pool_candidates(op.kind, pool_axes(op, x.shape, y.shape), planes, y.numel(), limits)) {
        kn.pool = c;
        pk.candidates.push_back(kn);
    }
    kernels.push_back(std::move(pk));
    return Ok{};
}

}  // namespace kforge::planner::detail
