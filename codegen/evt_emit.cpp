// emit_evt: see evt_emit.h.
#include "codegen/evt_emit.h"

#include <algorithm>
#include <map>

namespace kforge::codegen {
namespace {

struct Node {
    std::string type;  // a type name usable as an EVT child
    std::string args;  // its Arguments initializer
};

int tensor_index(const GemmSpec& spec, const std::string& name) {
    auto it = std::find(spec.tensor_order.begin(), spec.tensor_order.end(), name);
    return static_cast<int>(it - spec.tensor_order.begin());
}

std::string ptr(const GemmSpec& spec, const std::string& name, DType d, bool is_const = true) {
    return "static_cast<" + std::string(is_const ? "const " : "") + cutlass_type(d) + "*>(" +
           "tensors[" + std::to_string(tensor_index(spec, name)) + "])";
}

// A leaf reading a chain operand tensor.
Node leaf(const GemmSpec& spec, const EpiStep& s, EvtFamily fam) {
    std::string t = cutlass_type(s.dtype);
    std::string p = ptr(spec, s.tensor, s.dtype);
    bool sm90 = fam == EvtFamily::kSm90;
    std::string ns = sm90 ? "cutlass::epilogue::fusion::" : "cutlass::epilogue::threadblock::";
    switch (s.broadcast) {
        case Broadcast::kScalar:
            if (sm90)
                return {ns + "Sm90ScalarBroadcast<" + t + ", Stride<_0, _0, int64_t>>",
                        "{{" + t + "(0)}, {" + p + "}, {}}"};
            return {ns + "VisitorScalarBroadcast<" + t + ", Stride<_0, _0, _0>>",
                    "{{" + t + "(0)}, {" + p + "}, {}}"};
        case Broadcast::kRow:
            if (sm90)
                return {ns + "Sm90RowBroadcast<0, TileShape, " + t +
                            ", ElementCompute, Stride<_0, _1, int64_t>>",
                        "{" + p + ", " + t + "(0), {_0{}, _1{}, int64_t(0)}}"};
            return {ns + "VisitorRowBroadcast<OutputTileThreadMap, " + t +
                        ", Stride<_0, _1, int32_t>>",
                    "{" + p + ", " + t + "(0), {_0{}, _1{}, int32_t(0)}}"};
        case Broadcast::kCol:
            if (sm90)
                return {ns + "Sm90ColBroadcast<0, TileShape, " + t +
                            ", ElementCompute, Stride<_1, _0, int64_t>>",
                        "{" + p + ", " + t + "(0), {_1{}, _0{}, int64_t(0)}}"};
            return {ns + "VisitorColBroadcast<OutputTileThreadMap, " + t +
                        ", Stride<_1, _0, int32_t>>",
                    "{" + p + ", " + t + "(0), {_1{}, _0{}, int32_t(0)}}"};
        case Broadcast::kMatrix: {
            if (sm90) return {ns + "Sm90SrcFetch<" + t + ">", "{}"};  // C of the collective
            std::string l_stride = s.batched ? "M * N" : "int64_t(0)";
            return {ns + "VisitorAuxLoad<OutputTileThreadMap, " + t +
                        ", Stride<int64_t, _1, int64_t>>",
                    "{const_cast<" + t + "*>(" + p + "), " + t + "(0), {N, _1{}, " + l_stride +
                        "}}"};
        }
    }
    return {};
}

}  // namespace

Expected<EvtCode> emit_evt(const GemmSpec& spec, EvtFamily fam) {
    bool sm90 = fam == EvtFamily::kSm90;
    std::string ns = sm90 ? "cutlass::epilogue::fusion::" : "cutlass::epilogue::threadblock::";
    std::string evt = sm90 ? ns + "Sm90EVT" : ns + "Sm80EVT";
    std::string compute = sm90 ? ns + "Sm90Compute" : ns + "VisitorCompute";
    std::string types;
    Node cur{sm90 ? ns + "Sm90AccFetch" : ns + "VisitorAccFetch", "{}"};
    bool cur_is_d = false;  // whether `cur` yields ElementD
    std::map<std::string, Node> named;  // `let` names -> the subtree that computed the value
    int n = 0;
    // Wraps `cur` in a compute node; `out` is its output element type. `operand` is its second
    // child, or its first where `operand_first` (rsub, rdiv).
    auto wrap = [&](const std::string& fn, const std::string& out, const Node* operand,
                    bool operand_first = false) {
        std::string name = "Evt" + std::to_string(n++);
        const Node* first = operand && operand_first ? operand : &cur;
        const Node* second = operand && operand_first ? &cur : operand;
        types += "using " + name + " = " + evt + "<\n    " + compute + "<" + fn + ", " + out +
                 ", ElementCompute, RoundStyle>,\n    " + first->type;
        if (second) types += ",\n    " + second->type;
        types += ">;\n";
        cur = Node{name, "{" + first->args + ", " + (second ? second->args + ", " : "") + "{}}"};
        cur_is_d = out == "ElementD";
    };
    // The D value: the last compute converts to ElementD (sm90 stores what the root yields),
    // unless a `use` after it makes another node the value.
    int last_compute = -1;
    for (size_t i = 0; i + 1 < spec.steps.size(); ++i) {
        const EpiStepKind k = spec.steps[i].kind;
        if (k == EpiStepKind::kUse) last_compute = -1;
        else if (k != EpiStepKind::kStore && k != EpiStepKind::kLet)
            last_compute = static_cast<int>(i);
    }
    for (size_t i = 0; i < spec.steps.size(); ++i) {
        const EpiStep& s = spec.steps[i];
        std::string out = static_cast<int>(i) == last_compute ? "ElementD" : "ElementCompute";
        switch (s.kind) {
            case EpiStepKind::kCutlassUnary: wrap(s.functor, out, nullptr); break;
            case EpiStepKind::kScalarUnary: {
                std::string f = "Op" + std::to_string(i);
                types += "struct " + f + " {\n    CUTLASS_DEVICE float operator()(float x) const "
                         "{ return " + s.expr + "; }\n};\n";
                types += "template <class T> using " + f + "Fn = kforge_cutlass::ScalarApply<" +
                         f + ", T>;\n";
                wrap(f + "Fn", out, nullptr);
                break;
            }
            case EpiStepKind::kBinaryTensor: {
                Node l = leaf(spec, s, fam);
                wrap(s.functor, out, &l, s.reversed);
                break;
            }
            case EpiStepKind::kBinaryNamed: {
                // A DAG as a tree: the named value's subtree is repeated here (element-wise
                // recompute from the same accumulator fragment; no extra memory traffic).
                auto it = named.find(s.name);
                if (it == named.end())
                    return make_error(spec.kernel, s.name + " is not bound by an earlier `let`");
                const Node operand = it->second;
                wrap(s.functor, out, &operand, s.reversed);
                break;
            }
            case EpiStepKind::kLet:
                named[s.name] = cur;
                break;
            case EpiStepKind::kUse: {
                auto it = named.find(s.name);
                if (it == named.end())
                    return make_error(spec.kernel, s.name + " is not bound by an earlier `let`");
                cur = it->second;
                cur_is_d = false;
                break;
            }
            case EpiStepKind::kCast:
                // Round to the cast dtype; the next node converts back to ElementCompute.
                wrap("cutlass::epilogue::thread::Identity",
                     out == "ElementD" ? out : cutlass_type(s.dtype), nullptr);
                break;
            case EpiStepKind::kStore:
                if (!cur_is_d) wrap("cutlass::epilogue::thread::Identity", "ElementD", nullptr);
                if (!sm90) {
                    std::string name = "Evt" + std::to_string(n++);
                    types += "using " + name + " = " + evt + "<\n    " + ns +
                             "VisitorAuxStore<OutputTileThreadMap, ElementD, RoundStyle, "
                             "Stride<int64_t, _1, int64_t>>,\n    " + cur.type + ">;\n";
                    cur = Node{name, "{" + cur.args + ", {" + ptr(spec, spec.d, spec.dtype_d,
                                                                   false) +
                                         ", {N, _1{}, M * N}}}"};
                }
                break;
        }
    }
    types += "using Evt = " + cur.type + ";\n";
    return EvtCode{types, cur.args};
}

}  // namespace kforge::codegen
