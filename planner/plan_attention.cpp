// Attention in the fusion planner (planner/partition.h): the pattern matmul(Q, K^T) -> [scale]
// -> [masked_fill by a bool M | add a float M] -> softmax over the keys -> matmul(., V), each
// intermediate read once and by nothing else, becomes one attention kernel (dsl/attention.h,
// kernels/attention.cuh) whose chain absorbs the element-wise consumers of the output. With
// SeedOptions::fuse off (the planner's unfused variant) or where the pattern does not match, the
// ops go to the gemm, rowwise and map families as before - the unfused path the search may also
// choose. Where the head dims leave no tile within shared memory the unfused path is planned,
// and where that is refused too the error names both reasons.
//
// Where CUTLASS's Hopper FMHA applies (dsl/attention_fmha.h: sm_90a, bf16/f16 under their
// policy, one head dim of at most 256, no mask, a chain that only stores O) its configurations
// come first, so the seed is `impl cutlass_fmha`; then CUTLASS's memory-efficient attention
// (dsl/attention_mea.h: f32 as 3xTF32, any head dim, additive masks, causal masks), whose
// f32 and masked kernels PyTorch's efficient backend runs (the WMMA kernel measured 2.8-5.1x
// slower than it at f32 and 7-8x slower than cuDNN masked on the H100, session 23); the WMMA
// tiles follow as the fallback, and SeedOptions::attention_wmma (a seed variant) plans WMMA only.
// The unfused path is planned where neither the memory-efficient kernel nor a WMMA tile fits.
#include <algorithm>
#include <optional>

#include "dsl/attention.h"
#include "dsl/attention_fmha.h"
#include "dsl/attention_mea.h"
#include "planner/partition.h"

