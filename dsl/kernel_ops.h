// Which of the problem's graph ops each kernel of a program computes, read off the program's
// stores: a kernel holds the ops between the tensors available before it (graph inputs and
// params, and what earlier kernels stored) and the problem tensors it stores, walking back from
// each store through the ops' producers. An op recomputed by two kernels counts in both; a
// kernel that stores only tensors the problem does not name (a program-private intermediate)
// holds none, and the kernel that reads its value holds the ops behind it. Used for per-kernel
// SOL bounds (sol/kernel_bounds.h) and the reports' per-kernel breakdown.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "problem/problem.h"

namespace kforge::dsl {

struct KernelOps {
    std::string kernel;               // the program's kernel name
    KernelKind kind = KernelKind::kMap;
    std::vector<size_t> ops;          // indices into Problem::ops, in graph order
    std::vector<std::string> stores;  // the problem tensors the kernel stores, in chain order
};

// One entry per kernel of `program`, in its order. `problem` is the one the program was checked
// against (tensor names match; a name the problem lacks is skipped).
std::vector<KernelOps> kernel_ops(const Program& program, const Problem& problem);

}  // namespace kforge::dsl
