#include "dsl/printer.h"

#include <charconv>

#include "common/hash.h"
#include "dsl/chain_ops.h"
#include "dsl/knobs.h"

namespace kforge::dsl {

std::string dims_text(const std::vector<std::string>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + dims[i];
    return s + "]";
}

std::string format_number(double v) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::string("0");
}

namespace {

std::string tensor_text(const TensorRef& t) { return t.name + dims_text(t.dims); }

std::string knob_text(const KnobSpec& spec, const KnobValue& v) {
    std::string s(spec.name);
    switch (spec.kind) {
        case KnobValueKind::kFlag:
            return s;
        case KnobValueKind::kInts:
        case KnobValueKind::kIntOrAuto:
            if (!v.word.empty()) return s + " " + v.word;
            s += " ";
            for (size_t i = 0; i < v.ints.size(); ++i) s += (i ? "x" : "") + std::to_string(v.ints[i]);
            return s;
        case KnobValueKind::kWord:
        case KnobValueKind::kDim:
            return s + " " + v.word;
        case KnobValueKind::kNumber:
            return s + " " + format_number(v.number);
    }
    return s;
}

std::string statement_text(const ChainOp& op) {
    std::string s(to_string(op.kind));
    const ChainOpSpec* spec = find_chain_op(s);
    switch (spec ? spec->args : ChainArgs::kNone) {
        case ChainArgs::kGeluApprox:
            return s + (op.gelu == GeluApprox::kTanh ? " tanh" : " erf");
        case ChainArgs::kDType:
            return s + " " + std::string(value_dtype_name(op.cast_to));
        case ChainArgs::kMaskThenOperand:  // the mask first: masked_fill M[..] 1.5 | t
            if (op.tensor) s += " " + tensor_text(*op.tensor);
            for (double d : op.numbers) s += " " + format_number(d);
            if (!op.name.empty()) s += " " + op.name;
            return s;
        case ChainArgs::kReduce:
            s += " " + std::string(to_string(op.reduce)) + " over " + op.reduce_over + " ->";
            break;
        default:
            break;
    }
    for (double d : op.numbers) s += " " + format_number(d);
    if (op.tensor) s += " " + tensor_text(*op.tensor);
    if (!op.name.empty()) s += " " + op.name;  // let t, use t, add t
    return s;
}

std::string header_text(const Kernel& k) {
    std::string s = "kernel " + k.name + " = " + std::string(to_string(k.kind));
    if (k.kind == KernelKind::kRowwise) s += " " + std::string(to_string(k.row_op));
    if (k.kind == KernelKind::kPool) s += " " + std::string(pool_word(k.pool_op));
    if (k.kind == KernelKind::kCopy) s += " " + std::string(to_string(k.copy_op));
    if (k.kind == KernelKind::kRnn) s += " " + std::string(to_string(k.rnn_op));
    s += "(";
    for (size_t i = 0; i < k.args.size(); ++i) s += (i ? ", " : "") + tensor_text(k.args[i]);
    s += ")";
    if (!k.pre.empty()) {
        s += " pre {";
        for (size_t i = 0; i < k.pre.size(); ++i) s += (i ? "; " : " ") + statement_text(k.pre[i]);
        s += " }";
    }
    for (const KnobSpec& spec : knob_table(k.kind)) {
        if (std::optional<KnobValue> v = spec.read(k)) s += " " + knob_text(spec, *v);
    }
    return s;
}

}  // namespace

std::string print_canonical(const Program& p) {
    std::string out = "program " + p.name + " for \"" + p.problem + "\"\n";
    for (const Kernel& k : p.kernels) {
        out += header_text(k) + "\n    {";
        for (size_t i = 0; i < k.chain.size(); ++i) {
            out += (i ? "; " : " ") + statement_text(k.chain[i]);
        }
        out += " }\n";
    }
    return out;
}

std::string program_hash(const Program& p) { return sha256_hex(print_canonical(p)); }

}  // namespace kforge::dsl
