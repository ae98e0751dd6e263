// The time model of an attention kernel (kernels/attention.cuh), priced like the other kinds in
// perfmodel/sim_model.cpp: both products' FLOPs on the tensor cores (16-bit operands) or the
// CUDA cores (f32) at the efficiency of a WMMA kernel that stages its accumulator in shared
// memory, against Q and O once plus K and V once per query tile (L2 holds them after the first
// tile: DRAM once, the rest at L2 rate). `impl cutlass_fmha` (CUTLASS's Hopper FMHA) at its own
// tensor-core efficiency and query tile, the ping-pong schedule persistent (no last-wave loss);
// `impl cutlass_mea` (CUTLASS's memory-efficient attention) at its own, with the f32 accumulator
// of O read and written once a key tile where the head dims pass its key tile.
#pragma once

#include "common/expected.h"
#include "dsl/ast.h"
#include "perfmodel/sim_model.h"
#include "problem/problem.h"
#include "sol/calibration.h"

namespace kforge::perfmodel {

Expected<SimKernelTime> attention_time(const dsl::Kernel& k, const Problem& problem,
                                       const Ceilings& ceil, int sm_count);

}  // namespace kforge::perfmodel
