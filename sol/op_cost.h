// Instruction cost of an op as kforge's generated CUDA executes it, per CUDA arch: the MUFU
// instructions (the special function unit, SFU: ex2, lg2, rcp, rsqrt, sqrt, sin/cos,
// tanh.approx) and the other arithmetic instructions (FMA and ALU pipes: FFMA, FMUL, FADD, FSETP,
// FSEL, IADD3, LOP3, ..., one issue slot each) per element. The one instruction model of kforge:
// the SOL bounds (sol/bounds.h) turn it into SFU and fp32 SIMT busy times, the simulated device's
// time model (perfmodel/sim_model.h) prices each kernel's chain with it, and the anti-gaming gate
// reads the bounds made from it. The nominal FLOP counts of problem/work.h stay as they are.
//
// The table is counted from SASS once per arch kforge compiles for (cuda_arch of sol/target.h:
// sm_80, sm_89, sm_90a, sm_100; method and numbers in op_cost.cpp; sol/count_op_instructions.py
// --arch redoes a column). An arch with no column of its own (none of the device table's) takes
// the sm_90a column, said by counted_arch(). An op kind the table does not know (a new OpKind,
// a matrix op) has no entry: it costs no SFU time and its SIMT time stays on its nominal FLOPs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "problem/problem.h"

namespace kforge {

// The arch whose column the table uses for `arch` (a cuda_arch() name): `arch` itself when it
// was counted, else "sm_90a" (also for an empty name).
std::string_view counted_arch(std::string_view arch);

// Per-element and per-row instruction counts of one op kind (with its attributes).
struct OpCost {
    bool per_input_element = false;  // elements counted on the input (row ops, reductions)
    double sfu_per_element = 0.0;    // MUFU instructions
    double simt_per_element = 0.0;   // other arithmetic instructions
    double sfu_per_row = 0.0;        // row ops: once per row (norm's rsqrt, softmax's 1/sum)
    double simt_per_row = 0.0;
};

// The table entry of `op` (its kind and the attributes that change the code: gelu's form,
// softplus's beta) on `arch`; nullopt for a kind the table does not know.
std::optional<OpCost> op_cost(const Op& op, std::string_view arch);

// A division of each element by the number `divisor` (the kernel language's `div c`): one FMUL
// when it is a power of two, else the IEEE division by a constant (no MUFU), on `arch`.
OpCost divide_by_number_cost(double divisor, std::string_view arch);

// Instructions of one op of a validated problem, all elements and rows together.
struct OpInstructions {
    double sfu = 0.0;
    double simt = 0.0;
};

// op_cost() applied to the op's element and row counts; nullopt when op_cost() has no entry
// or a tensor is missing.
std::optional<OpInstructions> count_op_instructions(const Problem& problem, const Op& op,
                                                    std::string_view arch);

}  // namespace kforge
