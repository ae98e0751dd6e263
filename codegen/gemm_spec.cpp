// analyze_gemm: dsl::Kernel (gemm) -> GemmSpec. See gemm_spec.h.
#include "codegen/gemm_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "dsl/math_policy.h"
#include "dsl/printer.h"

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

// An epilogue tensor's dims relative to the output tile: D's batch dims L.. leading (then it
// has its own batch stride), the fold dims F.. next (contiguous over the folded M). nullopt where
// it names M without F.. (read again for every F.., which the folded GEMM cannot do).
struct TileDims {
    std::vector<std::string> dims;
    bool batched = false;
};
std::optional<TileDims> tile_dims(const GemmSpec& g, std::vector<std::string> dims) {
    const auto strip = [&](const std::vector<std::string>& lead) {
        if (lead.empty() || dims.size() <= lead.size() ||
            !std::equal(lead.begin(), lead.end(), dims.begin()))
            return false;
        dims.erase(dims.begin(), dims.begin() + std::ptrdiff_t(lead.size()));
        return true;
    };
    TileDims t;
    t.batched = strip(g.dims_batch);
    if (!g.dims_fold.empty() && !strip(g.dims_fold) && contains(dims, g.dim_m)) return std::nullopt;
    t.dims = std::move(dims);
    return t;
}

using dsl::dims_text;

// D's batch dims `bd` split into L.. (CUTLASS's one batch mode) and F.. (folded into M), and
// whether A (batch dims `ba`) and B (`bb`) have L.. or none: GemmSpec. F.. is the longest suffix
// of bd that A ends with and B lacks, A being K-major; a fold that an epilogue tensor cannot
// follow (it names M without F..) is given up for a batch over F.. too (B's batch stride 0).
Status batch_dims(const dsl::Kernel& k, GemmSpec& g, const std::vector<std::string>& ba,
                  const std::vector<std::string>& bb, const std::vector<std::string>& bd) {
    size_t f = gemm_fold_count(ba, bb, bd, g.a_row_major);
    for (;;) {
        g.dims_fold.assign(bd.end() - std::ptrdiff_t(f), bd.end());
        g.dims_batch.assign(bd.begin(), bd.end() - std::ptrdiff_t(f));
        bool fits = true;
        for (const auto& op : k.chain)
            if (op.tensor && op.kind != dsl::ChainOpKind::kStore)
                fits = fits && tile_dims(g, real_dims(op.tensor->dims)).has_value();
        if (f == 0 || fits) break;
        f = 0;
    }
    const std::vector<std::string> a_rest(ba.begin(), ba.end() - std::ptrdiff_t(f));
    for (auto [have, name, batched] : {std::tuple{&a_rest, &g.a, &g.a_batched},
                                       std::tuple{&bb, &g.b, &g.b_batched}}) {
        *batched = true;
        if (*have == g.dims_batch) continue;
        if (have->empty()) {
            *batched = false;  // read again for every batch: batch stride 0
            continue;
        }
        return unsupported(k, k.loc, "operand " + *name + " with batch dims " + dims_text(*have) +
                                         " of the output's " + dims_text(bd) +
                                         " (a batched gemm operand has all of " +
                                         dims_text(g.dims_batch) + " or none: expand it first)");
    }
    return Ok{};
}

}  // namespace

size_t gemm_fold_count(const std::vector<std::string>& ba, const std::vector<std::string>& bb,
                       const std::vector<std::string>& bd, bool a_row_major) {
    size_t f = 0;
    if (a_row_major)
        while (f < ba.size() && f < bd.size() && ba[ba.size() - 1 - f] == bd[bd.size() - 1 - f] &&
               !contains(bb, bd[bd.size() - 1 - f]))
            ++f;
    return f;
}

