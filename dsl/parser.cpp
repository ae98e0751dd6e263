#include "dsl/parser.h"

#include <charconv>

#include "dsl/chain_ops.h"
#include "dsl/diagnostic.h"
#include "dsl/parser_internal.h"

namespace kforge::dsl {
namespace detail {

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& names) {
    std::string best = closest_name(word, names);
    return best.empty() ? std::string() : "; did you mean '" + best + "'?";
}

const Token& Parser::peek(size_t ahead) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
}

Token Parser::take() {
    Token t = peek();
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
}

bool Parser::at_punct(char c) const {
    return peek().kind == TokenKind::kPunct && peek().text[0] == c;
}

bool Parser::at_ident(std::string_view word) const {
    return peek().kind == TokenKind::kIdent && peek().text == word;
}

bool Parser::at_number() const {
    return peek().kind == TokenKind::kInt || peek().kind == TokenKind::kFloat;
}

Error Parser::error_at(const Token& t, std::string message) const {
    return source_error(source_, file_, t.loc, t.length, std::move(message));
}

Error Parser::expected(std::string_view what, std::string_view hint) const {
    return error_at(peek(), "expected " + std::string(what) + ", got " + describe(peek()) +
                                std::string(hint));
}

Expected<Token> Parser::expect_punct(char c, std::string_view context) {
    if (!at_punct(c)) return expected("'" + std::string(1, c) + "' " + std::string(context));
    return take();
}

Expected<double> Parser::number(const Token& t) const {
    std::string_view s = t.text;
    if (!s.empty() && s[0] == '+') s.remove_prefix(1);
    double v = 0.0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) {
        return error_at(t, "number " + describe(t) + " is out of range");
    }
    return v;
}

Expected<int64_t> Parser::integer(const Token& t) const {
    if (t.kind != TokenKind::kInt || t.text[0] == '-' || t.text[0] == '+') {
        return error_at(t, "expected an unsigned integer, got " + describe(t));
    }
    int64_t v = 0;
    auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || end != t.text.data() + t.text.size()) {
        return error_at(t, "integer " + describe(t) + " is out of range");
    }
    return v;
}

Expected<TensorRef> Parser::tensor(std::string_view role) {
    if (peek().kind != TokenKind::kIdent) return expected(std::string(role) + " (NAME[dims], e.g. X[M,K])");
    Token name = take();
    TensorRef t{std::string(name.text), {}, name.loc};
    if (!at_punct('[')) {
        std::string n = clip_text(t.name);
        return expected("'[' after tensor name '" + n + "' (a tensor is written with its dims: " + n +
                        "[M,K], or " + n + "[] for a scalar)");
    }
    take();
    if (at_punct(']')) {
        take();
        return t;
    }
    while (true) {
        if (static_cast<int>(t.dims.size()) == kMaxDims) {
            return error_at(peek(), "tensor '" + clip_text(t.name) + "' has more than " +
                                        std::to_string(kMaxDims) + " dims");
        }
        if (peek().kind == TokenKind::kIdent) {
            t.dims.emplace_back(take().text);
        } else if (peek().kind == TokenKind::kInt) {
            Expected<int64_t> v = integer(peek());
            if (!v) return v.error();
            take();
            t.dims.push_back(std::to_string(*v));
        } else {
            return expected("a dim (a name such as M, or an integer) in tensor '" + clip_text(t.name) + "'");
        }
        if (at_punct(']')) break;
        if (!at_punct(',')) return expected("',' or ']' in the dims of tensor '" + clip_text(t.name) + "'");
        take();
    }
    take();
    return t;
}

Expected<Program> Parser::program() {
    Program p;
    if (!at_ident("program")) return expected("'program' at the start of the program");
    p.loc = take().loc;
    if (peek().kind != TokenKind::kIdent) return expected("the program name after 'program'");
    p.name = std::string(take().text);
    if (!at_ident("for")) return expected("'for' and the problem name after the program name");
    take();
    if (peek().kind != TokenKind::kString) {
        return expected("the problem name as a string (\"...\") after 'for'");
    }
    p.problem = std::string(take().text);
    while (at_ident("kernel")) {
        if (static_cast<int>(p.kernels.size()) == kMaxKernels) {
            return error_at(peek(), "more than " + std::to_string(kMaxKernels) + " kernels");
        }
        if (Status s = kernel(p); !s) return s.error();
    }
    if (p.kernels.empty() || peek().kind != TokenKind::kEnd) {
        std::string hint;
        if (peek().kind == TokenKind::kIdent) hint = did_you_mean(peek().text, {"kernel"});
        return expected(p.kernels.empty() ? "'kernel'" : "'kernel' or end of input", hint);
    }
    return p;
}

