// problem/rnn.h: the recurrent ops' operand layout.
#include "problem/rnn.h"

#include <string>

namespace kforge {

std::string_view to_string(RnnResult r) {
    switch (r) {
        case RnnResult::kOutput: return "output";
        case RnnResult::kHn: return "h_n";
        case RnnResult::kCn: return "c_n";
    }
    return "?";
}

std::optional<RnnResult> rnn_result_from_string(std::string_view s) {
    for (RnnResult r : {RnnResult::kOutput, RnnResult::kHn, RnnResult::kCn})
        if (to_string(r) == s) return r;
    return std::nullopt;
}

size_t rnn_operand_count(OpKind kind, const OpAttrs& a) {
    const int64_t per = a.rnn_bias ? 4 : 2;
    return rnn_state_count(kind) +
           static_cast<size_t>(a.num_layers * (a.bidirectional ? 2 : 1) * per);
}

size_t rnn_weight_index(OpKind kind, const OpAttrs& a, int64_t l, int64_t d, int which) {
    const int64_t per = a.rnn_bias ? 4 : 2;
    const int64_t dirs = a.bidirectional ? 2 : 1;
    return rnn_state_count(kind) + static_cast<size_t>((l * dirs + d) * per + which);
}

std::string rnn_weight_name(int64_t l, int64_t d, int which) {
    static const char* kNames[] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
    return std::string(kNames[which]) + "_l" + std::to_string(l) + (d ? "_reverse" : "");
}

RnnGeometry rnn_geometry(const Op& op, const std::vector<int64_t>& x,
                         const std::vector<int64_t>& h0) {
    RnnGeometry g;
    g.lstm = op.kind == OpKind::kLstm;
    g.gates = g.lstm ? 4 : 3;
    g.batch_first = op.attrs.batch_first;
    g.seq = g.batch_first ? x[1] : x[0];
    g.batch = g.batch_first ? x[0] : x[1];
    g.input = x[2];
    g.hidden = h0[2];
    g.layers = op.attrs.num_layers;
    g.dirs = op.attrs.bidirectional ? 2 : 1;
    g.bias = op.attrs.rnn_bias;
    return g;
}

}  // namespace kforge
