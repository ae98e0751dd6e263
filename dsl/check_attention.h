// The checker's attention pieces (dsl/check_attention.cpp). Internal to the checker.
#pragma once

#include <optional>

#include "dsl/check_sem_kernel.h"

namespace kforge::dsl {

// The node attention kernel `kn` (kernel index `k`) computes: contract(Q, K over E) [* scale]
// [masked_fill M / + M], softmax over L, contract with V over L; nullopt (and an error) where
// its operands do not resolve or their dims do not fit Q[..,S,E], K[..,L,E], V[..,L,F].
std::optional<int> attention_expr(Sem& sem, const Kernel& kn, int k);

// The node of masked_fill(X, structured mask, value) over X's last two dims `rows`, `cols`
// (problem/problem.h TriMask): one form for the problem's op, an attention kernel's causal mask
// and a rowwise tril / triu kernel computing it.
int tri_fill_node(ExprGraph& g, int x, TriMask mask, int64_t diagonal, double value,
                  const std::string& rows, const std::string& cols, const Origin& o);

// Its tile on the device: 16..128 in steps of 16 each way, the shared memory of
// dsl/attention.h within the device's opt-in limit.
void check_legality_attention(const Kernel& kn, const Problem& problem,
                              const DeviceLimits& limits, Reporter& rep);

}  // namespace kforge::dsl
