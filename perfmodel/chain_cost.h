// The instructions a kernel's element-wise statements execute, priced with the one instruction
// table (sol/op_cost.h) on the ceilings' arch, so the simulated device's time and the SOL bound
// of the same problem count the same work: a chain's `mish` costs what the problem's mish op
// costs in the bound. Row ops (softmax, norms, reductions) are priced as the problem's op that
// the kernel computes (count_op_instructions), with its rows.
#pragma once

#include <string_view>

#include "dsl/ast.h"
#include "problem/problem.h"
#include "sol/op_cost.h"

namespace kforge::perfmodel {

// Per element of the value a chain runs on: the sum of its statements' table entries (add,
// sub, mul, rsub and a reduce's accumulate: 1 instruction; div by a tensor or rdiv: an IEEE
// division; div by a number: divide_by_number_cost; min / max with a number: the scalar select,
// with a tensor or a named value: maximum; cast, store, let and use: nothing).
OpInstructions chain_instructions_per_element(const std::vector<dsl::ChainOp>& chain,
                                              std::string_view arch);

// Instructions of kernel `k`'s statements over its whole value space: the prologue `pre` per
// element of the first argument (`elements_in`), the chain per element of its value
// (`elements_out`), and for a rowwise kernel its row op, priced as the problem's op of that kind
// that reads the kernel's first argument (all its elements and rows) where there is one, else per
// element of `elements_in` without the per-row terms.
OpInstructions kernel_instructions(const dsl::Kernel& k, const Problem& problem,
                                   double elements_in, double elements_out,
                                   std::string_view arch);

}  // namespace kforge::perfmodel
