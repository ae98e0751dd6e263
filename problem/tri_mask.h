// Structured masks (problem.h TriMask: masked_fill's "mask": "tril" / "triu" with a diagonal),
// what they leave to compute, stated once for the work counts (and so the SOL bounds), the
// attention kernels and the time model.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "problem/problem.h"
#include "problem/work.h"

namespace kforge {

// The fraction of an S x L score matrix a structured mask leaves unmasked (1 without one): what
// a kernel skipping the masked tiles computes, about half for a causal mask (triu 1) over S = L.
inline double tri_mask_density(TriMask mask, int64_t diagonal, int64_t s, int64_t l) {
    if (mask == TriMask::kNone || s <= 0 || l <= 0) return 1.0;
    double open = 0.0;  // row i keeps j - i < d (triu masks j - i >= d) or j - i > d (tril)
    for (int64_t i = 0; i < s; ++i)
        open += static_cast<double>(mask == TriMask::kTriu
                                        ? std::clamp<int64_t>(i + diagonal, 0, l)
                                        : l - std::clamp<int64_t>(i + diagonal + 1, 0, l));
    return open / (static_cast<double>(s) * static_cast<double>(l));
}

// Attention under a structured mask filled with -inf: matmul(Q, K^T) -> [scale] -> masked_fill
// (structured) -> softmax -> [dropout] -> matmul(., V), each intermediate read by the next op
// alone. The masked scores are exp(-inf) = 0 and need no products, so both matmuls' matrix
// FLOPs count only the unmasked fraction (tri_mask_density); `w` is updated in place.
inline void discount_masked_attention(const Problem& p, WorkCount& w) {
    if (w.per_op.size() != p.ops.size()) return;
    std::map<std::string, std::vector<size_t>> readers;
    for (size_t i = 0; i < p.ops.size(); ++i)
        for (const std::string& in : p.ops[i].inputs) readers[in].push_back(i);
    auto sole = [&](const std::string& t) -> const Op* {
        auto it = readers.find(t);
        if (it == readers.end() || it->second.size() != 1) return nullptr;
        for (const std::string& o : p.outputs)
            if (o == t) return nullptr;
        return &p.ops[it->second.front()];
    };
    for (size_t i = 0; i < p.ops.size(); ++i) {
        const Op& mm = p.ops[i];
        if (mm.kind != OpKind::kMatmul) continue;
        const Op* o = sole(mm.output);
        if (o && o->kind == OpKind::kScale) o = sole(o->output);
        if (!o || o->kind != OpKind::kMaskedFill || o->attrs.tri_mask == TriMask::kNone ||
            !(std::isinf(o->attrs.scalar) && o->attrs.scalar < 0))
            continue;
        const Op* mask = o;
        o = sole(o->output);
        if (!o || o->kind != OpKind::kSoftmax) continue;
        o = sole(o->output);
        while (o && o->kind == OpKind::kDropout) o = sole(o->output);
        if (!o || o->kind != OpKind::kMatmul) continue;
        const Tensor* scores = p.find_tensor(mm.output);
        if (!scores || scores->shape.size() < 2) continue;
        const size_t r = scores->shape.size();
        const double density = tri_mask_density(mask->attrs.tri_mask, mask->attrs.diagonal,
                                                 scores->shape[r - 2], scores->shape[r - 1]);
        const size_t pv = static_cast<size_t>(o - p.ops.data());
        for (size_t j : {i, pv}) {
            w.flops_matrix -= w.per_op[j].flops_matrix * (1.0 - density);
            w.per_op[j].flops_matrix *= density;
        }
    }
}

}  // namespace kforge
