// The time model of an rnn kernel (kernels/rnn.cuh, codegen/lower_rnn.cpp), priced like the
// other kinds in perfmodel/sim_model.cpp. Per layer: the input projection's FLOPs on the CUDA
// cores at a tiled SIMT kernel's efficiency (its operands once from DRAM), then T steps of the
// persistent kernel, each a latency chain: h_{t-1} staged from L2, the gate sums (ceil(B*G*units
// / threads) passes of an H-long dependent FMA chain over shared memory), the cell update and
// the grid barrier (an arrival counter in L2 and the spin that sees the last arrival). The
// constants are estimates until the GPU benchmark (bench/rnn/run.sh) measures them.
#pragma once

#include "common/expected.h"
#include "dsl/ast.h"
#include "perfmodel/sim_model.h"
#include "problem/problem.h"
#include "sol/calibration.h"

namespace kforge::perfmodel {

// Seconds of one recurrent step's fixed parts (staging from L2, the barrier's round trips).
inline constexpr double kRnnStepStageS = 0.6e-6;
inline constexpr double kRnnStepBarrierS = 1.2e-6;
inline constexpr double kRnnCoreClockHz = 1.75e9;  // H100/H200 under load
inline constexpr double kRnnCyclesPerFma = 4.0;    // the gate sum's dependent chain
inline constexpr double kRnnProjectionEfficiency = 0.35;  // of the fp32 SIMT peak

Expected<SimKernelTime> rnn_time(const dsl::Kernel& k, const Problem& problem,
                                 const Ceilings& ceil);

}  // namespace kforge::perfmodel
