// Where an attention kernel may run as CUTLASS's memory-efficient attention (`impl cutlass_mea`:
// the forward kernel of CUTLASS's examples/41_fused_multi_head_attention, kernel_forward.h - the
// kernel PyTorch's "efficient" SDPA backend runs - included from the installed CUTLASS package,
// never copied), stated once for the checker, the planner, the lowering and the time model
// (inline: codegen and perfmodel read it without linking the dsl stage).
//
// The kernel computes O = softmax(scale * Q K^T [+ M]) V on the tensor cores with mma.sync
// (sm_80 code, which runs on Hopper too): 16-bit Q, K, V in their own type, f32 ones as 3xTF32
// (OpMultiplyAddFastF32: about f32 accuracy, what PyTorch's efficient backend does for f32),
// accumulating in f32. Unlike the Hopper FMHA it takes any head dims E (Q, K) and F (V) that are
// multiples of 4, an additive mask of the inputs' dtype broadcast over the batch dims, the
// scores' rows or both (its attn_bias), and a causal mask with any positive diagonal (triu d
// filled with -inf: its CausalFromTopLeft with causal_diagonal_offset = d - 1). kforge runs it
// with every batch dim folded into the kernel's batch (num_heads 1): Q, K, V and O packed
// [batch.., rows, D], so a mask must fold the same way (each batch dim present in it, or each
// broadcast). The tile (query rows x key rows) is one PyTorch instantiates for sm_80; a head
// dim past the key tile makes the kernel loop over the value columns (kMaxK unbounded), and the
// 16-bit kernel then accumulates O in an f32 workspace. A bool mask filled with -inf (adding
// -inf is filling it) is first converted to that additive form by a launch of its own, into a
// workspace of the inputs' dtype and the mask's shape.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "dsl/attention.h"
#include "problem/problem.h"

