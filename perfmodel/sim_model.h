// The analytic time model of the simulated device: a deterministic estimate of a program's
// kernel time on a device table entry, so the search, statistics and reports have plausible,
// structured times without a GPU. Never a measurement; everything it feeds is labelled
// "(simulated)".
//
// Per kernel of the program, in launch order, plus kSimLaunchOverheadNs each:
//   gemm     M, N from the first store (batch = its leading dims), K from operand A. Tiles
//            ceil(M/tile_m) * ceil(N/tile_n) * batch run in waves over the SMs; wave
//            quantization efficiency = tiles / (waves * sm_count). Pipeline efficiency by
//            stages (1: 0.55, 2: 0.75, 3: 0.88, >= 4 or auto: 0.93); tile efficiency
//            min(1, tile_m * tile_n / 128^2)^0.25. Matrix FLOPs run on the unit the math mode
//            (else the policy) selects; 3xTF32 at a third of the TF32 peak; schedule
//            multistage (mma.sync) on a wgmma device at 0.6 of the peak. Time = max(compute,
//            memory) with memory = operands + epilogue tensors + stores at DRAM bandwidth.
//            Operands staged by a pre-kernel (codegen/gemm_stage.h: tf32x3 and MN-major tf32
//            on the Hopper schedules) add its traffic (read once, k_parts copies written) at
//            DRAM bandwidth plus one launch overhead each, and the GEMM reads the copies.
//   conv2d   the problem's conv2d op that reads the kernel's input and weight gives the shapes;
//            its four launches (stage x to NHWC with C padded to Cp, stage w, the implicit
//            GEMM M = N*P*Q, N = Kp, K = R*S*Cp, the chain's epilogue from an f32 workspace):
//            the GEMM as a gemm's (tiles, waves, stages, tile efficiency; mma.sync multistage
//            at 0.6 of the peak on a wgmma device), the other three as DRAM streams with a
//            launch overhead each.
//   rowwise, map   bytes read (arguments and chain tensors) + bytes written (stores) at DRAM
//            bandwidth times a vector-width efficiency (vec 1: 0.55, 2: 0.72, 4: 0.86, >= 8:
//            0.9); two-pass row-wise reads its input twice. Compute: the busier of the SIMT pipe
//            (the statements' instructions, perfmodel/chain_cost.h) and the SFU.
// Instructions: every kernel's statements (a gemm's or conv2d's epilogue too) are priced with
// the one instruction table, sol/op_cost.h, on the ceilings' arch (Ceilings::arch), the table
// the SOL bounds use, so the model and the bound count the same per-element work (before, a map
// kernel cost ~4 + statements FLOPs per element: problems/mish_softplus_chain_f32 ran 263 us
// against a 320.5 us bound, "121.7% of SOL").
// Floor: the model never beats the speed of light of the same problem on the same ceilings
// (sol/bounds.h compute_bounds): a program cheaper than the table's count of the problem's ops
// (a cheaper formula) is priced at T_sol, since the model cannot know it is faster; the
// simulated device keeps every noisy sample at or above it too.
// Pseudo-noise: sample i of a program gets a factor 1 + ~1% from a hash of (program hash, i), so
// the statistics code sees a spread; kSlow multiplies by 50 (the device applies that).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/expected.h"
#include "dsl/ast.h"
#include "problem/problem.h"
#include "sol/calibration.h"

namespace kforge::perfmodel {

inline constexpr double kSimLaunchOverheadNs = 3000.0;

struct SimKernelTime {
    std::string kernel;
    dsl::KernelKind kind = dsl::KernelKind::kMap;  // the program's kernel of that name
    double time_ns = 0;
    double flops = 0;
    double bytes = 0;
    bool compute_bound = false;
};

struct SimEstimate {
    double time_ns = 0;  // sum over kernels, overheads included, no noise; >= time_sol_ns
    double time_kernels_ns = 0;  // the sum before the floor
    double time_sol_ns = 0;      // the problem's T_sol on the same ceilings (0: no bounds)
    bool floored_at_sol = false;  // time_ns was raised to time_sol_ns
    std::vector<SimKernelTime> kernels;
};

// The noiseless model time of `program` (checked against `problem`) on `ceilings` with
// `sm_count` SMs. An Error when a tensor or dim the program names is unknown.
Expected<SimEstimate> model_time(const Problem& problem, const dsl::Program& program,
                                 const Ceilings& ceilings, int sm_count);

// The deterministic noise factor (mean ~1, spread ~1%) of sample `index` under `key`.
double sim_noise_factor(const std::string& key, int64_t index);

}  // namespace kforge::perfmodel
