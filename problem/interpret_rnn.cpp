// The fp64 interpreter's lstm and gru (problem/rnn.h), exactly PyTorch's nn.LSTM / nn.GRU:
//   lstm: i, f, g, o = W_ih x + b_ih + W_hh h + b_hh (four chunks of H); c' = s(f) c + s(i) tanh(g);
//         h' = s(o) tanh(c')
//   gru:  r, z = s(W_i{r,z} x + b_i{r,z} + W_h{r,z} h + b_h{r,z});
//         n = tanh(W_in x + b_in + r (W_hn h + b_hn)); h' = (1 - z) n + z h
// layer by layer; a reverse direction walks t from T-1 down to 0; a layer's output at t is its
// directions' h concatenated, the next layer's input.
#include <cmath>

#include "problem/interpret_ops.h"
#include "problem/rnn.h"

namespace kforge::interp {
namespace {

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

}  // namespace

std::vector<double> eval_rnn(const OpArgs& a) {
    const Op& op = a.op;
    const RnnGeometry g = rnn_geometry(op, a.inputs[0]->shape, a.inputs[1]->shape);
    const int64_t T = g.seq, B = g.batch, H = g.hidden, D = g.dirs, G = g.gates;
    const std::vector<double>& x = *a.data[0];
    // the current layer's input [T, B, I_l]
    std::vector<double> in(static_cast<size_t>(T * B * g.input));
    for (int64_t t = 0; t < T; ++t)
        for (int64_t b = 0; b < B; ++b)
            for (int64_t k = 0; k < g.input; ++k)
                in[(t * B + b) * g.input + k] =
                    x[(g.batch_first ? b * T + t : t * B + b) * g.input + k];
    std::vector<double> h_n(static_cast<size_t>(g.layers * D * B * H));
    std::vector<double> c_n(h_n.size());
    std::vector<double> out;
    std::vector<double> gates(static_cast<size_t>(G * H)), hg(static_cast<size_t>(G * H));
    for (int64_t l = 0; l < g.layers; ++l) {
        const int64_t I = g.layer_input(l);
        out.assign(static_cast<size_t>(T * B * D * H), 0.0);
        for (int64_t d = 0; d < D; ++d) {
            auto w = [&](int which) -> const std::vector<double>& {
                return *a.data[rnn_weight_index(op.kind, op.attrs, l, d, which)];
            };
            const std::vector<double>& w_ih = w(0);
            const std::vector<double>& w_hh = w(1);
            const int64_t s = l * D + d;  // h0 / h_n slot
            for (int64_t b = 0; b < B; ++b) {
                std::vector<double> h(a.data[1]->begin() + (s * B + b) * H,
                                      a.data[1]->begin() + (s * B + b + 1) * H);
                std::vector<double> c(static_cast<size_t>(H), 0.0);
                if (g.lstm) c.assign(a.data[2]->begin() + (s * B + b) * H,
                                     a.data[2]->begin() + (s * B + b + 1) * H);
                for (int64_t step = 0; step < T; ++step) {
                    const int64_t t = d == 0 ? step : T - 1 - step;
                    const double* xt = &in[(t * B + b) * I];
                    for (int64_t r = 0; r < G * H; ++r) {
                        double gi = g.bias ? w(2)[r] : 0.0, gh = g.bias ? w(3)[r] : 0.0;
                        for (int64_t k = 0; k < I; ++k) gi += w_ih[r * I + k] * xt[k];
                        for (int64_t k = 0; k < H; ++k) gh += w_hh[r * H + k] * h[k];
                        gates[r] = gi;
                        hg[r] = gh;
                    }
                    for (int64_t j = 0; j < H; ++j) {
                        if (g.lstm) {
                            const double i_ = sigmoid(gates[j] + hg[j]);
                            const double f_ = sigmoid(gates[H + j] + hg[H + j]);
                            const double g_ = std::tanh(gates[2 * H + j] + hg[2 * H + j]);
                            const double o_ = sigmoid(gates[3 * H + j] + hg[3 * H + j]);
                            c[j] = f_ * c[j] + i_ * g_;
                            h[j] = o_ * std::tanh(c[j]);
                        } else {
                            const double r_ = sigmoid(gates[j] + hg[j]);
                            const double z_ = sigmoid(gates[H + j] + hg[H + j]);
                            const double n_ = std::tanh(gates[2 * H + j] + r_ * hg[2 * H + j]);
                            h[j] = (1.0 - z_) * n_ + z_ * h[j];
                        }
                    }
                    for (int64_t j = 0; j < H; ++j) out[(t * B + b) * D * H + d * H + j] = h[j];
                }
                for (int64_t j = 0; j < H; ++j) {
                    h_n[(s * B + b) * H + j] = h[j];
                    c_n[(s * B + b) * H + j] = c[j];
                }
            }
        }
        in = out;
    }
    if (op.attrs.rnn_result == RnnResult::kHn) return h_n;
    if (op.attrs.rnn_result == RnnResult::kCn) return c_n;
    if (!g.batch_first) return out;
    std::vector<double> y(out.size());
    const int64_t F = D * H;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t b = 0; b < B; ++b)
            for (int64_t f = 0; f < F; ++f) y[(b * T + t) * F + f] = out[(t * B + b) * F + f];
    return y;
}

}  // namespace kforge::interp
