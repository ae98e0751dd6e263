// The recurrent layers (lstm, gru) stated once: their operand layout and sizes, which the shape
// inference, the work counts, the fp64 interpreter, the GPU reference and the lowering read.
//
// Operands, as PyTorch's nn.LSTM / nn.GRU hold them: x [T, B, I] ([B, T, I] with batch_first),
// h0 [L*D, B, H], c0 [L*D, B, H] (lstm only), then for each layer l and direction d (d = 1 is
// the `_reverse` weights) w_ih [G*H, I_l], w_hh [G*H, H] and, with bias, b_ih [G*H], b_hh [G*H];
// G = 4 gates (lstm: i, f, g, o) or 3 (gru: r, z, n), I_0 = I and I_l = D*H above.
#pragma once

#include <cstdint>
#include <vector>

#include "problem/problem.h"

namespace kforge {

struct RnnGeometry {
    bool lstm = true;
    int64_t seq = 1;       // T
    int64_t batch = 1;     // B
    int64_t input = 1;     // I (layer 0's input features)
    int64_t hidden = 1;    // H
    int64_t layers = 1;    // L
    int64_t dirs = 1;      // D: 2 when bidirectional
    int64_t gates = 4;     // G
    bool bias = true;
    bool batch_first = false;
    int64_t layer_input(int64_t l) const { return l == 0 ? input : dirs * hidden; }
};

inline bool is_rnn(OpKind k) { return k == OpKind::kLstm || k == OpKind::kGru; }

// The number of operands an rnn op with these attributes takes.
size_t rnn_operand_count(OpKind kind, const OpAttrs& a);
// The first weight operand's index (after x, h0 and lstm's c0).
inline size_t rnn_state_count(OpKind kind) { return kind == OpKind::kLstm ? 3 : 2; }
// The operand index of layer l, direction d's weight `which`: 0 w_ih, 1 w_hh, 2 b_ih, 3 b_hh
// (2 and 3 only with bias).
size_t rnn_weight_index(OpKind kind, const OpAttrs& a, int64_t l, int64_t d, int which);
// PyTorch's name of that weight in the module's state_dict: weight_ih_l0, bias_hh_l2_reverse.
std::string rnn_weight_name(int64_t l, int64_t d, int which);

// The geometry of a shape-checked op with operands of these shapes (x first, h0 second).
RnnGeometry rnn_geometry(const Op& op, const std::vector<int64_t>& x_shape,
                         const std::vector<int64_t>& h0_shape);

// The shared memory of one CTA of the persistent recurrent kernel that keeps `units` hidden units
// of every gate (kernels/rnn.cuh RnnCell: W_hh rows padded to H + 1, the staged h [B, H], the
// gate sums [2, B, G*units], the cell state [B, units]), in bytes: the checker's limit, the
// planner's choice and the launch's dynamic shared memory read it here.
inline int64_t rnn_recurrent_smem_bytes(bool lstm, int64_t batch, int64_t hidden, int64_t units) {
    const int64_t g = lstm ? 4 : 3;
    return 4 * (g * units * (hidden + 1) + batch * hidden + 2 * batch * g * units + batch * units);
}

}  // namespace kforge