namespace kforge::dsl {

// The tiles PyTorch's memory-efficient backend instantiates for sm_80 (query rows x key rows).
struct MeaInstance {
    int m, n;
};
inline constexpr MeaInstance kMeaInstances[] = {{64, 64}, {64, 128}, {32, 128}};

// kernel_forward.h's kMaxK for a tile and head dims: the key tile when both head dims fit in it
// (one pass over the value columns, O kept in registers), else unbounded.
inline constexpr int64_t kMeaUnboundedK = 65536;
inline int64_t mea_max_k(int n, int64_t e, int64_t f) {
    return std::max(e, f) <= n ? n : kMeaUnboundedK;
}
// Elements of a 16-byte vector: the aligned kernel's access width (the unaligned one reads 4).
inline int64_t mea_vector(DType t) { return t == DType::kF32 ? 4 : 8; }

// What the rule reads of a kernel and its problem.
struct MeaFacts {
    DType q = DType::kF32, k = DType::kF32, v = DType::kF32;
    std::optional<DType> out;  // the stored tensor's dtype, where known
    int64_t s = 0, e = 0, f = 0, l = 0;
    int64_t batch = 1;  // the product of the batch dims (the kernel's grid z)
    bool mask = false;
    DType mask_dtype = DType::kF32;
    double mask_fill = 0.0;   // a bool mask's masked_fill value (dsl/attention.h)
    bool mask_keys = true;    // the mask has the key dim (not broadcast along the keys)
    bool mask_folds = true;   // its batch dims are all present or all broadcast (one stride)
    bool mask_rows = false;   // it has the query rows (S > 1): its rows are L apart, else 0
    bool mask_batch = false;  // it has the batch dims (those of extent > 1): a batch stride
    TriMask tri = TriMask::kNone;  // the kernel's structured mask, its diagonal and fill
    int64_t tri_diagonal = 0;
    double tri_fill = 0.0;
    double scale = 1.0;
    int cc_major = 9;  // the target's compute capability
};

inline std::string mea_tile_text(int m, int n) {
    return std::to_string(m) + "x" + std::to_string(n);
}

// Whether the aligned kernel (16-byte accesses) serves the facts; else the unaligned one (4
// elements), which mea_misfit requires.
inline bool mea_aligned(const MeaFacts& f) {
    const int64_t a = mea_vector(f.q);
    return f.e % a == 0 && f.f % a == 0 && (!f.mask || f.l % a == 0);
}

// Why `c`'s CUTLASS memory-efficient attention cannot compute the kernel `f` describes; empty
// when it can.
inline std::string mea_misfit(const AttentionConfig& c, const MeaFacts& f) {
    if (f.cc_major < 8) return "CUTLASS's memory-efficient attention needs sm_80 or later";
    if (f.q != DType::kF32 && f.q != DType::kBF16 && f.q != DType::kF16)
        return "CUTLASS's memory-efficient attention reads f32, bf16 or f16 (inputs " +
               std::string(to_string(f.q)) + ")";
    if (f.k != f.q || f.v != f.q || (f.out && *f.out != f.q))
        return "CUTLASS's memory-efficient attention needs Q, K, V and O of one dtype";
    if (f.e % 4 != 0 || f.f % 4 != 0)
        return "head dims E=" + std::to_string(f.e) + ", F=" + std::to_string(f.f) +
               " must be multiples of 4 (the kernel's minimum access)";
    if (f.mask) {
        if (f.mask_dtype == DType::kBool && !(f.mask_fill < 0 && std::isinf(f.mask_fill)))
            return "a bool mask filled with " + std::to_string(f.mask_fill) + " is not an "
                   "addition (only -inf is: the kernel adds its mask)";
        if (f.mask_dtype != DType::kBool && f.mask_dtype != f.q)
            return "CUTLASS's memory-efficient attention adds a mask of the inputs' dtype (mask " +
                   std::string(to_string(f.mask_dtype)) + ", inputs " +
                   std::string(to_string(f.q)) + ")";
        if (!f.mask_keys) return "the mask is broadcast along the keys (the kernel reads its rows)";
        if (!f.mask_folds)
            return "the mask is present along some batch dims and broadcast along others (the "
                   "kernel takes one batch stride)";
        if (f.l % 4 != 0)
            return "key rows L=" + std::to_string(f.l) + " must be a multiple of 4 with a mask "
                   "(its rows are read 4 elements at a time)";
    }
    const bool minus_inf = f.tri_fill < 0 && std::isinf(f.tri_fill);
    if (f.tri != TriMask::kNone && (f.tri != TriMask::kTriu || f.tri_diagonal < 1 || !minus_inf))
        return "CUTLASS's memory-efficient attention masks only causally (triu d >= 1, filled "
               "with -inf)";
    if (!(f.scale > 0))
        return "scale must be positive (the kernel scales the row max it subtracts)";
    if (f.batch > 65535)
        return "batch entries " + std::to_string(f.batch) + " past the grid's 65535 (its z)";
    const int64_t widest = std::max(f.e, f.f);
    bool offered = false;
    for (const MeaInstance& i : kMeaInstances)
        offered = offered || (i.m == c.mea_m && i.n == c.mea_n);
    if (!offered) {
        std::string list;
        for (const MeaInstance& i : kMeaInstances)
            list += (list.empty() ? "" : ", ") + mea_tile_text(i.m, i.n);
        return "mea_tile " + mea_tile_text(c.mea_m, c.mea_n) + " is not one PyTorch's sm_80 "
               "kernels instantiate (" + list + ")";
    }
    if (c.mea_n == 64 && widest > 64)
        return "mea_tile 64x64 holds head dims up to 64 (E=" + std::to_string(f.e) + ", F=" +
               std::to_string(f.f) + "); 32x128 takes any";
    if (c.mea_m == 64 && c.mea_n == 128 && (f.q == DType::kF32 || widest > 128))
        return "mea_tile 64x128 is a 16-bit tile for head dims up to 128; 32x128 takes any";
    return "";
}

// The planner's tiles for head dims e, f and inputs `t`, best first (PyTorch's choice first).
inline std::vector<MeaInstance> mea_instances_for(DType t, int64_t e, int64_t f) {
    const int64_t widest = std::max(e, f);
    std::vector<MeaInstance> out;
    if (widest <= 64) out.push_back({64, 64});
    if (widest <= 128 && t != DType::kF32) out.push_back({64, 128});
    out.push_back({32, 128});
    return out;
}

// The mask's facts from its extents and the scores' [batch.., S, L] (both right-aligned; an
// extent of 1 where the scores' is not is broadcast).
inline void mea_mask_facts(MeaFacts& f, const std::vector<int64_t>& mask,
                           const std::vector<int64_t>& scores) {
    const size_t r = scores.size(), rm = std::min(mask.size(), r);
    auto present = [&](size_t i) {  // scores dim i is in the mask (not broadcast)
        if (i + rm < r) return false;
        return mask[mask.size() - (r - i)] != 1 || scores[i] == 1;
    };
    f.mask_keys = r >= 1 && present(r - 1);
    f.mask_rows = r >= 2 && present(r - 2) && scores[r - 2] != 1;
    int with = 0, without = 0;
    for (size_t i = 0; i + 2 < r; ++i) {
        if (scores[i] == 1) continue;  // either way
        (present(i) ? with : without) += 1;
    }
    f.mask_folds = with == 0 || without == 0;
    f.mask_batch = with > 0;
}

// An attention operand as the rule sees it: its dtype and extents (0 where one is unknown; a
// mask's shape empty where it is unknown).
struct MeaOperand {
    DType dtype = DType::kF32;
    std::vector<int64_t> shape;
};

// The facts of `attention(Q, K, V [, M])` with `c`'s structured mask and scale in `problem` (a
// bool mask's fill: the problem's masked_fill reading `mask_name`), for a target of
// `cc_major`; the checker, the planner and the lowering each pass what they know.
inline MeaFacts mea_facts(const AttentionConfig& c, const Problem& problem, const MeaOperand& q,
                          const MeaOperand& k, const MeaOperand& v, const MeaOperand* mask,
                          const std::string& mask_name, int cc_major) {
    auto from_end = [](const std::vector<int64_t>& shape, size_t i) -> int64_t {
        return shape.size() >= i ? shape[shape.size() - i] : 0;
    };
    MeaFacts f;
    f.q = q.dtype, f.k = k.dtype, f.v = v.dtype;
    f.s = from_end(q.shape, 2), f.e = from_end(q.shape, 1);
    f.l = from_end(k.shape, 2), f.f = from_end(v.shape, 1);
    std::vector<int64_t> scores;
    for (size_t i = 0; i + 2 < q.shape.size(); ++i) {
        scores.push_back(q.shape[i]);
        f.batch *= std::max<int64_t>(1, q.shape[i]);
    }
    scores.push_back(f.s), scores.push_back(f.l);
    if (mask) {
        f.mask = true;
        f.mask_dtype = mask->dtype;
        f.mask_fill = attention_mask_fill(problem, mask_name);
        if (!mask->shape.empty()) mea_mask_facts(f, mask->shape, scores);
    }
    f.tri = c.tri_mask, f.tri_diagonal = c.tri_diagonal;
    f.tri_fill = attention_tri_fill(problem, c.tri_mask, c.tri_diagonal);
    f.scale = c.scale.value_or(1.0);
    f.cc_major = cc_major;
    return f;
}

}  // namespace kforge::dsl
