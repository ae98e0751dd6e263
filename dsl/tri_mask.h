// What a rowwise `tril` / `triu` kernel computes against its problem, stated once for the
// checker and the lowering (inline: codegen reads it without linking the dsl stage).
//
// The kernel keeps element (i, j) of x's last two dims where j - i <= diagonal (tril) or
// j - i >= diagonal (triu) and writes `fill` elsewhere. Its problem op is the one reading x
// (else the first that fits): a tril / triu op (fill 0), or a masked_fill with a structured
// mask (problem/problem.h TriMask), which keeps the other triangle - masked_fill(x, triu d, v)
// is "keep tril d - 1, fill v", masked_fill(x, tril d, v) is "keep triu d + 1, fill v".
#pragma once

#include <cstdint>
#include <string>

#include "problem/problem.h"

namespace kforge::dsl {

struct TriKeep {
    int64_t diagonal = 0;  // the kept triangle's diagonal
    double fill = 0.0;     // what the other elements become
    bool found = false;
};

inline TriKeep tri_keep_of(const Problem& problem, bool lower, const std::string& x) {
    TriKeep out;
    for (const Op& op : problem.ops) {
        TriKeep k{0, 0.0, true};
        if (op.kind == (lower ? OpKind::kTril : OpKind::kTriu)) {
            k.diagonal = op.attrs.diagonal;
        } else if (op.kind == OpKind::kMaskedFill &&
                   op.attrs.tri_mask == (lower ? TriMask::kTriu : TriMask::kTril)) {
            k.diagonal = op.attrs.diagonal + (lower ? -1 : 1);
            k.fill = op.attrs.scalar;
        } else {
            continue;
        }
        if (op.inputs[0] == x) return k;
        if (!out.found) out = k;
    }
    return out;
}

}  // namespace kforge::dsl
