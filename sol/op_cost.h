// Instruction cost of an op as kforge's generated CUDA executes it: the MUFU instructions (the
// special function unit, SFU: ex2, lg2, rcp, rsqrt, sqrt, sin/cos, tanh.approx) and the other
// arithmetic instructions (FMA and ALU pipes: FFMA, FMUL, FADD, FSETP, FSEL, IADD3, LOP3, ...,
// one issue slot each) per element. The SOL bounds (sol/bounds.h) turn them into SFU and fp32
// SIMT busy times; the nominal FLOP counts of problem/work.h stay as they are.
//
// The table is counted from SASS (method and numbers in op_cost.cpp; sol/count_op_instructions.py
// redoes the count). An op kind the table does not know (a new OpKind, a matrix op) has no
// entry: it costs no SFU time and its SIMT time stays on its nominal FLOPs.
#pragma once

#include <optional>

#include "problem/problem.h"

namespace kforge {

// Per-element and per-row instruction counts of one op kind (with its attributes).
struct OpCost {
    bool per_input_element = false;  // elements counted on the input (row ops, reductions)
    double sfu_per_element = 0.0;    // MUFU instructions
    double simt_per_element = 0.0;   // other arithmetic instructions
    double sfu_per_row = 0.0;        // row ops: once per row (norm's rsqrt, softmax's 1/sum)
    double simt_per_row = 0.0;
};

// The table entry of `op` (its kind and the attributes that change the code: gelu's form,
// softplus's beta); nullopt for a kind the table does not know.
std::optional<OpCost> op_cost(const Op& op);

// Instructions of one op of a validated problem, all elements and rows together.
struct OpInstructions {
    double sfu = 0.0;
    double simt = 0.0;
};

// op_cost() applied to the op's element and row counts; nullopt when op_cost() has no entry
// or a tensor is missing.
std::optional<OpInstructions> count_op_instructions(const Problem& problem, const Op& op);

}  // namespace kforge