Status Parser::kernel(Program& p) {
    Kernel k;
    k.loc = take().loc;  // 'kernel'
    if (peek().kind != TokenKind::kIdent) return expected("the kernel name after 'kernel'");
    Token name = take();
    k.name = std::string(name.text);
    for (const Kernel& other : p.kernels) {
        if (other.name == k.name) {
            return error_at(name, "kernel '" + clip_text(k.name) + "' is already defined at " +
                                      std::to_string(other.loc.line) + ":" +
                                      std::to_string(other.loc.col));
        }
    }
    if (Expected<Token> t = expect_punct('=', "after the kernel name"); !t) return t.error();
    if (Status s = head(k); !s) return s.error();
    if (at_ident("pre")) {  // rowwise: the element-wise prologue, `pre { mul B[K] }`
        if (k.kind != KernelKind::kRowwise) {
            return error_at(peek(), "`pre { .. }` (an element-wise prologue) belongs to a rowwise "
                                    "sum, mean, max or min kernel; a " +
                                        std::string(to_string(k.kind)) + " kernel has none");
        }
        take();
        if (Status s = chain_into(k.pre, "the prologue after 'pre'"); !s) return s.error();
    }
    if (Status s = knobs(k); !s) return s.error();
    if (Status s = chain(k); !s) return s.error();
    p.kernels.push_back(std::move(k));
    return Ok{};
}

