#include "dsl/reference_card.h"

#include "dsl/chain_ops.h"
#include "dsl/knobs.h"

namespace kforge::dsl {
namespace {

constexpr std::string_view kGrammar = R"(## Grammar
```
program := 'program' NAME 'for' "problem_name" kernel+
kernel  := 'kernel' NAME '=' head knob* '{' stmt (';' stmt)* [';'] '}'
head    := 'gemm' '(' A ',' B ')' | 'rowwise' ROWOP '(' X [',' weight [',' bias]] ')' ['pre' '{' stmt (';' stmt)* '}'] | 'map' '(' X ')' | 'conv2d' '(' X[N,C,H,W] ',' Wt[K,C,R,S] ')' | 'pool' POOLOP '(' X[N,C,..] ')' | 'attention' '(' Q ',' K ',' V [',' M] ')' | 'copy' SHAPEOP '(' X [',' X]* ')' | 'rnn' ('lstm'|'gru') '(' x ',' h0 [',' c0] ')'
tensor  := NAME '[' [dim (',' dim)*] ']'     dim := a problem dim name | integer;  scalar: alpha[]
```
`#` starts a comment. Tensors carry the problem's dim names: a gemm contracts the dim its two
operands share and the output lacks (`W[N,K]` is a K-major B); batched gemm has a leading dim on
both operands (`A[B,M,K]`, `Bm[B,K,N]`). A tensor that is neither a problem input nor output is
an intermediate; its first `store` defines it. The chain starts from the gemm accumulator, the
row op's result, or the map's input, as f32. Math tf32 on a Hopper schedule reads operands only
K-major: an MN-major operand (`B[K,N]`) is first copied K-major by a staging pre-kernel (one
read and one write of that operand). Math tf32x3 (3xTF32, fp32-accurate, for fp32_strict) on a
Hopper schedule stages both operands as tf32 hi/lo parts (one GEMM over K' = 3K) and keeps a
second fp32 accumulator, so the tile's accumulator must fit twice: cooperative up to 128x192
(128x128x32 cluster 2x1 is the fastest measured), pingpong and tma_ws up to 64x192 or 128x96.
A value used more than once stays in one kernel: `let t` names the value, `add t` (any binary
statement) reads it as the operand, `use t` makes it the value again. Names are local to their
kernel, bound once, and differ from every tensor's name. `rowwise sum|mean|max|min(X[..]) pre { .. }` applies
element-wise statements to each element before it is reduced (no store or cast): `rowwise sum(A[M,K]) pre { mul B[K,N] }` is a matvec.
`conv2d(X[N,C,H,W], Wt[K,C,R,S])` is the problem's conv2d op (stride, padding, dilation are the op's) as an implicit GEMM (M = N*P*Q,
N = K, K = C*R*S; `schedule multistage` or `tma_ws`), or with `schedule direct math f32_simt` as one direct f32 FMA kernel for few channels
(C*R*S up to ~256; tile M positions x N filters x K channels a step); its chain runs over the output [N,K,P,Q]: the bias is `add b[K]`.
`pool max|avg|adaptive_avg|adaptive_max(X[N,C,..])` is the problem's pool op of that kind reading X
(its attributes are the op's); the chain runs on each pooled value over the op's output [N,C,..].
`attention(Q[..,S,E], K[..,L,E], V[..,L,F] [, M[..,S,L]])` is softmax(Q K^T * scale, masked) V in one
kernel (a bool M fills -inf where true, a float M is added); the chain runs on O[..,S,F].
`copy reshape|expand|permute|slice|cat|pad(X0[..] [, X1[..] ..])` is the problem's shape op of that
kind reading exactly those tensors, in order (its attributes are the op's: `copy cat(A[N,C1,H,W],
B[N,C2,H,W])` writes each input into its slice of the output); the chain runs on each moved value
over the op's output (cast, element-wise statements, store).
)";

constexpr std::string_view kExamples = R"(## Examples
```
program gemm_bias_relu for "gemm_bias_relu_bf16_8192"
kernel k0 = gemm(X[M,K], W[N,K]) tile 128x256x64 cluster 2x1 schedule cooperative math bf16
    { add b[N]; relu; cast bf16; store Y[M,N] }
```
```
program linear_logsumexp for "linear_logsumexp_f32"
kernel k0 = gemm(X[M,K], W[N,K]) tile 128x128x32 schedule multistage math tf32x3
    { add b[N]; store T[M,N] }
kernel k1 = rowwise logsumexp(T[M,N]) threads 256 vec 4 online { store Y[M] }
```
```
program scale_residual for "gemm_scale_residual_bf16"   # y = x * 0.5 + x, x = X W^T
kernel k0 = gemm(X[M,K], W[N,K]) { let x; mul 0.5; add x; cast bf16; store Y[M,N] }
```
```
program softsign for "softsign_f32"                      # y = x / (1 + |x|)
kernel k0 = map(X[R,C]) { let x; abs; add 1; rdiv x; store Y[R,C] }
```
```
program conv_relu for "conv2d_bias_relu_f32"            # y = relu(conv2d(x, w) + b)
kernel k0 = conv2d(X[N,C,H,W], Wt[K,C,R,S]) tile 128x64x32 stages 3 math tf32x3
    { add b[K]; relu; store Y[N,K,P,Q] }
```
)";

std::string values_text(const KnobSpec& s) {
    switch (s.kind) {
        case KnobValueKind::kFlag: return "flag (no value)";
        case KnobValueKind::kDim: return "a dim name (or several joined by commas)";
        case KnobValueKind::kNumber: return "a positive number";
        case KnobValueKind::kWord: {
            std::string out;
            for (size_t i = 0; i < s.words.size(); ++i) {
                out += (i ? ", `" : "`") + std::string(s.words[i]) + "`";
            }
            return out;
        }
        case KnobValueKind::kIntOrAuto: return "`auto` or " + s.domains[0].describe();
        case KnobValueKind::kInts: break;
    }
    if (s.parts.empty()) return s.domains[0].describe();
    std::string out;
    for (size_t i = 0; i < s.parts.size(); ++i) {
        out += (i ? "; " : "") + std::string(s.parts[i]) + " " + s.domains[i].describe();
    }
    return out;
}

