// The checker's side of rnn kernels (`rnn lstm(x[..], h0[..], c0[..])`): the expression node of
// a problem's lstm / gru op, which the problem and an rnn kernel build alike, the op a kernel
// computes, and the legality of its knobs.
#pragma once

#include <optional>
#include <vector>

#include "dsl/check_internal.h"
#include "dsl/check_sem_kernel.h"
#include "problem/rnn.h"

namespace kforge::dsl {

// The node of recurrent op `op` over the values `in` of all its operands (x, h0, [c0], the
// weights, in the op's order): its operands joined into one node, then the op (its attributes
// as numbers) with the output's dims.
int rnn_node(ExprGraph& g, const std::vector<int>& in, const Op& op, const Problem& problem,
             const Origin& origin);

// The problem's lstm / gru op that rnn kernel `kernel` computes: of its kind, reading its args
// as x, h0 (and c0), the one its store names where several match; nullptr (and an error) where
// there is none.
const Op* rnn_kernel_op(const Problem& problem, const Kernel& kernel, Reporter& reporter);

// The value of rnn kernel `kernel` (kernel index k): its args read, the weights read from the
// problem's params by name, the op's node; nullopt where something did not resolve (reported).
std::optional<int> rnn_kernel_expr(Sem& sem, const Kernel& kernel, int k);

// threads, units, the chain (one store), f32 operands, the CTAs resident at once (the persistent
// recurrent kernel's grid barrier needs every CTA on the device) and the shared memory a CTA holds.
void check_legality_rnn(const Kernel& kernel, const Problem& problem, const DeviceLimits& limits,
                        Reporter& reporter);

}  // namespace kforge::dsl
