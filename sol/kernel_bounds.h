// The speed-of-light bound of one kernel of a program: sol/bounds.h's fused bound of the part
// of the problem's graph the kernel computes (its ops, dsl/kernel_ops.h), as a problem of its
// own - the tensors those ops read from outside it are its inputs, the tensors the kernel
// stores its outputs (read and written once: the kernel's minimum bytes), the ops' FLOPs and
// instructions its compute. The kernels' bounds sum to at least the whole problem's T_sol
// (every boundary tensor crosses DRAM), so a kernel at 100% of its bound may still leave the
// program above its own.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/expected.h"
#include "problem/problem.h"
#include "sol/bounds.h"
#include "sol/calibration.h"

namespace kforge {

// The sub-problem of `ops` (indices into problem.ops, graph order) writing `stores`: the ops'
// inputs not produced among them become inputs, `stores` (those produced among them) the
// outputs, the other op outputs intermediates; tensors no op touches are dropped. An Error for
// an op index out of range or no ops.
Expected<Problem> sub_problem(const Problem& problem, const std::vector<size_t>& ops,
                              const std::vector<std::string>& stores);

// compute_bounds of sub_problem(problem, ops, stores) on `ceilings`.
Expected<Bounds> kernel_bounds(const Problem& problem, const std::vector<size_t>& ops,
                               const std::vector<std::string>& stores, const Ceilings& ceilings);

}  // namespace kforge
