#include "perfmodel/chain_cost.h"

#include <optional>

namespace kforge::perfmodel {
namespace {

using K = dsl::ChainOpKind;

std::optional<OpKind> unary_kind(K k) {
    switch (k) {
        case K::kRelu: return OpKind::kRelu;
        case K::kLeakyRelu: return OpKind::kLeakyRelu;
        case K::kGelu: return OpKind::kGelu;
        case K::kSilu: return OpKind::kSilu;
        case K::kSigmoid: return OpKind::kSigmoid;
        case K::kTanh: return OpKind::kTanh;
        case K::kMish: return OpKind::kMish;
        case K::kSoftplus: return OpKind::kSoftplus;
        case K::kExp: return OpKind::kExp;
        case K::kLog: return OpKind::kLog;
        case K::kNeg: return OpKind::kNeg;
        case K::kAbs: return OpKind::kAbs;
        case K::kSqrt: return OpKind::kSqrt;
        case K::kRsqrt: return OpKind::kRsqrt;
        case K::kSquare: return OpKind::kSquare;
        case K::kErf: return OpKind::kErf;
        case K::kLog1p: return OpKind::kLog1p;
        case K::kExpm1: return OpKind::kExpm1;
        case K::kSin: return OpKind::kSin;
        case K::kCos: return OpKind::kCos;
        case K::kSign: return OpKind::kSign;
        case K::kReciprocal: return OpKind::kReciprocal;
        case K::kClamp: return OpKind::kClamp;
        default: return std::nullopt;
    }
}

// The problem op a chain statement executes as (its kind and the attributes that change the
// code), or nullopt for a statement the table prices apart or not at all.
std::optional<Op> as_op(const dsl::ChainOp& c) {
    const bool number = !c.tensor && c.name.empty() && !c.numbers.empty();
    Op op{};
    switch (c.kind) {
        case K::kAdd:
        case K::kSub:
        case K::kMul:
        case K::kRsub:
        case K::kReduce: op.kind = OpKind::kAdd; return op;
        case K::kRdiv: op.kind = OpKind::kDiv; return op;
        case K::kDiv:
            if (number) return std::nullopt;  // divide_by_number_cost
            op.kind = OpKind::kDiv;
            return op;
        case K::kMin: op.kind = number ? OpKind::kMinScalar : OpKind::kMinimum; return op;
        case K::kMax: op.kind = number ? OpKind::kMaxScalar : OpKind::kMaximum; return op;
        case K::kMaskedFill: op.kind = OpKind::kMaxScalar; return op;  // a compare and select
        default: break;
    }
    const auto kind = unary_kind(c.kind);
    if (!kind) return std::nullopt;  // cast, store, let, use
    op.kind = *kind;
    op.attrs.gelu = c.gelu;
    if (c.kind == K::kSoftplus && !c.numbers.empty()) op.attrs.beta = c.numbers[0];
    return op;
}

std::optional<OpKind> row_kind(dsl::RowOp r) {
    switch (r) {
        case dsl::RowOp::kSoftmax: return OpKind::kSoftmax;
        case dsl::RowOp::kLogSoftmax: return OpKind::kLogSoftmax;
        case dsl::RowOp::kLogsumexp: return OpKind::kLogsumexp;
        case dsl::RowOp::kLayerNorm: return OpKind::kLayerNorm;
        case dsl::RowOp::kRmsNorm: return OpKind::kRmsNorm;
        case dsl::RowOp::kGroupNorm: return OpKind::kGroupNorm;
        case dsl::RowOp::kSum: return OpKind::kSum;
        case dsl::RowOp::kMean: return OpKind::kMean;
        case dsl::RowOp::kMax: return OpKind::kMax;
        case dsl::RowOp::kMin: return OpKind::kMin;
        case dsl::RowOp::kProd: return OpKind::kProd;
        case dsl::RowOp::kArgmax: return OpKind::kMax;       // a compare per element
        case dsl::RowOp::kArgmin: return OpKind::kMin;
        case dsl::RowOp::kCrossEntropy: return OpKind::kLogsumexp;  // max, exp, sum per logit
        default: return std::nullopt;  // normalize and scans: not in the table
    }
}

}  // namespace

OpInstructions chain_instructions_per_element(const std::vector<dsl::ChainOp>& chain,
                                              std::string_view arch) {
    OpInstructions sum;
    for (const dsl::ChainOp& c : chain) {
        std::optional<OpCost> cost;
        if (c.kind == K::kDiv && !c.tensor && c.name.empty() && !c.numbers.empty())
            cost = divide_by_number_cost(c.numbers[0], arch);
        else if (auto op = as_op(c))
            cost = op_cost(*op, arch);
        if (!cost) continue;
        sum.sfu += cost->sfu_per_element;
        sum.simt += cost->simt_per_element;
    }
    return sum;
}

OpInstructions kernel_instructions(const dsl::Kernel& k, const Problem& problem,
                                   double elements_in, double elements_out,
                                   std::string_view arch) {
    const OpInstructions pre = chain_instructions_per_element(k.pre, arch);
    const OpInstructions chain = chain_instructions_per_element(k.chain, arch);
    OpInstructions total{pre.sfu * elements_in + chain.sfu * elements_out,
                         pre.simt * elements_in + chain.simt * elements_out};
    if (k.kind != dsl::KernelKind::kRowwise) return total;
    const auto kind = row_kind(k.row_op);
    if (!kind) return total;
    for (const Op& op : problem.ops) {
        if (op.kind != *kind || op.inputs.empty() || k.args.empty() ||
            op.inputs.front() != k.args.front().name)
            continue;
        if (auto ins = count_op_instructions(problem, op, arch)) {
            total.sfu += ins->sfu;
            total.simt += ins->simt;
            return total;
        }
    }
    Op op{};
    op.kind = *kind;
    if (auto cost = op_cost(op, arch)) {
        total.sfu += cost->sfu_per_element * elements_in;
        total.simt += cost->simt_per_element * elements_in;
    }
    return total;
}

}  // namespace kforge::perfmodel