std::optional<GemmLayout> resolve_gemm_layout(const std::vector<std::string>& a2,
                                              const std::vector<std::string>& b2,
                                              const std::string& dim_m, const std::string& dim_n) {
    if (a2.size() != 2 || b2.size() != 2) return std::nullopt;
    std::optional<GemmLayout> first;
    // matmul's own order first: A[M,K] @ B[K,N], then B[N,K], then A[K,M]
    for (bool a_row : {true, false}) {
        for (bool b_col : {false, true}) {
            const std::string& ka = a_row ? a2[1] : a2[0];
            const std::string& ma = a_row ? a2[0] : a2[1];
            const std::string& kb = b_col ? b2[1] : b2[0];
            const std::string& nb = b_col ? b2[0] : b2[1];
            if (ma != dim_m || nb != dim_n || ka != kb) continue;
            GemmLayout l{a_row, b_col, ka};
            if (ka != dim_m && ka != dim_n) return l;  // names decide
            if (!first) first = l;
        }
    }
    return first;
}

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
        case DType::kBool: return "bool";
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

    // Dims: D is [L.., F.., M, N]; A and B are matrices behind batch dims (batch_dims()).
    const auto& ra = kernel.args[0].dims;
    const auto& rb = kernel.args[1].dims;
    const auto& rd = store_ref.dims;
    if (ra.size() < 2 || rb.size() < 2 || rd.size() < 2)
        return unsupported(kernel, kernel.loc, "gemm operands or output of rank < 2 (a gemm "
                                               "takes matrices behind batch dims)");
    g.dim_m = rd[rd.size() - 2];
    g.dim_n = rd.back();
    const std::vector<std::string> a2(ra.end() - 2, ra.end()), b2(rb.end() - 2, rb.end());
    const auto layout = resolve_gemm_layout(a2, b2, g.dim_m, g.dim_n);
    if (!layout)
        return bad(kernel, "operands " + g.a + " and " + g.b + " are not [M,K]/[K,M] and "
                           "[N,K]/[K,N] matrices sharing a contracted dim for output dims M=" +
                           g.dim_m + ", N=" + g.dim_n);
    g.a_row_major = layout->a_row_major;
    g.b_col_major = layout->b_col_major;
    g.dim_k = layout->dim_k;
    if (auto st = batch_dims(kernel, g, real_dims({ra.begin(), ra.end() - 2}),
                             real_dims({rb.begin(), rb.end() - 2}),
                             real_dims({rd.begin(), rd.end() - 2}));
        !st)
        return st.error();
    for (auto [name, out] : {std::pair{&g.dim_m, &g.m}, {&g.dim_n, &g.n}, {&g.dim_k, &g.k}}) {
        auto v = dim_value(ctx, *name);
        if (!v) return bad(kernel, v.error().message);
        *out = *v;
    }
    for (const auto& f : g.dims_fold) {
        auto v = dim_value(ctx, f);
        if (!v) return bad(kernel, v.error().message);
        g.m *= *v;
    }
    for (const auto& b : g.dims_batch) {
        auto v = dim_value(ctx, b);
        if (!v) return bad(kernel, v.error().message);
        g.l *= *v;
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
        const auto tile = tile_dims(g, real_dims(op.tensor->dims));
        if (!tile)
            return unsupported(kernel, op.loc, "operand " + op.tensor->name + " broadcast "
                                               "over " + g.fold_text() + ", which this GEMM "
                                               "folds into " + g.dim_m);
        const auto& dims = tile->dims;
        const bool matrix = dims == std::vector<std::string>{g.dim_m, g.dim_n};
        if (dims.empty() && !tile->batched) s.broadcast = Broadcast::kScalar;
        else if (dims == std::vector<std::string>{g.dim_n} && !tile->batched) s.broadcast = Broadcast::kRow;
        else if (dims == std::vector<std::string>{g.dim_m} && !tile->batched) s.broadcast = Broadcast::kCol;
        else if (matrix) s.broadcast = Broadcast::kMatrix, s.batched = tile->batched;
        else
            return unsupported(kernel, op.loc, "operand " + op.tensor->name +
                                                   " broadcast as it is (only [], [N], [M], "
                                                   "[M,N] and [B..,M,N] map to epilogue nodes)");
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
