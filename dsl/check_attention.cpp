// The checker's side of attention kernels: the expression an `attention(Q, K, V [, M])` kernel
// computes (the same nodes the problem's matmul, scale, masked_fill / add, softmax, matmul
// build: contract over E, mul scale, mask, softmax over L, contract over L), and the legality of
// its tile on the device (shared memory, warps).
#include <limits>
#include <optional>

#include "dsl/check_attention.h"

#include "dsl/attention.h"
#include "dsl/attention_fmha.h"
#include "dsl/attention_mea.h"

namespace kforge::dsl {

int tri_fill_node(ExprGraph& g, int x, TriMask mask, int64_t diagonal, double value,
                  const std::string& rows, const std::string& cols, const Origin& o) {
    const int v = g.apply(mask == TriMask::kTril ? "tri_fill_lower" : "tri_fill_upper", {x},
                          {static_cast<double>(diagonal), value}, {rows, cols}, false, o);
    // a dim name twice ([B,T,T]) is one dim of a value (as a store reads it)
    const std::vector<std::string> distinct = distinct_dims(g.at(v).dims);
    return distinct == g.at(v).dims ? v : g.relabel(v, distinct);
}

std::optional<int> attention_expr(Sem& sem, const Kernel& kn, int k) {
    Reporter& rep = sem.reporter;
    ExprGraph& g = sem.graph;
    const TensorRef &q = kn.args.at(0), &kt = kn.args.at(1), &v = kn.args.at(2);
    const std::string head = "attention(" + ref_text(q) + ", " + ref_text(kt) + ", " +
                             ref_text(v) + ")";
    const std::string e = q.dims.back(), l = kt.dims[kt.dims.size() - 2];
    bool ok = true;
    if (kt.dims.back() != e) {
        rep.error(kt.loc, head + ": K's last dim " + kt.dims.back() + " must be Q's head dim " +
                              e + " (the scores contract Q[..,S,E] with K[..,L,E])");
        ok = false;
    }
    if (v.dims[v.dims.size() - 2] != l) {
        rep.error(v.loc, head + ": V's rows " + v.dims[v.dims.size() - 2] + " must be K's rows " +
                             l + " (V[..,L,F])");
        ok = false;
    }
    const std::vector<std::string> qb(q.dims.begin(), q.dims.end() - 2),
        kb(kt.dims.begin(), kt.dims.end() - 2), vb(v.dims.begin(), v.dims.end() - 2);
    if (qb != kb || qb != vb) {
        rep.error(kn.loc, head + ": Q, K and V must share their batch dims (all dims before the "
                                 "last two)");
        ok = false;
    }
    auto qn = sem.read(q, k);
    auto kn_ = sem.read(kt, k);
    auto vn = sem.read(v, k);
    std::optional<int> mn;
    if (kn.args.size() > 3) mn = sem.read(kn.args[3], k);
    if (!ok || !qn || !kn_ || !vn || (kn.args.size() > 3 && !mn)) return std::nullopt;
    Origin o{Reporter::loc_text(kn.loc), q.name, "attention"};
    int s = g.contract(*qn, *kn_, e, o);
    if (kn.attention.scale) s = g.mul(s, g.constant(*kn.attention.scale, o), o);
    if (kn.attention.tri_mask != TriMask::kNone) {
        if (mn) {
            rep.error(kn.loc, head + ": a structured mask (mask tril|triu) and a mask tensor "
                                     "together are not supported");
            return std::nullopt;
        }
        const AttentionConfig& c = kn.attention;
        s = tri_fill_node(g, s, c.tri_mask, c.tri_diagonal,
                          attention_tri_fill(sem.problem, c.tri_mask, c.tri_diagonal),
                          q.dims[q.dims.size() - 2], l, o);
    }
    if (mn) {
        const Tensor* mt = sem.problem.find_tensor(kn.args[3].name);
        DType md = mt ? mt->dtype : DType::kF32;
        if (auto b = sem.bound.find(kn.args[3].name); b != sem.bound.end()) md = b->second.dtype;
        if (md == DType::kBool) {
            s = g.apply("masked_fill", {s, *mn},
                        {attention_mask_fill(sem.problem, kn.args[3].name)}, {}, false, o);
        } else {
            s = g.add(s, *mn, o);
        }
    }
    s = g.apply("softmax", {s}, {}, {l}, false, o);
    const int out = g.contract(s, *vn, l, o);
    // O [batch.., S, F]: where S and L share a name the contractions drop both (as the
    // problem's matmuls do: same keys); the kernel's output keeps its rows
    std::vector<std::string> dims(q.dims.begin(), q.dims.end() - 1);
    dims.push_back(v.dims.back());
    dims = named_dims(dims);
    return g.at(out).dims == dims ? out : g.relabel(out, dims);
}

namespace {

// A kernel argument's extent `from_end` dims from its end: the problem dim it names, a literal,
// or 0 where neither (a derived dim: the lowering checks it).
int64_t ref_extent(const Problem& problem, const TensorRef& r, size_t from_end) {
    if (r.dims.size() < from_end) return 0;
    const std::string& d = r.dims[r.dims.size() - from_end];
    if (auto it = problem.dims.find(d); it != problem.dims.end()) return it->second;
    return d.find_first_not_of("0123456789") == std::string::npos && !d.empty() ? std::stoll(d)
                                                                                : int64_t{0};
}

DType tensor_dtype(const Problem& problem, const std::string& name, DType fallback) {
    const Tensor* t = problem.find_tensor(name);
    return t ? t->dtype : fallback;
}

// The CUTLASS attention kernels write O themselves: the chain may only cast to the inputs' type
// `in` and store O [batch.., S, F] packed, once. Why it does not (empty when it does); `out` gets
// the stored tensor's dtype.
std::string cutlass_chain_misfit(const Kernel& kn, const Problem& problem, DType in,
                                 std::optional<DType>& out) {
    const TensorRef* store = nullptr;
    bool extra = false;
    for (const ChainOp& op : kn.chain) {
        if (op.kind == ChainOpKind::kStore && op.tensor && !store) store = &*op.tensor;
        else if (!(op.kind == ChainOpKind::kCast && op.cast_to == in && !store)) extra = true;
    }
    if (store) out = tensor_dtype(problem, store->name, in);
    if (extra || !store)
        return "the kernel writes O itself: the chain may only cast to the inputs' type and store "
               "O once";
    std::vector<std::string> want(kn.args[0].dims.begin(), kn.args[0].dims.end() - 1);
    want.push_back(kn.args[2].dims.back());
    if (store->dims != want)
        return "the kernel stores O packed as [batch.., S, F]; the chain stores " +
               ref_text(*store);
    return "";
}

// `impl cutlass_fmha` (dsl/attention_fmha.h): the rule on what the checker knows (the dtypes of
// problem tensors; a program buffer's the lowering checks), and a chain that only stores O
// [batch.., S, F] in place (an optional cast to the inputs' type first).
void check_fmha(const Kernel& kn, const Problem& problem, const DeviceLimits& limits,
                Reporter& rep) {
    const SourceLoc at = knob_loc(kn, "impl");
    if (kn.args.size() < 3) return;
    FmhaFacts f;
    const Tensor* q = problem.find_tensor(kn.args[0].name);
    f.q = q ? q->dtype : (problem.policy == PrecisionPolicy::kFp16 ? DType::kF16 : DType::kBF16);
    f.k = tensor_dtype(problem, kn.args[1].name, f.q);
    f.v = tensor_dtype(problem, kn.args[2].name, f.q);
    f.policy = problem.policy;
    f.s = ref_extent(problem, kn.args[0], 2), f.e = ref_extent(problem, kn.args[0], 1);
    f.f = ref_extent(problem, kn.args[2], 1);
    f.mask = kn.args.size() > 3;
    f.tri = kn.attention.tri_mask, f.tri_diagonal = kn.attention.tri_diagonal;
    f.tri_fill = attention_tri_fill(problem, f.tri, f.tri_diagonal);
    f.l = ref_extent(problem, kn.args[1], 2);
    f.scale = kn.attention.scale.value_or(1.0);
    f.sm90a = limits.cc_major == 9;
    const std::string chain = cutlass_chain_misfit(kn, problem, f.q, f.out);
    std::string why = fmha_misfit(kn.attention, f);
    if (why.empty() && !chain.empty()) why = "CUTLASS's FMHA: " + chain;
    if (!why.empty()) rep.error(at, "impl cutlass_fmha: " + why + "; use impl wmma");
}

// `impl cutlass_mea` (dsl/attention_mea.h), checked as check_fmha is. A mask's extents are its
// problem tensor's (a program buffer's the lowering checks).
void check_mea(const Kernel& kn, const Problem& problem, const DeviceLimits& limits,
               Reporter& rep) {
    const SourceLoc at = knob_loc(kn, "impl");
    if (kn.args.size() < 3) return;
    auto operand = [&](const TensorRef& r, DType fallback) {
        MeaOperand o{tensor_dtype(problem, r.name, fallback), {}};
        for (size_t i = r.dims.size(); i > 0; --i) o.shape.push_back(ref_extent(problem, r, i));
        return o;
    };
    const MeaOperand q = operand(kn.args[0], DType::kF32);
    std::optional<MeaOperand> m;
    if (kn.args.size() > 3) {  // its extents from its problem tensor (a buffer's: the lowering)
        m = MeaOperand{tensor_dtype(problem, kn.args[3].name, q.dtype), {}};
        if (const Tensor* t = problem.find_tensor(kn.args[3].name)) m->shape = t->shape;
    }
    MeaFacts f = mea_facts(kn.attention, problem, q, operand(kn.args[1], q.dtype),
                           operand(kn.args[2], q.dtype), m ? &*m : nullptr,
                           kn.args.size() > 3 ? kn.args[3].name : std::string(),
                           limits.cc_major);
    const std::string chain = cutlass_chain_misfit(kn, problem, f.q, f.out);
    std::string why = mea_misfit(kn.attention, f);
    if (why.empty() && !chain.empty()) why = "CUTLASS's memory-efficient attention: " + chain;
    if (!why.empty()) rep.error(at, "impl cutlass_mea: " + why + "; use impl wmma");
}

}  // namespace

void check_legality_attention(const Kernel& kn, const Problem& problem,
                              const DeviceLimits& limits, Reporter& rep) {
    const AttentionConfig& c = kn.attention;
    if (c.impl == AttentionImpl::kCutlassFmha) return check_fmha(kn, problem, limits, rep);
    if (c.impl == AttentionImpl::kCutlassMea) return check_mea(kn, problem, limits, rep);
    const SourceLoc at = knob_loc(kn, "tile");
    if (c.tile_m % 16 != 0 || c.tile_m < 16 || c.tile_m > 128 || c.tile_n % 16 != 0 ||
        c.tile_n < 16 || c.tile_n > 128) {
        rep.error(at, "tile " + std::to_string(c.tile_m) + "x" + std::to_string(c.tile_n) +
                          ": both must be 16, 32, 64 or 128");
        return;
    }
    if (kn.args.size() < 3) return;
    const Tensor* q = problem.find_tensor(kn.args[0].name);
    const Tensor* v = problem.find_tensor(kn.args[2].name);
    if (!q || !v || q->shape.empty() || v->shape.empty()) return;  // intermediates: lowering checks
    const int64_t e = q->shape.back(), f = v->shape.back();
    const AttentionMath math = attention_math(q->dtype, problem.policy, c.f32_cores);
    const std::string misfit = attention_misfit(e, f, c.tile_m, c.tile_n, math,
                                                limits.smem_per_block_optin_bytes);
    if (!misfit.empty())
        rep.error(at, misfit + ": a smaller tile, `math f32`, or the unfused kernels (gemm, "
                               "softmax, gemm)");
}

}  // namespace kforge::dsl
