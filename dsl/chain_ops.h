// The chain statements and row ops of the kernel language, as data: the parser reads the
// argument form from here, and the reference card is generated from the same rows.
#pragma once

#include <string_view>
#include <vector>

#include "dsl/ast.h"

namespace kforge::dsl {

enum class ChainArgs {
    kTensorOrNumber,  // add b[N] | add 1.5 | add x (a value named by `let x`)
    kNone,            // relu
    kOptionalNumber,  // leaky_relu [slope], filled with the default
    kGeluApprox,      // gelu [erf|tanh]
    kSoftplus,        // softplus [beta threshold]
    kTwoNumbers,      // clamp lo hi
    kOneNumber,       // min c
    kDType,           // cast bf16
    kTensor,          // store Y[M,N]
    kReduce,          // reduce sum over N -> S[M]
    kName,            // let x | use x
    kMaskThenOperand, // masked_fill M[..] 1.5 | masked_fill M[..] t
};

struct ChainOpSpec {
    std::string_view name;
    ChainOpKind kind;
    ChainArgs args;
    std::vector<double> defaults;  // numbers filled in when omitted (kOptionalNumber, kSoftplus)
    std::string_view syntax;       // as the reference card shows it
    std::string_view doc;
};

// Every chain statement, in ChainOpKind order.
const std::vector<ChainOpSpec>& chain_op_table();
const ChainOpSpec* find_chain_op(std::string_view name);

struct RowOpSpec {
    std::string_view name;
    RowOp op;
    int max_args;                  // input tensor plus optional weight and bias
    std::string_view doc;
};

const std::vector<RowOpSpec>& row_op_table();
const RowOpSpec* find_row_op(std::string_view name);

}  // namespace kforge::dsl
