// The chain of one kernel: `{ stmt; stmt; ... }`, argument forms from dsl/chain_ops.h.
#include "dsl/chain_ops.h"
#include "dsl/parser_internal.h"

namespace kforge::dsl::detail {
namespace {

std::vector<std::string_view> chain_op_names() {
    std::vector<std::string_view> names;
    for (const ChainOpSpec& s : chain_op_table()) names.push_back(s.name);
    return names;
}

}  // namespace

Status Parser::chain(Kernel& k) { return chain_into(k.chain, "the chain"); }

Status Parser::chain_into(std::vector<ChainOp>& out, std::string_view what) {
    if (Expected<Token> t = expect_punct('{', "to open " + std::string(what)); !t) return t.error();
    while (true) {
        const std::string expect = "a chain statement (add, relu, cast, store, ...)";
        if (peek().kind != TokenKind::kIdent) return expected(expect);
        const ChainOpSpec* spec = find_chain_op(peek().text);
        if (!spec) return expected(expect, did_you_mean(peek().text, chain_op_names()));
        if (static_cast<int>(out.size()) == kMaxChainOps) {
            return error_at(peek(), "more than " + std::to_string(kMaxChainOps) + " chain statements");
        }
        Token name = take();
        ChainOp op;
        op.kind = spec->kind;
        op.loc = name.loc;
        if (Status s = chain_args(*spec, op); !s) return s.error();
        out.push_back(std::move(op));
        if (at_punct(';')) take();
        else if (!at_punct('}')) return expected("';' or '}' after the statement");
        if (at_punct('}')) break;
    }
    take();
    return Ok{};
}

Status Parser::chain_args(const ChainOpSpec& spec, ChainOp& op) {
    std::string name(spec.name);
    auto numbers = [&](size_t count, std::string_view what) -> Status {
        for (size_t i = 0; i < count; ++i) {
            if (!at_number()) return expected(name + ": " + std::string(what));
            Expected<double> d = number(take());
            if (!d) return d.error();
            op.numbers.push_back(*d);
        }
        return Ok{};
    };
    switch (spec.args) {
        case ChainArgs::kNone:
            return Ok{};
        case ChainArgs::kTensorOrNumber:
            if (at_number()) return numbers(1, "a number");
            if (peek().kind != TokenKind::kIdent) {
                return expected(name + ": a tensor (e.g. b[N]), a number or a named value");
            }
            if (!(peek(1).kind == TokenKind::kPunct && peek(1).text == "[")) {
                op.name_loc = peek().loc;
                op.name = std::string(take().text);  // a named value (`let`), checked later
                return Ok{};
            }
            break;  // the tensor, below
        case ChainArgs::kMaskThenOperand: {
            Expected<TensorRef> m = tensor(name + ": a bool mask tensor (e.g. M[R,C])");
            if (!m) return m.error();
            op.tensor = std::move(*m);
            if (at_number()) return numbers(1, "a number");
            if (peek().kind != TokenKind::kIdent || (peek(1).kind == TokenKind::kPunct && peek(1).text == "["))
                return expected(name + ": a number or a named value after the mask");
            op.name_loc = peek().loc;
            op.name = std::string(take().text);
            return Ok{};
        }
        case ChainArgs::kName:
            if (peek().kind != TokenKind::kIdent) return expected(name + ": a name (e.g. let x)");
            op.name_loc = peek().loc;
            op.name = std::string(take().text);
            return Ok{};
        case ChainArgs::kOptionalNumber:
            if (at_number()) return numbers(1, "a number");
            op.numbers = spec.defaults;
            return Ok{};
        case ChainArgs::kSoftplus:
            if (!at_number()) {
                op.numbers = spec.defaults;
                return Ok{};
            }
            return numbers(2, "beta and threshold, or neither (defaults 1 20)");
        case ChainArgs::kTwoNumbers:
            return numbers(2, "two numbers (lo hi)");
        case ChainArgs::kOneNumber:
            return numbers(1, "a number");
        case ChainArgs::kGeluApprox:
            if (peek().kind != TokenKind::kIdent) return Ok{};  // default erf
            if (peek().text == "erf" || peek().text == "tanh") {
                op.gelu = take().text == "tanh" ? GeluApprox::kTanh : GeluApprox::kErf;
                return Ok{};
            }
            return expected("gelu: erf or tanh", did_you_mean(peek().text, {"erf", "tanh"}));
        case ChainArgs::kDType: {
            std::optional<DType> d;
            if (peek().kind == TokenKind::kIdent) d = value_dtype_from_string(peek().text);
            if (!d) {
                std::string hint = peek().kind == TokenKind::kIdent
                                       ? did_you_mean(peek().text, {"f32", "f16", "bf16"})
                                       : "";
                return expected("cast: f32, f16 or bf16", hint);
            }
            take();
            op.cast_to = *d;
            return Ok{};
        }
        case ChainArgs::kTensor:
            break;
        case ChainArgs::kReduce: {
            std::optional<ReduceKind> r;
            if (peek().kind == TokenKind::kIdent) r = reduce_kind_from_string(peek().text);
            if (!r) return expected("reduce: sum, max, min or mean");
            take();
            op.reduce = *r;
            if (!at_ident("over")) return expected("reduce: 'over' and a dim (reduce sum over N -> S[M])");
            take();
            if (peek().kind != TokenKind::kIdent) return expected("reduce: a dim name after 'over'");
            op.reduce_over = std::string(take().text);
            if (peek().kind != TokenKind::kArrow) return expected("reduce: '->' and the target tensor");
            take();
            break;
        }
    }
    Expected<TensorRef> t = tensor(name + ": a tensor");
    if (!t) return t.error();
    op.tensor = std::move(*t);
    return Ok{};
}

}  // namespace kforge::dsl::detail
