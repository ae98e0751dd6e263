// Emission of element-wise chains as CUDA functors (see chain.h).
#include "codegen/chain.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "dsl/printer.h"

namespace kforge::codegen {
namespace {

std::string where_of(const dsl::SourceLoc& loc) {
    if (loc.line == 0) return "chain";
    return std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

using dsl::dims_text;

// Offset expression (in `e`, the space's linear index) of a tensor whose dims are matched to
// the space, plus whether V consecutive elements are contiguous in it (as a C++ constant
// expression of V).
struct Access {
    std::string offset;
    std::string contig;
};

Expected<Access> broadcast_access(const dsl::TensorRef& ref, const TensorInfo& info,
                                  const ChainSpace& space, const dsl::SourceLoc& loc) {
    const std::string where = where_of(loc);
    if (ref.dims.size() != info.shape.size()) {
        return make_error(where, "tensor " + ref.name + dims_text(ref.dims) + " has " +
                                     std::to_string(info.shape.size()) + " dims in the problem");
    }
    const int rank = int(space.dims.size());
    std::vector<int64_t> space_stride(rank, 1);
    for (int d = rank - 2; d >= 0; --d) space_stride[d] = space_stride[d + 1] * space.shape[d + 1];
    // runtime_shape: the same terms over the functor's size members d0, d1, ..
    const bool rt = space.runtime_shape;
    const auto rt_product = [](const std::vector<int>& dims) {
        std::string p;
        for (int d : dims) p += (p.empty() ? "" : " * ") + std::string("d") + std::to_string(d);
        return p.empty() ? std::string("1") : dims.size() == 1 ? p : "(" + p + ")";
    };
    std::vector<int> rt_stride_dims;  // the operand's matched dims inside the current one
    // Match right to left: each tensor dim to the nearest space dim of that name on the left of
    // the previous match.
    std::vector<std::string> terms;
    bool inner_contig = false;
    int next = rank - 1;
    int64_t stride = 1;
    for (int t = int(ref.dims.size()) - 1; t >= 0; --t) {
        const int64_t size = info.shape[t];
        // A literal 1 broadcasts and matches nothing: matched by name it would take the place
        // of a literal 1 of the space (a batch of 1 in y[1,K,P,Q]) and leave s[K,1,1]'s K
        // without its dim.
        if (ref.dims[t] == "1") continue;
        int d = next;
        while (d >= 0 && space.dims[d] != ref.dims[t]) --d;
        if (d < 0) {
            if (size == 1) continue;  // a literal or size-1 dim broadcasts
            return make_error(where, "tensor " + ref.name + dims_text(ref.dims) +
                                         " does not broadcast to " + dims_text(space.dims) +
                                         ": no dim " + ref.dims[t] + " to match");
        }
        if (size != space.shape[d] && size != 1) {
            return make_error(where, "tensor " + ref.name + " dim " + ref.dims[t] + " has size " +
                                         std::to_string(size) + ", expected " +
                                         std::to_string(space.shape[d]));
        }
        next = d - 1;
        if (rt) {
            // a size-1 operand dim against a larger space dim broadcasts at this shape only
            // when the dim is a literal; a named dim keeps its term (0 where its size is 1)
            if (size == 1 && space.shape[d] != 1) continue;
            std::vector<int> inner;
            for (int j = d + 1; j < rank; ++j) inner.push_back(j);
            std::string coord = "e";
            if (d != rank - 1) coord = "(" + coord + " / " + rt_product(inner) + ")";
            if (d != 0) coord = "(" + coord + " % d" + std::to_string(d) + ")";
            terms.push_back(rt_stride_dims.empty() ? coord : coord + " * " + rt_product(rt_stride_dims));
            rt_stride_dims.push_back(d);
            stride *= size;
            continue;
        }
        if (size == 1) continue;
        if (d == rank - 1 && stride == 1) inner_contig = true;
        std::string coord = "e";
        if (space_stride[d] != 1) coord = "(" + coord + " / " + std::to_string(space_stride[d]) + ")";
        if (d != 0) coord = "(" + coord + " % " + std::to_string(space.shape[d]) + ")";
        terms.push_back(stride == 1 ? coord : coord + " * " + std::to_string(stride));
        stride *= size;
    }
    if (rt) {
        Access a;
        a.offset = "int64_t(0)";
        for (size_t k = 0; k < terms.size(); ++k) a.offset = (k ? a.offset + " + " : "") + terms[k];
        a.contig = "false";
        return a;
    }
    Access a;
    if (terms.empty()) {
        a.offset = "int64_t(0)";
    } else if (stride == space.numel() && inner_contig && int(terms.size()) == rank) {
        a.offset = "e";  // same shape as the space
    } else {
        for (size_t k = 0; k < terms.size(); ++k) a.offset += (k ? " + " : "") + terms[k];
    }
    a.contig = inner_contig ? "(V == 1 || " + std::to_string(space.shape[rank - 1]) + " % V == 0)"
                            : "(V == 1)";
    return a;
}

std::string binary_symbol(dsl::ChainOpKind k) {
    switch (k) {
        case dsl::ChainOpKind::kAdd: return "+";
        case dsl::ChainOpKind::kSub:
        case dsl::ChainOpKind::kRsub: return "-";
        case dsl::ChainOpKind::kMul: return "*";
        default: return "/";
    }
}

double number_or(const dsl::ChainOp& op, size_t k, double fallback) {
    return op.numbers.size() > k ? op.numbers[k] : fallback;
}

// The expression of `x` after a unary statement; empty for statements that are not unary.
std::string unary_expr(const dsl::ChainOp& op, const std::string& x) {
    using K = dsl::ChainOpKind;
    const auto lit = [&](size_t k, double d) { return cuda_float_literal(number_or(op, k, d)); };
    switch (op.kind) {
        case K::kRelu: return "kforge::act_relu(" + x + ")";
        case K::kLeakyRelu: return "kforge::act_leaky_relu(" + x + ", " + lit(0, 0.01) + ")";
        case K::kGelu:
            return op.gelu == GeluApprox::kTanh ? "kforge::act_gelu_tanh(" + x + ")"
                                                : "kforge::act_gelu_erf(" + x + ")";
        case K::kSilu: return "kforge::act_silu(" + x + ")";
        case K::kSigmoid: return "kforge::act_sigmoid(" + x + ")";
        case K::kTanh: return "tanhf(" + x + ")";
        case K::kMish: return "kforge::act_mish(" + x + ")";
        case K::kSoftplus:
            return "kforge::act_softplus(" + x + ", " + lit(0, 1.0) + ", " + lit(1, 20.0) + ")";
        case K::kExp: return "expf(" + x + ")";
        case K::kLog: return "logf(" + x + ")";
        case K::kNeg: return "-" + x;
        case K::kAbs: return "fabsf(" + x + ")";
        case K::kSqrt: return "sqrtf(" + x + ")";
        case K::kRsqrt: return "rsqrtf(" + x + ")";
        case K::kSquare: return "kforge::act_square(" + x + ")";
        case K::kErf: return "erff(" + x + ")";
        case K::kLog1p: return "log1pf(" + x + ")";
        case K::kExpm1: return "expm1f(" + x + ")";
        case K::kSin: return "sinf(" + x + ")";
        case K::kCos: return "cosf(" + x + ")";
        case K::kSign: return "kforge::act_sign(" + x + ")";
        case K::kReciprocal: return "1.0f / " + x;
        case K::kClamp: return "kforge::act_clamp(" + x + ", " + lit(0, -1.0) + ", " + lit(1, 1.0) + ")";
        default: return "";
    }
}

}  // namespace

int64_t ChainSpace::numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
}

Expected<std::string> cuda_float_type(DType d, std::string_view where) {
    switch (d) {
        case DType::kF32: return std::string("float");
        case DType::kBF16: return std::string("__nv_bfloat16");
        case DType::kF16: return std::string("__half");
        default:
            return make_error(std::string(where),
                              "kforge's row-wise and element-wise kernels take f32, bf16 or f16 "
                              "tensors");
    }
}

Expected<std::string> chain_param_type(DType d, bool written, std::string_view where) {
    // a bool mask (1 byte, 0 or 1) is read as 0.0 / 1.0 (kernels/common.cuh: to_f32(bool))
    if (d == DType::kBool && !written) return std::string("bool");
    return cuda_float_type(d, where);
}

std::string cuda_float_literal(double v) {
    if (std::isnan(v)) return "NAN";
    if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s + "f";
}

const dsl::ChainOp* first_store(const std::vector<dsl::ChainOp>& chain) {
    for (const dsl::ChainOp& op : chain)
        if (op.kind == dsl::ChainOpKind::kStore && op.tensor) return &op;
    return nullptr;
}

Expected<ChainCode> emit_chain(std::string_view type_name, const std::vector<dsl::ChainOp>& chain,
                               const ChainSpace& space,
                               const std::optional<dsl::TensorRef>& input,
                               const LowerContext& ctx, bool needs_store) {
    ChainCode code;
    code.type_name = std::string(type_name);
    std::ostringstream loads, body;
    int slots = 1;
    bool stored = false;
    std::set<std::string> named;  // bound by `let` so far: register arrays n_<name>[V]

    const auto param_for = [&](const dsl::TensorRef& ref, bool written,
                               const dsl::SourceLoc& loc) -> Expected<const TensorInfo*> {
        auto it = ctx.tensors.find(ref.name);
        if (it == ctx.tensors.end()) {
            return make_error(where_of(loc), "unknown tensor " + ref.name);
        }
        auto type = chain_param_type(it->second.dtype, written,
                                     where_of(loc) + ": tensor " + ref.name);
        if (!type) return type.error();
        bool seen = false;
        for (ChainParam& p : code.params) {
            if (p.name == ref.name) seen = true, p.written = p.written || written;
        }
        if (!seen) code.params.push_back({ref.name, it->second.dtype, written});
        return &it->second;
    };
    const auto emit_load = [&](std::ostringstream& out, const dsl::TensorRef& ref, int slot,
                               const dsl::SourceLoc& loc) -> Status {
        auto info = param_for(ref, false, loc);
        if (!info) return info.error();
        auto access = broadcast_access(ref, **info, space, loc);
        if (!access) return access.error();
        out << "        kforge::load_bcast<V, " << access->contig << ">(s[" << slot << "], t_"
              << ref.name << ", i, [" << (space.runtime_shape ? "this" : "")
              << "](int64_t e) -> int64_t { return " << access->offset << "; });\n";
        return Ok{};
    };

    std::ostringstream input_load;
    if (input) {
        if (auto st = emit_load(input_load, *input, 0, input->loc); !st) return st.error();
    }

    for (const dsl::ChainOp& op : chain) {
        const std::string where = where_of(op.loc);
        using K = dsl::ChainOpKind;
        if (op.kind == K::kLoad) {  // the value is the tensor's element
            if (!op.tensor) return make_error(where, "load needs a tensor");
            if (auto st = emit_load(loads, *op.tensor, slots, op.loc); !st) return st.error();
            body << "        for (int j = 0; j < V; ++j) v[j] = s[" << slots++ << "][j];\n";
            continue;
        }
        if (op.kind == K::kMaskedFill) {  // M ? operand : value, M a bool mask read as 0 / 1
            if (!op.tensor) return make_error(where, "masked_fill needs a bool mask tensor");
            auto info = ctx.tensors.find(op.tensor->name);
            if (info != ctx.tensors.end() && info->second.dtype != DType::kBool)
                return make_error(where, "masked_fill: the mask " + op.tensor->name +
                                             " is not a bool tensor");
            if (auto st = emit_load(loads, *op.tensor, slots, op.loc); !st) return st.error();
            const std::string m = "s[" + std::to_string(slots++) + "][j]";
            std::string fill;
            if (!op.name.empty()) {
                if (!named.count(op.name))
                    return make_error(where, op.name + " is not bound by an earlier `let`");
                fill = "n_" + op.name + "[j]";
            } else if (!op.numbers.empty()) {
                fill = cuda_float_literal(op.numbers[0]);
            } else {
                return make_error(where, "masked_fill needs a number or a named value");
            }
            body << "        for (int j = 0; j < V; ++j) v[j] = " << m << " != 0.0f ? " << fill
                 << " : v[j];\n";
            continue;
        }
        if (dsl::is_binary(op.kind)) {
            std::string rhs;
            if (op.tensor) {
                if (auto st = emit_load(loads, *op.tensor, slots, op.loc); !st) return st.error();
                rhs = "s[" + std::to_string(slots++) + "][j]";
            } else if (!op.name.empty()) {
                if (!named.count(op.name))
                    return make_error(where, op.name + " is not bound by an earlier `let`");
                rhs = "n_" + op.name + "[j]";
            } else if (!op.numbers.empty()) {
                rhs = cuda_float_literal(op.numbers[0]);
            } else {
                return make_error(where, std::string(dsl::to_string(op.kind)) +
                                             " needs a tensor, a number or a named value");
            }
            const bool reversed = dsl::is_reversed(op.kind);
            std::string e;
            if (op.kind == K::kMin || op.kind == K::kMax)  // NaN from either side
                e = std::string(op.kind == K::kMin ? "kforge::min_nan(" : "kforge::max_nan(") +
                    "v[j], " + rhs + ")";
            else
                e = reversed ? rhs + " " + binary_symbol(op.kind) + " v[j]"
                             : "v[j] " + binary_symbol(op.kind) + " " + rhs;
            body << "        for (int j = 0; j < V; ++j) v[j] = " << e << ";\n";
        } else if (op.kind == K::kLet) {
            if (!named.insert(op.name).second)
                return make_error(where, op.name + " is bound twice in one chain");
            body << "        float n_" << op.name << "[V];\n"
                 << "        for (int j = 0; j < V; ++j) n_" << op.name << "[j] = v[j];\n";
        } else if (op.kind == K::kUse) {
            if (!named.count(op.name))
                return make_error(where, op.name + " is not bound by an earlier `let`");
            body << "        for (int j = 0; j < V; ++j) v[j] = n_" << op.name << "[j];\n";
        } else if (op.kind == K::kCast) {
            auto type = cuda_float_type(op.cast_to, where);
            if (!type) return type.error();
            body << "        for (int j = 0; j < V; ++j) v[j] = kforge::round_to<" << *type
                 << ">(v[j]);\n";
        } else if (op.kind == K::kStore) {
            if (!op.tensor) return make_error(where, "store needs a tensor");
            auto info = param_for(*op.tensor, true, op.loc);
            if (!info) return info.error();
            int64_t numel = 1;
            for (int64_t d : (*info)->shape) numel *= d;
            if (numel != space.numel()) {
                return make_error(where, "store " + op.tensor->name + ": " +
                                             std::to_string(numel) + " elements, but the value has " +
                                             std::to_string(space.numel()) + " (" +
                                             dims_text(space.dims) + ")");
            }
            body << "        kforge::store_vec<V>(t_" << op.tensor->name << " + i, v);\n";
            stored = true;
        } else if (op.kind == K::kReduce) {
            return make_error(where, "reduce is not supported in row-wise or map chains; use a "
                                     "rowwise sum/mean/max/min kernel");
        } else {
            const std::string e = unary_expr(op, "v[j]");
            if (e.empty()) return make_error(where, "unsupported chain statement");
            body << "        for (int j = 0; j < V; ++j) v[j] = " << e << ";\n";
        }
    }
    if (!stored && needs_store)
        return make_error("kernel", "the chain stores nothing; end it with store Y[..]");

    std::ostringstream s;
    s << "struct " << code.type_name << " {\n";
    s << "    static constexpr int kSlots = " << slots << ";\n";
    for (const ChainParam& p : code.params) {
        s << "    " << (p.written ? "" : "const ") << *chain_param_type(p.dtype, p.written, "")
          << "* __restrict__ t_" << p.name << ";\n";
    }
    if (space.runtime_shape) {
        code.runtime_dims = int(space.dims.size());
        for (size_t d = 0; d < space.dims.size(); ++d)
            s << "    int64_t d" << d << ";  // " << space.dims[d] << "\n";
    }
    s << "    template <int V> __device__ __forceinline__ bool aligned() const {\n"
      << "        return true";
    for (const ChainParam& p : code.params) s << " && kforge::is_aligned<V>(t_" << p.name << ")";
    s << ";\n    }\n";
    s << "    template <int V>\n"
      << "    __device__ __forceinline__ void load_operands(float (&s)[kSlots][V], int64_t i) "
         "const {\n"
      << loads.str() << "    }\n";
    if (input) {
        s << "    template <int V>\n"
          << "    __device__ __forceinline__ void load(float (&s)[kSlots][V], int64_t i) const {\n"
          << input_load.str() << "        load_operands<V>(s, i);\n    }\n";
    }
    s << "    template <int V>\n"
      << "    __device__ __forceinline__ void apply(float (&s)[kSlots][V], int64_t i) const {\n"
      << "        float (&v)[V] = s[0];\n"
      << body.str() << "    }\n";
    s << "    template <int V>\n"
      << "    __device__ __forceinline__ void run(const float (&in)[V], int64_t i) const {\n"
      << "        float s[kSlots][V];\n"
      << "        for (int j = 0; j < V; ++j) s[0][j] = in[j];\n"
      << "        load_operands<V>(s, i);\n"
      << "        apply<V>(s, i);\n    }\n";
    s << "};\n";
    code.definition = s.str();
    return code;
}

}  // namespace kforge::codegen
