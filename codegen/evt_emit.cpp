// emit_evt: see evt_emit.h.
#include "codegen/evt_emit.h"

#include <algorithm>

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
    int n = 0;
    // Wraps `cur` in a compute node; `out` is its output element type.
    auto wrap = [&](const std::string& fn, const std::string& out, const Node* operand) {
        std::string name = "Evt" + std::to_string(n++);
        types += "using " + name + " = " + evt + "<\n    " + compute + "<" + fn + ", " + out +
                 ", ElementCompute, RoundStyle>,\n    " + cur.type;
        if (operand) types += ",\n    " + operand->type;
        types += ">;\n";
        cur = Node{name, "{" + cur.args + ", " + (operand ? operand->args + ", " : "") + "{}}"};
    };
    // The D value: the last compute converts to ElementD (sm90 stores what the root yields).
    int last_compute = -1;
    for (size_t i = 0; i + 1 < spec.steps.size(); ++i)
        if (spec.steps[i].kind != EpiStepKind::kStore) last_compute = static_cast<int>(i);
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
                wrap(s.functor, out, &l);
                break;
            }
            case EpiStepKind::kCast:
                // Round to the cast dtype; the next node converts back to ElementCompute.
                wrap("cutlass::epilogue::thread::Identity",
                     out == "ElementD" ? out : cutlass_type(s.dtype), nullptr);
                break;
            case EpiStepKind::kStore:
                if (last_compute < 0) wrap("cutlass::epilogue::thread::Identity", "ElementD",
                                           nullptr);
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
