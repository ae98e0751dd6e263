// Speed-of-light (SOL) bounds of a problem on a device under a precision policy, the SOL score,
// headroom and the gaming threshold. Pure functions of the work count (problem/work.h) and the
// ceilings (sol/calibration.h).
//
// Compute time: matrix FLOPs (matmul, linear, conv2d's implicit GEMM) at the peak of the unit the
// policy allows (matrix_unit()), all other FLOPs at the fp32 SIMT peak. Each unit's busy time is its FLOPs / its peak; tensor
// cores and CUDA cores run concurrently, so the compute time is the busiest unit's (a GEMM's
// bf16 tensor time and its epilogue's SIMT time overlap; fp32_strict matrix FLOPs share the
// SIMT unit with the epilogue and add up).
//   fp32_strict -> the faster of fp32 SIMT and 3xTF32 (three tf32 products per fp32 one, which
//                  the policy allows: tf32x3 in the language): a 4096^3 fp32 matmul on an H200
//                  3 x 1.374e11 / 494.7e12 = 0.83 ms, not 1.374e11 / 67e12 = 2.05 ms on SIMT
//                  (kforge's 3xTF32 ran 1.21 ms on the H200: "196% of SOL" against SIMT)
//   tf32        -> tf32 tensor (same matmul: 1.374e11 / 494.7e12 = 0.278 ms)
//   bf16, fp16  -> bf16 / fp16 tensor; f64 operands -> fp64 tensor where present, else fp64 SIMT
// A unit the device lacks falls back to fp32 SIMT (fp64 tensor: fp64 SIMT).
//
// SIMT and SFU: element-wise and row ops run on two more pipes, counted per op from SASS
// (sol/op_cost.h: what kforge's generated CUDA executes per element on the ceilings' arch, so
// the bound of one problem differs between archs where the SASS does). The fp32 SIMT busy time
// of an op is the larger of its nominal FLOPs at the fp32 peak and its non-MUFU arithmetic
// instructions at half that rate (one issue slot per instruction: the 128 fp32 lanes of an
// H100/H200 SM finish 128 instructions or 256 FLOPs per clock). The SFU busy time is its MUFU
// instructions at Ceilings::sfu_ops_per_s (16 per clock per SM: 1/8 of the FMA rate). Tensor
// cores, SIMT and SFU are separate pipes and overlap: compute time = the busiest of them. An
// accurate expf/tanhf/log1pf costs 7-25 SIMT instructions beside its MUFU, so a
// transcendental-heavy chain is SIMT-bound (problems/mish_softplus_chain_f32 on the H200: 80
// instructions and 4 MUFU per element, SIMT 0.32 ms > memory 0.22 ms > SFU 0.13 ms).
//
// fp32_strict and 3xTF32: the kernel language may compute fp32 products as three TF32 passes
// (3xTF32, fp32-accurate). The SOL bound T_sol stays on the fp32 SIMT peak (the conventional
// fp32 roofline), but the *floor* used for the gaming threshold is the fastest legal way,
// min(fp32 SIMT time, 3 x tf32 time), so a legitimate 3xTF32 kernel beating the SIMT roofline
// is not flagged as gaming. time_compute_floor_s holds that floor.
//
// Memory time: bytes / DRAM bandwidth. Bounds:
//   fused    T_sol = max(compute, bytes_fused / bw): one ideal kernel for the whole graph.
//   unfused  sum over ops of max(op compute, op bytes / bw): one ideal kernel per op, every
//            intermediate through DRAM. This per-op roofline is >= the aggregate
//            max(compute, bytes_unfused / bw) and is what an unfused eager baseline can reach
//            at best, so it is the one reported.
// Gaming threshold: gaming_factor x max(compute floor, bytes_fused / bw), both on the physical
// ceilings. The compute floor counts nominal FLOPs only, never the SFU time nor the SASS
// instruction counts: a legitimate kernel may compute exp with FMA polynomials instead of MUFU,
// or use cheaper approximations within the tolerance, so what kforge's accurate code executes
// is no floor for every legitimate kernel; the floor stays where it was before the SFU term
// (Ceilings::physical_*: the larger of datasheet and calibration, since a calibrated ceiling is
// what cuBLAS or a copy reached, which a good kernel may beat). A time below it is physically
// implausible (default factor 0.9 leaves 10% for clock and measurement noise).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "problem/problem.h"
#include "problem/work.h"
#include "sol/calibration.h"