std::string knob_section(KernelKind kind) {
    std::string out = "\n### " + std::string(to_string(kind)) + " knobs\n| knob | values | default | meaning |\n"
                      "|---|---|---|---|\n";
    for (const KnobSpec& s : knob_table(kind)) {
        std::string form(s.name);
        if (!s.parts.empty()) {
            form += " ";
            for (size_t i = 0; i < s.parts.size(); ++i) form += (i ? "x" : "") + std::string(s.parts[i]);
        }
        out += "| `" + form + "` | " + values_text(s) + " | " + std::string(s.default_text) + " | " +
               std::string(s.doc) + " |\n";
    }
    return out;
}

}  // namespace

std::string reference_card() {
    std::string out = "# kforge kernel language: reference card\n\n";
    out += kGrammar;
    out += "\n## Chain statements (`;`-separated, applied in order, end with a `store`)\n";
    std::string unary;
    for (const ChainOpSpec& s : chain_op_table()) {
        if (s.args == ChainArgs::kNone) {
            unary += (unary.empty() ? "`" : ", `") + std::string(s.name) + "`";
            continue;
        }
        out += "- `" + std::string(s.syntax) + "`: " + std::string(s.doc) + "\n";
    }
    out += "- " + unary + ": element-wise, no arguments\n";
    out += "\n## Row ops (`rowwise OP(X[..] [, weight [, bias]])`)\n";
    for (const RowOpSpec& r : row_op_table()) {
        out += "- `" + std::string(r.name) + "`: " + std::string(r.doc) + "\n";
    }
    out += "\n## Knobs (written after the head in any order; each at most once)\n";
    out += knob_section(KernelKind::kGemm);
    out += knob_section(KernelKind::kRowwise);
    out += knob_section(KernelKind::kMap);
    out += knob_section(KernelKind::kConv2d);
    out += knob_section(KernelKind::kPool);
    out += knob_section(KernelKind::kAttention);
    out += knob_section(KernelKind::kCopy);
    out += knob_section(KernelKind::kRnn);
    out += "\n";
    out += kExamples;
    return out;
}

}  // namespace kforge::dsl