Status Parser::head(Kernel& k) {
    static const std::vector<std::string_view> kinds = {"gemm", "rowwise", "map", "conv2d", "pool",
                                                        "attention", "copy", "rnn"};
    std::optional<KernelKind> kind;
    if (peek().kind == TokenKind::kIdent) kind = kernel_kind_from_string(peek().text);
    if (!kind) {
        std::string hint = peek().kind == TokenKind::kIdent ? did_you_mean(peek().text, kinds) : "";
        return expected("a kernel kind (gemm, rowwise, map, conv2d, pool, attention, copy, rnn)", hint);
    }
    take();
    k.kind = *kind;
    if (k.kind == KernelKind::kConv2d) k.gemm = conv2d_default_config();
    size_t max_args = 1;
    if (k.kind == KernelKind::kRowwise) {
        std::vector<std::string_view> names;
        for (const RowOpSpec& r : row_op_table()) names.push_back(r.name);
        const RowOpSpec* spec = peek().kind == TokenKind::kIdent ? find_row_op(peek().text) : nullptr;
        if (!spec) {
            std::string hint = peek().kind == TokenKind::kIdent ? did_you_mean(peek().text, names) : "";
            return expected("a row op (softmax, log_softmax, logsumexp, layer_norm, rms_norm, "
                            "group_norm, sum, mean, max, min, prod, l1_normalize, l2_normalize, cumsum, "
                            "cumprod)", hint);
        }
        take();
        k.row_op = spec->op;
        max_args = static_cast<size_t>(spec->max_args);
    }
    if (k.kind == KernelKind::kPool) {  // pool max|avg|adaptive_avg|adaptive_max (X[N,C,..])
        std::optional<OpKind> op;
        if (peek().kind == TokenKind::kIdent) op = pool_op_from_word(peek().text);
        if (!op) {
            std::string hint = peek().kind == TokenKind::kIdent
                                   ? did_you_mean(peek().text, {"max", "avg", "adaptive_avg",
                                                                "adaptive_max"})
                                   : "";
            return expected("a pool op (max, avg, adaptive_avg, adaptive_max)", hint);
        }
        take();
        k.pool_op = *op;
    }
    if (k.kind == KernelKind::kCopy) {  // copy reshape|expand|permute|slice|cat|pad (X0[..], ..)
        std::optional<OpKind> op;
        if (peek().kind == TokenKind::kIdent) op = copy_op_from_word(peek().text);
        if (!op) {
            std::string hint = peek().kind == TokenKind::kIdent
                                   ? did_you_mean(peek().text, {"reshape", "expand", "permute",
                                                                "slice", "cat", "pad"})
                                   : "";
            return expected("a shape op (reshape, expand, permute, slice, cat, pad)", hint);
        }
        take();
        k.copy_op = *op;
    }
    if (k.kind == KernelKind::kRnn) {  // rnn lstm|gru (x[..], h0[..] [, c0[..]])
        std::optional<OpKind> op = op_from_string(peek().kind == TokenKind::kIdent ? peek().text : "");
        if (!op || (*op != OpKind::kLstm && *op != OpKind::kGru)) {
            std::string hint = peek().kind == TokenKind::kIdent
                                   ? did_you_mean(peek().text, {"lstm", "gru"}) : "";
            return expected("a recurrent op (lstm, gru)", hint);
        }
        take();
        k.rnn_op = *op;
    }
    std::string kind_name(to_string(k.kind));
    if (Expected<Token> t = expect_punct('(', "after '" + kind_name + "'"); !t) return t.error();
    const bool two = k.kind == KernelKind::kGemm || k.kind == KernelKind::kConv2d;
    size_t want = two ? 2 : k.kind == KernelKind::kAttention ? 3 : 1;
    while (true) {
        Expected<TensorRef> t =
            k.kind == KernelKind::kConv2d
                ? tensor(k.args.empty() ? "the input tensor (X[N,C,H,W])" : "the weight (Wt[K,C,R,S])")
                : tensor(k.args.empty() ? "the input tensor" : "a tensor");
        if (!t) return t.error();
        k.args.push_back(std::move(*t));
        if (at_punct(')')) break;
        if (k.args.size() < want || (k.kind == KernelKind::kRowwise && k.args.size() < max_args) ||
            (k.kind == KernelKind::kCopy && k.copy_op == OpKind::kCat && k.args.size() < 64) ||
            (k.kind == KernelKind::kAttention && k.args.size() < 4) ||
            (k.kind == KernelKind::kRnn && k.args.size() < (k.rnn_op == OpKind::kLstm ? 3u : 2u))) {
            if (Expected<Token> c = expect_punct(',', "between tensors"); !c) return c.error();
            continue;
        }
        return expected("')': " + kind_name + " takes " +
                        (k.kind == KernelKind::kRowwise && max_args > 1
                             ? "at most " + std::to_string(max_args) + " tensors (input, weight, bias)"
                             : k.kind == KernelKind::kAttention
                             ? "Q, K, V and at most one mask (4 tensors)"
                             : std::to_string(want) + (want == 1 ? " tensor" : " tensors")));
    }
    if (k.args.size() < want && k.kind == KernelKind::kAttention)
        return expected("',' and a tensor: attention takes Q[..,S,E], K[..,L,E], V[..,L,F] and an "
                        "optional mask M[..,S,L]");
    if (k.args.size() < want) {
        return expected(k.kind == KernelKind::kConv2d
                            ? "',' and the weight: conv2d takes 2 tensors (X[N,C,H,W], Wt[K,C,R,S])"
                            : "',' and the B operand: gemm takes 2 tensors (A, B)");
    }
    if (k.kind == KernelKind::kConv2d) {
        // 4 dims each, or 3 each for a conv1d op (run as a conv2d with H = 1), 5 for a conv3d
        const size_t r0 = k.args[0].dims.size();
        const size_t rank = (r0 == 3 || r0 == 5) && k.args[1].dims.size() == r0 ? r0 : 4;
        for (size_t i = 0; i < 2; ++i) {
            if (k.args[i].dims.size() == rank) continue;
            const TensorRef& t = k.args[i];
            return source_error(source_, file_, t.loc, static_cast<int>(t.name.size()),
                                "conv2d " + std::string(i == 0 ? "input" : "weight") + " '" +
                                    clip_text(t.name) + "' has " + std::to_string(t.dims.size()) +
                                    " dims; conv2d takes " +
                                    (i == 0 ? "X[N,C,H,W] (NCHW)" : "Wt[K,C,R,S] (KCRS)"));
        }
    }
    for (size_t i = 0; k.kind == KernelKind::kAttention && i < k.args.size(); ++i) {
        const TensorRef& t = k.args[i];
        if (t.dims.size() >= 2) continue;
        return source_error(source_, file_, t.loc, static_cast<int>(t.name.size()),
                            "attention operand '" + clip_text(t.name) + "' has " +
                                std::to_string(t.dims.size()) +
                                " dims; attention takes [..,rows,cols] tensors of rank >= 2");
    }
    if (k.kind == KernelKind::kPool && (k.args[0].dims.size() < 3 || k.args[0].dims.size() > 5)) {
        const TensorRef& t = k.args[0];
        return source_error(source_, file_, t.loc, static_cast<int>(t.name.size()),
                            "pool input '" + clip_text(t.name) + "' has " +
                                std::to_string(t.dims.size()) +
                                " dims; pool takes X[N,C,L], X[N,C,H,W] or X[N,C,D,H,W]");
    }
    take();
    return Ok{};
}

}  // namespace detail

Expected<Program> parse_program(std::string_view text, std::string_view file_name) {
    Expected<std::vector<Token>> tokens = lex(text, file_name);
    if (!tokens) return tokens.error();
    return detail::Parser(text, file_name, std::move(*tokens)).program();
}

}  // namespace kforge::dsl