namespace kforge {

enum class BoundKind { kCompute, kMemory };
std::string_view to_string(BoundKind k);
std::optional<BoundKind> bound_kind_from_string(std::string_view s);

inline constexpr double kDefaultGamingFactor = 0.9;

struct BoundsOptions {
    std::optional<PrecisionPolicy> policy;        // overrides the problem's own policy
    double gaming_factor = kDefaultGamingFactor;  // in (0, 1]
};

struct OpBound {
    std::string output;
    ComputeUnit matrix_unit = ComputeUnit::kFp32Simt;
    double time_compute_s = 0.0;  // busiest of its matrix unit, fp32 SIMT and SFU
    double time_simt_s = 0.0;     // fp32 SIMT busy time (nominal FLOPs or instructions)
    double time_sfu_s = 0.0;      // MUFU instructions at the SFU rate
    double time_memory_s = 0.0;
    double time_s = 0.0;  // max of compute and memory
};

struct Bounds {
    std::string device;
    std::string ceilings_source;
    std::string arch;  // the instruction table's column the SIMT and SFU terms read (op_cost.h)
    PrecisionPolicy policy = PrecisionPolicy::kFp32Strict;
    ComputeUnit matrix_unit = ComputeUnit::kFp32Simt;  // of the first matrix op (or fp32 SIMT)
    bool matrix_tf32x3 = false;  // that op's FLOPs run as 3xTF32 (three tf32 FLOPs each)
    WorkCount work;
    double time_compute_s = 0.0;        // busiest of tensor, fp32 SIMT and SFU
    double time_simt_s = 0.0;           // fp32 SIMT busy time, whole graph
    double time_sfu_s = 0.0;            // SFU busy time, whole graph
    double instructions_simt = 0.0;     // non-MUFU arithmetic instructions of the ops in the
                                        // op_cost table (0 for the others)
    double instructions_sfu = 0.0;      // MUFU instructions
    std::string compute_unit;           // the busiest: to_string(ComputeUnit) or "sfu"
    double time_compute_floor_s = 0.0;  // physical ceilings, 3xTF32 allowed (see above)
    double time_memory_floor_s = 0.0;   // bytes_fused at the physical bandwidth
    double time_memory_fused_s = 0.0;
    double time_memory_unfused_s = 0.0;
    double time_fused_s = 0.0;            // T_sol
    double time_unfused_s = 0.0;          // per-op roofline sum
    BoundKind kind = BoundKind::kMemory;  // what limits time_fused_s
    double arithmetic_intensity = 0.0;    // FLOPs / bytes_fused
    double gaming_threshold_s = 0.0;
    std::vector<OpBound> per_op;
};

// The unit that matrix FLOPs on `operand` dtype run on under `policy` (before device fallback).
ComputeUnit matrix_unit(PrecisionPolicy policy, DType operand);

// Matrix FLOPs per second of `bounds`' matrix unit on `ceilings` (a third of tf32 for 3xTF32).
double matrix_peak(const Bounds& bounds, const Ceilings& ceilings);

// Bounds of a validated problem. Errors: bad gaming factor, missing bandwidth or fp32 peak,
// work-count errors.
Expected<Bounds> compute_bounds(const Problem& problem, const Ceilings& ceilings,
                                const BoundsOptions& options = {});

// SOL score S = 1 / (1 + (T - T_sol) / (T_base - T_sol)): 1 at T_sol, 0.5 at T_base, towards 0
// as T grows; above 1 when T < T_sol (check gaming). T_base is a baseline time (the unfused
// bound or a measured PyTorch time) and must exceed T_sol. Error for non-positive times, for
// T_base <= T_sol and for T so far below T_sol that the formula breaks down (T <= 2 T_sol -
// T_base).
Expected<double> sol_score(double time_s, double time_sol_s, double time_base_s);

// T / T_sol (>= 1 unless suspicious): how far a time is from the speed of light.
double headroom(double time_s, const Bounds& bounds);

// True when a measured time lies below the gaming threshold.
bool below_gaming_threshold(double time_s, const Bounds& bounds);

// What the anti-gaming gate makes of a measured or modelled time (one rule for a GPU and the
// simulated device): at or above T_sol plausible; under T_sol but not below the gaming threshold
// under the bound (flagged, shown as 100% of SOL: sol/sol_share.h); below the threshold
// implausible (the candidate is flagged as gaming).
enum class SolVerdict { kPlausible, kUnderBound, kBelowGamingThreshold };
std::string_view to_string(SolVerdict v);
SolVerdict judge_time(double time_s, const Bounds& bounds);

}  // namespace kforge
