// analyze_gemm: dsl::Kernel (gemm) -> GemmSpec. See gemm_spec.h.
#include "codegen/gemm_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "dsl/math_policy.h"

namespace kforge::codegen {
namespace {

Error unsupported(const dsl::Kernel& k, const dsl::SourceLoc& loc, const std::string& what) {
    std::string where = k.name;
    if (loc.line > 0) where += " (line " + std::to_string(loc.line) + ")";
    return make_error(where, "not supported by the CUTLASS lowering: " + what);
}

Error bad(const dsl::Kernel& k, const std::string& what) {
    return make_error(k.name, what);
}

// Dims with literal "1" entries dropped (a broadcast of size one is no dim).
std::vector<std::string> real_dims(const std::vector<std::string>& dims) {
    std::vector<std::string> out;
    for (const auto& d : dims)
        if (d != "1") out.push_back(d);
    return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

Expected<int64_t> dim_value(const LowerContext& ctx, const std::string& name) {
    auto it = ctx.problem->dims.find(name);
    if (it != ctx.problem->dims.end()) return it->second;
    char* end = nullptr;
    long long v = std::strtoll(name.c_str(), &end, 10);
    if (end && *end == '\0' && v > 0) return static_cast<int64_t>(v);
    return make_error("", "unknown dim \"" + name + "\"");
}

// The kernel's math on its operands (dsl/math_policy.h), or why the lowering cannot run it.
Expected<dsl::MathMode> gemm_math(const dsl::Kernel& k, DType a, DType b, PrecisionPolicy p) {
    const dsl::ResolvedMath r = dsl::resolve_math(p, a, b, k.gemm.math);
    const std::string m(math_name(r.math));
    switch (r.refusal) {
        case dsl::MathRefusal::kNone: return r.math;
        case dsl::MathRefusal::kOperandsDiffer:
            return unsupported(k, k.loc, std::string("operands of different dtypes (") +
                                             std::string(to_string(a)) + ", " +
                                             std::string(to_string(b)) + ")");
        case dsl::MathRefusal::kOperandDtype:
            return unsupported(k, k.loc, "operands of dtype " + std::string(to_string(a)));
        case dsl::MathRefusal::kNeedsItsDtype:
            return unsupported(k, k.loc, "math " + m + " on operands stored as " +
                                             std::string(to_string(a)) +
                                             " (operands are not converted in the mainloop)");
        case dsl::MathRefusal::kNotForHalf:
            return unsupported(k, k.loc, "math " + m + " on " + std::string(to_string(a)) +
                                             " operands");
    }
    return unsupported(k, k.loc, "math " + m);
}

// A scalar functor for an element-wise chain statement, or a CUTLASS activation.
Expected<EpiStep> unary_step(const dsl::Kernel& k, const dsl::ChainOp& op) {
    using K = dsl::ChainOpKind;
    EpiStep s;
    s.kind = EpiStepKind::kScalarUnary;
    auto num = [&](size_t i, double fallback) {
        return float_literal(i < op.numbers.size() ? op.numbers[i] : fallback);
    };
    auto cutlass_act = [&](const char* f) {
        s.kind = EpiStepKind::kCutlassUnary;
        s.functor = std::string("cutlass::epilogue::thread::") + f;
    };
    switch (op.kind) {
        case K::kAdd: s.expr = "x + " + num(0, 0); break;
        case K::kSub: s.expr = "x - " + num(0, 0); break;
        case K::kMul: s.expr = "x * " + num(0, 1); break;
        case K::kDiv: s.expr = "x / " + num(0, 1); break;
        case K::kRsub: s.expr = num(0, 0) + " - x"; break;
        case K::kRdiv: s.expr = num(0, 1) + " / x"; break;
        case K::kRelu: cutlass_act("ReLu"); break;
        case K::kLeakyRelu: s.expr = "x > 0.0f ? x : x * " + num(0, 0.01); break;
        // gelu erf, silu and sigmoid: SFU-based forms (kernels/act_approx.cuh, error <= ~3e-7
        // absolute) instead of CUTLASS's GELU (libdevice erff, ~33 instructions) and SiLu /
        // 1 / (1 + expf(-x)) (an IEEE division whose slow path is a CALL): a cooperative
        // epilogue does not overlap the mainloop, so its instructions add to the kernel time.
        case K::kGelu:
            if (op.gelu == GeluApprox::kTanh) cutlass_act("GELU_taylor");
            else s.expr = "kforge::act_gelu_erf_as28(x)";
            break;
        case K::kSilu: s.expr = "kforge::act_silu_ex2_rcp(x)"; break;
        case K::kSigmoid: s.expr = "kforge::act_sigmoid_ex2_rcp(x)"; break;
        case K::kTanh: s.expr = "tanhf(x)"; break;
        case K::kMish: s.expr = "x * tanhf(x > 20.0f ? x : log1pf(expf(x)))"; break;
        case K::kSoftplus: {
            std::string beta = num(0, 1.0), thr = num(1, 20.0);
            s.expr = "x * " + beta + " > " + thr + " ? x : log1pf(expf(x * " + beta + ")) / " +
                     beta;
            break;
        }
        case K::kExp: s.expr = "expf(x)"; break;
        case K::kLog: s.expr = "logf(x)"; break;
        case K::kNeg: s.expr = "-x"; break;
        case K::kAbs: s.expr = "fabsf(x)"; break;
        case K::kSqrt: s.expr = "sqrtf(x)"; break;
        case K::kRsqrt: s.expr = "rsqrtf(x)"; break;
        case K::kSquare: s.expr = "x * x"; break;
        case K::kErf: s.expr = "erff(x)"; break;
        case K::kLog1p: s.expr = "log1pf(x)"; break;
        case K::kExpm1: s.expr = "expm1f(x)"; break;
        case K::kSin: s.expr = "sinf(x)"; break;
        case K::kCos: s.expr = "cosf(x)"; break;
        case K::kSign: s.expr = "x != x ? x : float((x > 0.0f) - (x < 0.0f))"; break;
        case K::kReciprocal: s.expr = "1.0f / x"; break;
        case K::kClamp:
            if (op.numbers.size() != 2) return bad(k, "clamp takes two numbers (lo hi)");
            s.expr = "fminf(fmaxf(x, " + num(0, 0) + "), " + num(1, 0) + ")";
            break;
        case K::kMin: s.expr = "fminf(x, " + num(0, 0) + ")"; break;
        case K::kMax: s.expr = "fmaxf(x, " + num(0, 0) + ")"; break;
        default: return bad(k, "internal: not a unary chain statement");
    }
    return s;
}

const char* binary_functor(dsl::ChainOpKind kind) {
    switch (kind) {
        case dsl::ChainOpKind::kAdd: return "cutlass::plus";
        case dsl::ChainOpKind::kSub:
        case dsl::ChainOpKind::kRsub: return "cutlass::minus";
        case dsl::ChainOpKind::kMul: return "cutlass::multiplies";
        // with a tensor or named value; NaN from either side (max.NaN.f32 from sm_80)
        case dsl::ChainOpKind::kMax: return "cutlass::maximum_with_nan_propagation";
        case dsl::ChainOpKind::kMin: return "cutlass::minimum_with_nan_propagation";
        default: return "cutlass::divides";
    }
}

}  // namespace

std::string_view math_name(dsl::MathMode m) {
    switch (m) {
        case dsl::MathMode::kAuto: return "auto";
        case dsl::MathMode::kF32Simt: return "f32_simt";
        case dsl::MathMode::kTf32: return "tf32";
        case dsl::MathMode::kTf32x3: return "tf32x3";
        case dsl::MathMode::kBf16: return "bf16";
        case dsl::MathMode::kF16: return "f16";
    }
    return "?";
}

std::string float_literal(double v) {
    if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    s += "f";
    if (v < 0) s = "(" + s + ")";
    return s;
}

std::string cutlass_type(DType d) {
    switch (d) {
        case DType::kF32: return "float";
        case DType::kF16: return "cutlass::half_t";
        case DType::kBF16: return "cutlass::bfloat16_t";
        case DType::kF64: return "double";
        case DType::kI32: return "int32_t";
        case DType::kI64: return "int64_t";
    }
    return "float";
}

std::string GemmSpec::fold_text() const {
    std::string s;
    for (const auto& f : dims_fold) s += (s.empty() ? "" : ", ") + f;
    return s;
}

Expected<GemmSpec> analyze_gemm(const dsl::Kernel& kernel, const LowerContext& ctx) {
    GemmSpec g;
    g.kernel = kernel.name;
    g.config = kernel.gemm;
    if (kernel.args.size() != 2) return bad(kernel, "gemm takes two operands");
    auto find = [&](const std::string& name) -> const TensorInfo* {
        auto it = ctx.tensors.find(name);
        return it == ctx.tensors.end() ? nullptr : &it->second;
    };
    const TensorInfo* ta = find(kernel.args[0].name);
    const TensorInfo* tb = find(kernel.args[1].name);
    if (!ta || !tb) return bad(kernel, "gemm operand not in the tensor table");
    if (kernel.chain.empty() || kernel.chain.back().kind != dsl::ChainOpKind::kStore ||
        !kernel.chain.back().tensor)
        return bad(kernel, "a gemm chain must end in `store`");
    const auto& store_ref = *kernel.chain.back().tensor;
    const TensorInfo* td = find(store_ref.name);
    if (!td) return bad(kernel, "store target \"" + store_ref.name + "\" not in the tensor table");
    g.a = ta->name;
    g.b = tb->name;
    g.d = td->name;
    g.dtype_a = ta->dtype;
    g.dtype_b = tb->dtype;
    g.dtype_d = td->dtype;

    // Dims: the output is [(L,) M, N]; K is shared by A and B and absent from the output.
    auto da = real_dims(kernel.args[0].dims), db = real_dims(kernel.args[1].dims);
    auto dd = real_dims(store_ref.dims);
    // A[F..,M,K] x B[K,N] -> D[F..,M,N]: A's and D's leading dims (the same, none of B's) fold
    while (dd.size() >= 3 && da.size() == dd.size() && db.size() == 2 && da[0] == dd[0] &&
           !contains(db, dd[0])) {
        g.dims_fold.push_back(dd[0]);
        da.erase(da.begin());
        dd.erase(dd.begin());
    }
    if (dd.size() == 3) g.dim_l = dd[0];
    if (dd.size() < 2 || dd.size() > 3)
        return unsupported(kernel, store_ref.loc, "a gemm output of rank " +
                                                      std::to_string(dd.size()) +
                                                      " (expected [M,N] or [B,M,N])");
    g.dim_m = dd[dd.size() - 2];
    g.dim_n = dd[dd.size() - 1];
    size_t want = g.dim_l.empty() ? 2 : 3;
    if (da.size() != want || db.size() != want ||
        (!g.dim_l.empty() && (da[0] != g.dim_l || db[0] != g.dim_l)))
        return unsupported(kernel, kernel.loc, "operands that are not [" +
                                                   (g.dim_l.empty() ? "" : g.dim_l + ",") +
                                                   "M,K]/[K,M] and [N,K]/[K,N] matrices");
    std::vector<std::string> a2(da.end() - 2, da.end()), b2(db.end() - 2, db.end());
    for (const auto& d : a2)
        if (contains(b2, d) && !contains(dd, d)) g.dim_k = d;
    if (g.dim_k.empty()) return bad(kernel, "the gemm operands share no contracted dim");
    if (a2 == std::vector<std::string>{g.dim_m, g.dim_k}) g.a_row_major = true;
    else if (a2 == std::vector<std::string>{g.dim_k, g.dim_m}) g.a_row_major = false;
    else return bad(kernel, "operand " + g.a + " is not [M,K] or [K,M] for output dims M=" +
                                g.dim_m);
    if (!g.dims_fold.empty() && !g.a_row_major)
        return unsupported(kernel, kernel.loc, "operand " + g.a + " with leading dims " +
                                                   g.fold_text() + " and K before M (only a "
                                                   "K-contiguous A folds " + g.fold_text() +
                                                   " into M)");
    if (b2 == std::vector<std::string>{g.dim_n, g.dim_k}) g.b_col_major = true;
    else if (b2 == std::vector<std::string>{g.dim_k, g.dim_n}) g.b_col_major = false;
    else return bad(kernel, "operand " + g.b + " is not [N,K] or [K,N] for output dims N=" +
                                g.dim_n);
    for (auto [name, out] : {std::pair{&g.dim_m, &g.m}, {&g.dim_n, &g.n}, {&g.dim_k, &g.k},
                             {&g.dim_l, &g.l}}) {
        if (name->empty()) continue;
        auto v = dim_value(ctx, *name);
        if (!v) return bad(kernel, v.error().message);
        *out = *v;
    }
    for (const auto& f : g.dims_fold) {
        auto v = dim_value(ctx, f);
        if (!v) return bad(kernel, v.error().message);
        g.m *= *v;
    }

    auto math = gemm_math(kernel, g.dtype_a, g.dtype_b, ctx.problem->policy);
    if (!math) return math.error();
    g.math = *math;
    g.tensor_order = {g.a, g.b, g.d};

    // The chain, all but the final store.
    for (size_t i = 0; i + 1 < kernel.chain.size(); ++i) {
        const auto& op = kernel.chain[i];
        using K = dsl::ChainOpKind;
        if (op.kind == K::kStore)
            return unsupported(kernel, op.loc, "a second `store` in a gemm epilogue (only the "
                                               "final store; split the kernel)");
        if (op.kind == K::kReduce)
            return unsupported(kernel, op.loc, "`reduce` in a gemm epilogue (store the matrix "
                                               "and reduce it in a rowwise kernel)");
        if (op.kind == K::kCast) {
            EpiStep cast;
            cast.kind = EpiStepKind::kCast;
            cast.dtype = op.cast_to;
            g.steps.push_back(cast);
            continue;
        }
        bool binary = dsl::is_binary(op.kind);
        const bool reversed = dsl::is_reversed(op.kind);
        if (op.kind == K::kLet || op.kind == K::kUse || (binary && !op.name.empty())) {
            EpiStep s;
            s.kind = op.kind == K::kLet   ? EpiStepKind::kLet
                     : op.kind == K::kUse ? EpiStepKind::kUse
                                          : EpiStepKind::kBinaryNamed;
            if (binary) s.functor = binary_functor(op.kind);
            s.name = op.name;
            s.reversed = reversed;
            g.steps.push_back(s);
            continue;
        }
        if (!binary || !op.tensor) {
            auto s = unary_step(kernel, op);
            if (!s) return s.error();
            g.steps.push_back(*s);
            continue;
        }
        const TensorInfo* t = find(op.tensor->name);
        if (!t) return bad(kernel, "\"" + op.tensor->name + "\" not in the tensor table");
        EpiStep s;
        s.kind = EpiStepKind::kBinaryTensor;
        s.functor = binary_functor(op.kind);
        s.reversed = reversed;
        s.tensor = t->name;
        s.dtype = t->dtype;
        auto dims = real_dims(op.tensor->dims);
        if (!g.dims_fold.empty() && !dims.empty()) {
            // [F..,M,N] and [F..,M] are contiguous over the folded M; [M,N] and [M] would be read
            // again for every F.., which the folded GEMM cannot do
            if (dims.size() > g.dims_fold.size() &&
                std::equal(g.dims_fold.begin(), g.dims_fold.end(), dims.begin()))
                dims.erase(dims.begin(), dims.begin() + std::ptrdiff_t(g.dims_fold.size()));
            else if (contains(dims, g.dim_m))
                return unsupported(kernel, op.loc, "operand " + op.tensor->name + " broadcast "
                                                   "over " + g.fold_text() + ", which this GEMM "
                                                   "folds into " + g.dim_m);
        }
        if (dims.empty()) s.broadcast = Broadcast::kScalar;
        else if (dims == std::vector<std::string>{g.dim_n}) s.broadcast = Broadcast::kRow;
        else if (dims == std::vector<std::string>{g.dim_m}) s.broadcast = Broadcast::kCol;
        else if (dims == std::vector<std::string>{g.dim_m, g.dim_n}) s.broadcast = Broadcast::kMatrix;
        else if (!g.dim_l.empty() && dims == std::vector<std::string>{g.dim_l, g.dim_m, g.dim_n}) {
            s.broadcast = Broadcast::kMatrix;
            s.batched = true;
        } else {
            return unsupported(kernel, op.loc, "operand " + op.tensor->name +
                                                   " broadcast as it is (only [], [N], [M], "
                                                   "[M,N] and [B,M,N] map to epilogue nodes)");
        }
        if (s.broadcast == Broadcast::kMatrix) {
            if (g.source)
                return unsupported(kernel, op.loc, "a second residual matrix (" + t->name +
                                                       "; one is read as the C operand)");
            g.source = t->name;
            g.dtype_c = t->dtype;
        }
        if (!contains(g.tensor_order, t->name)) g.tensor_order.push_back(t->name);
        g.steps.push_back(s);
    }
    EpiStep store;
    store.kind = EpiStepKind::kStore;
    store.tensor = g.d;
    store.dtype = g.dtype_d;
    g.steps.push_back(store);
    return g;
}

}  // namespace kforge::codegen