namespace kforge::planner::detail {
namespace {

struct Pattern {
    size_t scores = 0, scale = 0, mask = 0, softmax = 0, out = 0;  // op indices (0: absent)
    std::vector<size_t> dropouts;  // dropout p = 0 (identity) ops passed through
    bool has_scale = false, has_mask = false;
    TriMask tri = TriMask::kNone;  // a structured masked_fill (no mask tensor)
    int64_t diagonal = 0;
    std::string q, k, v, m;
    double scale_value = 1.0;
};

// The single op reading `name` when nothing else (no other op, no output) reads it.
std::optional<size_t> sole_reader(const Planner& pl, const std::string& name) {
    if (pl.is_output(name)) return std::nullopt;
    auto it = pl.readers.find(name);
    if (it == pl.readers.end() || it->second.size() != 1) return std::nullopt;
    return it->second.front();
}

// The sole reader of `name` past dropout ops of p = 0 (the identity: nn.Dropout(0.0) between
// the softmax and the product with V, as MinGPT writes it), which `skipped` collects; `name`
// becomes the tensor that reader reads.
std::optional<size_t> next_op(const Planner& pl, std::string& name, std::vector<size_t>& skipped) {
    for (;;) {
        auto r = sole_reader(pl, name);
        if (!r) return r;
        const Op& op = pl.p.ops[*r];
        if (op.kind != OpKind::kDropout || op.attrs.p != 0.0) return r;
        skipped.push_back(*r);
        name = op.output;
    }
}

bool plain_input(const Planner& pl, const std::string& name) {
    return pl.available.count(name) && !pl.views.count(name) && pl.p.find_tensor(name) != nullptr;
}

std::optional<Pattern> match(const Planner& pl, size_t i) {
    const Problem& p = pl.p;
    const Op& mm = p.ops[i];
    if (mm.kind != OpKind::kMatmul || mm.inputs.size() != 2 || !mm.attrs.transpose_b ||
        mm.attrs.transpose_a)
        return std::nullopt;
    Pattern pt;
    pt.scores = i;
    pt.q = mm.inputs[0], pt.k = mm.inputs[1];
    const Tensor& q = pl.tensor(pt.q);
    const Tensor& k = pl.tensor(pt.k);
    if (q.shape.size() < 2 || k.shape.size() != q.shape.size()) return std::nullopt;
    std::string cur = mm.output;
    auto next = next_op(pl, cur, pt.dropouts);
    if (!next) return std::nullopt;
    if (p.ops[*next].kind == OpKind::kScale) {
        pt.has_scale = true, pt.scale = *next, pt.scale_value = p.ops[*next].attrs.scalar;
        cur = p.ops[*next].output;
        if (!(next = next_op(pl, cur, pt.dropouts))) return std::nullopt;
    }
    const Op& mop = p.ops[*next];
    if (mop.kind == OpKind::kMaskedFill && mop.inputs[0] == cur &&
        mop.attrs.tri_mask != TriMask::kNone) {  // structured: no mask tensor
        pt.mask = *next, pt.tri = mop.attrs.tri_mask, pt.diagonal = mop.attrs.diagonal;
        cur = mop.output;
        if (!(next = next_op(pl, cur, pt.dropouts))) return std::nullopt;
    } else if (mop.kind == OpKind::kMaskedFill && mop.inputs[0] == cur) {
        pt.has_mask = true, pt.mask = *next, pt.m = mop.inputs[1];
    } else if (mop.kind == OpKind::kAdd && mop.inputs.size() == 2 &&
               (mop.inputs[0] == cur) != (mop.inputs[1] == cur)) {
        pt.has_mask = true, pt.mask = *next;
        pt.m = mop.inputs[0] == cur ? mop.inputs[1] : mop.inputs[0];
        if (!is_float_storage(pl.tensor(pt.m).dtype)) return std::nullopt;
    }
    if (pt.has_mask) {
        if (!plain_input(pl, pt.m) || pl.tensor(pt.m).shape.size() > q.shape.size())
            return std::nullopt;
        cur = p.ops[*next].output;
        if (!(next = next_op(pl, cur, pt.dropouts))) return std::nullopt;
    }
    const Op& sm = p.ops[*next];
    const int64_t rank = static_cast<int64_t>(q.shape.size());
    if (sm.kind != OpKind::kSoftmax || (sm.attrs.axis != -1 && sm.attrs.axis != rank - 1))
        return std::nullopt;
    pt.softmax = *next;
    cur = sm.output;
    if (!(next = next_op(pl, cur, pt.dropouts))) return std::nullopt;
    const Op& pv = p.ops[*next];
    if (pv.kind != OpKind::kMatmul || pv.inputs.size() != 2 || pv.inputs[0] != cur ||
        pv.attrs.transpose_a || pv.attrs.transpose_b)
        return std::nullopt;
    pt.out = *next, pt.v = pv.inputs[1];
    if (pl.tensor(pt.v).shape.size() != q.shape.size()) return std::nullopt;
    for (const std::string& t : {pt.q, pt.k, pt.v})
        if (!plain_input(pl, t) || !is_float_storage(pl.tensor(t).dtype)) return std::nullopt;
    if (pl.tensor(pt.q).dtype != pl.tensor(pt.k).dtype ||
        pl.tensor(pt.q).dtype != pl.tensor(pt.v).dtype)
        return std::nullopt;
    return pt;
}

}  // namespace

Expected<bool> add_attention(Planner& pl, size_t i) {
    if (!pl.opt.fuse) return false;
    const std::optional<Pattern> pt = match(pl, i);
    if (!pt) return false;
    const Problem& p = pl.p;
    const Tensor& q = pl.tensor(pt->q);
    const Tensor& v = pl.tensor(pt->v);
    const dsl::AttentionMath math = dsl::attention_math(q.dtype, p.policy, false);
    auto misfit = [&](int tm, int tn) {
        return dsl::attention_misfit(q.shape.back(), v.shape.back(), tm, tn, math,
                                     pl.limits.smem_per_block_optin_bytes);
    };
    static constexpr int kTiles[][2] = {{64, 64}, {128, 64}, {64, 32}, {32, 64}, {32, 32},
                                        {16, 32}, {16, 16}};
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kAttention;
    kn.args = {pl.ref(pt->q), pl.ref(pt->k), pl.ref(pt->v)};
    if (pt->has_mask) kn.args.push_back(pl.ref(pt->m));
    if (pt->has_scale) kn.attention.scale = pt->scale_value;
    kn.attention.tri_mask = pt->tri, kn.attention.tri_diagonal = pt->diagonal;
    std::vector<dsl::Kernel> candidates;
    const int64_t rows = q.shape[q.shape.size() - 2];
    if (!pl.opt.attention_wmma && !pt->has_mask) {
        // the checker decides the rest (dtypes, policy, the chain, the arch)
        for (const dsl::FmhaInstance& f : dsl::fmha_instances_for(q.shape.back())) {
            dsl::Kernel c = kn;
            c.attention.impl = dsl::AttentionImpl::kCutlassFmha;
            c.attention.fmha_m = f.m, c.attention.fmha_n = f.n, c.attention.fmha_d = f.d;
            c.attention.fmha_schedule = f.schedule;
            candidates.push_back(std::move(c));
        }
    }
    const size_t fmha_candidates = candidates.size();
    if (!pl.opt.attention_wmma) {
        // the rule on what the planner knows (the chain and O's dtype the checker sees)
        auto operand = [&](const std::string& name) {
            return dsl::MeaOperand{pl.tensor(name).dtype, pl.tensor(name).shape};
        };
        std::optional<dsl::MeaOperand> m;
        if (pt->has_mask) m = operand(pt->m);
        const dsl::MeaFacts f = dsl::mea_facts(kn.attention, p, operand(pt->q), operand(pt->k),
                                               operand(pt->v), m ? &*m : nullptr, pt->m,
                                               pl.limits.cc_major);
        for (const dsl::MeaInstance& m : dsl::mea_instances_for(q.dtype, f.e, f.f)) {
            dsl::Kernel c = kn;
            c.attention.impl = dsl::AttentionImpl::kCutlassMea;
            c.attention.mea_m = m.m, c.attention.mea_n = m.n;
            if (dsl::mea_misfit(c.attention, f).empty()) candidates.push_back(std::move(c));
        }
    }
    for (const auto& t : kTiles) {
        if (!misfit(t[0], t[1]).empty())
            continue;
        if (t[0] > 16 && t[0] / 2 >= rows) continue;  // a tile of mostly padding rows
        kn.attention.tile_m = t[0], kn.attention.tile_n = t[1];
        candidates.push_back(kn);
    }
    const Op& mm = p.ops[i];
    if (candidates.size() == fmha_candidates) {
        // head dims too large for one CTA's shared memory: the unfused path, else both reasons.
        // Its scores (and the scaled and masked scores) are stored as f32 for the softmax, as
        // the fused kernels keep them: rounded to bf16 at d=512 (|QK^T| ~ 20, a 2^-9 relative
        // step), a peaked softmax moves the output by up to 2% (H100, session 23: 0.14% of the
        // elements outside the bf16 band). The probabilities stay in the operands' dtype.
        pl.f32_intermediates.insert(p.ops[pt->scores].output);
        if (pt->scale) pl.f32_intermediates.insert(p.ops[pt->scale].output);
        if (pt->mask) pl.f32_intermediates.insert(p.ops[pt->mask].output);
        Status st = pl.add_gemm(mm);
        if (st) return true;
        return not_expressible(
            mm, "attention with head dims E=" + std::to_string(q.shape.back()) + ", F=" +
                    std::to_string(v.shape.back()) + ": the fused kernel does not fit (" +
                    misfit(16, 16) + "), and the unfused path is refused: " + st.error().message);
    }
    for (size_t j : {pt->scale, pt->mask, pt->softmax, pt->out})
        if (j) pl.done[j] = true;
    for (size_t j : pt->dropouts) pl.done[j] = true;
    DType value = DType::kF32;
    const Op& out = p.ops[pt->out];
    // The CUTLASS kernels write O themselves (a chain that only stores it): where one applies
    // the element-wise consumers of O stay their own kernels (a pass over O, small next to the
    // products) rather than keep the WMMA kernel for its chain; the WMMA seed variant absorbs.
    const bool cutlass =
        std::any_of(candidates.begin(), candidates.end(), [](const dsl::Kernel& c) {
            return c.attention.impl != dsl::AttentionImpl::kWmma;
        });
    if (auto st = cutlass ? pl.emit_store(kn, value, out.output, out)
                          : pl.absorb(kn, out.output, value, out);
        !st)
        return st.error();
    PlannedKernel pk{{}, mm.json_path + " attention"};
    for (dsl::Kernel& c : candidates) {
        c.chain = kn.chain;
        pk.candidates.push_back(std::move(c));
    }
    pl.kernels.push_back(std::move(pk));
    return true;
}

}  // namespace kforge::planner::detail
