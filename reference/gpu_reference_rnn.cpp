// rnn_reference_kernel: block b computes batch element b. Per layer and direction a device
// function walks the steps: every thread takes gate rows r (stride blockDim), sums
// b_ih[r] + W_ih[r,:] x_t and b_hh[r] + W_hh[r,:] h in k order (the interpreter's), then every
// thread takes hidden units j for the cell update; barriers between. The layer input is x (with
// its batch_first stride) or the previous layer's sequence in the scratch.
#include "reference/gpu_reference_rnn.h"

#include <sstream>

#include "problem/rnn.h"

namespace kforge::eval {
namespace {

std::string lit(int64_t x) { return "(" + std::to_string(x) + "LL)"; }

}  // namespace

Expected<std::string> rnn_reference_kernel(const Op& op, const std::vector<const Tensor*>& in,
                                           const Tensor& out, const std::string& symbol,
                                           ReferenceLaunch& launch) {
    if (in.size() != rnn_operand_count(op.kind, op.attrs) || in[0]->shape.size() != 3 ||
        in[1]->shape.size() != 3)
        return make_error(op.json_path, "rnn operands do not match its attributes");
    const RnnGeometry g = rnn_geometry(op, in[0]->shape, in[1]->shape);
    const int64_t T = g.seq, B = g.batch, H = g.hidden, D = g.dirs, DH = D * H, GH = g.gates * H;
    const int64_t per = 2 * T * DH + 2 * GH + 2 * H;  // scratch doubles per batch element
    if (B > (int64_t{1} << 31) - 1) return make_error(op.json_path, "batch above 2^31-1 blocks");
    launch.grid[0] = static_cast<unsigned>(B);
    launch.block[0] = 256;
    const std::string f = symbol + "_dir", scratch = symbol + "_scratch";
    std::ostringstream s;
    s << "__device__ double " << scratch << "[" << B * per << "];\n"
      << "__device__ void " << f << "(const double* in, i64 in_stride, i64 I, const double* wih, "
      << "const double* whh, const double* bih, const double* bhh, const double* h0, "
      << "const double* c0, double* seq, i64 off, int reverse, double* gi, double* gh, "
      << "double* h, double* c, double* hn, double* cn) {\n"
      << "    for (i64 j = threadIdx.x; j < " << lit(H) << "; j += blockDim.x) {\n"
      << "        h[j] = h0[j]; c[j] = c0 ? c0[j] : 0.0;\n    }\n"
      << "    __syncthreads();\n"
      << "    for (i64 step = 0; step < " << lit(T) << "; ++step) {\n"
      << "        const i64 t = reverse ? " << lit(T - 1) << " - step : step;\n"
      << "        const double* xt = in + t * in_stride;\n"
      << "        for (i64 r = threadIdx.x; r < " << lit(GH) << "; r += blockDim.x) {\n"
      << "            double a = bih ? bih[r] : 0.0, e = bhh ? bhh[r] : 0.0;\n"
      << "            for (i64 k = 0; k < I; ++k) a += wih[r * I + k] * xt[k];\n"
      << "            for (i64 k = 0; k < " << lit(H) << "; ++k) e += whh[r * " << lit(H)
      << " + k] * h[k];\n"
      << "            gi[r] = a; gh[r] = e;\n        }\n"
      << "        __syncthreads();\n"
      << "        for (i64 j = threadIdx.x; j < " << lit(H) << "; j += blockDim.x) {\n";
    if (g.lstm) {
        s << "            const double ig = ref_sigmoid(gi[j] + gh[j]);\n"
          << "            const double fg = ref_sigmoid(gi[" << lit(H) << " + j] + gh[" << lit(H)
          << " + j]);\n"
          << "            const double gg = tanh(gi[" << lit(2 * H) << " + j] + gh[" << lit(2 * H)
          << " + j]);\n"
          << "            const double og = ref_sigmoid(gi[" << lit(3 * H) << " + j] + gh["
          << lit(3 * H) << " + j]);\n"
          << "            c[j] = fg * c[j] + ig * gg;\n"
          << "            h[j] = og * tanh(c[j]);\n";
    } else {
        s << "            const double rg = ref_sigmoid(gi[j] + gh[j]);\n"
          << "            const double zg = ref_sigmoid(gi[" << lit(H) << " + j] + gh[" << lit(H)
          << " + j]);\n"
          << "            const double ng = tanh(gi[" << lit(2 * H) << " + j] + rg * gh["
          << lit(2 * H) << " + j]);\n"
          << "            h[j] = (1.0 - zg) * ng + zg * h[j];\n";
    }
    s << "            seq[t * " << lit(DH) << " + off + j] = h[j];\n        }\n"
      << "        __syncthreads();\n    }\n"
      << "    for (i64 j = threadIdx.x; j < " << lit(H) << "; j += blockDim.x) {\n"
      << "        if (hn) hn[j] = h[j];\n        if (cn) cn[j] = c[j];\n    }\n"
      << "    __syncthreads();\n}\n";

    s << "extern \"C\" __global__ void __launch_bounds__(256) " << symbol << "(";
    for (size_t i = 0; i < in.size(); ++i) s << "const double* __restrict__ p" << i << ", ";
    s << "double* __restrict__ y) {\n"
      << "    const i64 b = blockIdx.x;\n"
      << "    double* base = " << scratch << " + b * " << lit(per) << ";\n"
      << "    double* seq0 = base;\n    double* seq1 = base + " << lit(T * DH) << ";\n"
      << "    double* gi = base + " << lit(2 * T * DH) << ";\n"
      << "    double* gh = gi + " << lit(GH) << ";\n    double* h = gh + " << lit(GH) << ";\n"
      << "    double* c = h + " << lit(H) << ";\n";
    const RnnResult result = op.attrs.rnn_result;
    for (int64_t l = 0; l < g.layers; ++l) {
        const std::string in_ptr =
            l == 0 ? (g.batch_first ? "p0 + b * " + lit(T * g.input) : "p0 + b * " + lit(g.input))
                   : ((l - 1) % 2 ? "seq1" : "seq0");
        const std::string in_stride =
            l == 0 ? (g.batch_first ? lit(g.input) : lit(B * g.input)) : lit(DH);
        for (int64_t d = 0; d < D; ++d) {
            auto p = [&](int which) {
                return "p" + std::to_string(rnn_weight_index(op.kind, op.attrs, l, d, which));
            };
            const int64_t slot = l * D + d;
            const std::string state = lit((slot * B) * H) + " + b * " + lit(H);
            s << "    " << f << "(" << in_ptr << ", " << in_stride << ", "
              << lit(g.layer_input(l)) << ", " << p(0) << ", " << p(1) << ", "
              << (g.bias ? p(2) : "nullptr") << ", " << (g.bias ? p(3) : "nullptr") << ", p1 + "
              << state << ", " << (g.lstm ? "p2 + " + state : "nullptr") << ", "
              << (l % 2 ? "seq1" : "seq0") << ", " << lit(d * H) << ", " << d << ", gi, gh, h, c, "
              << (result == RnnResult::kHn ? "y + " + state : "nullptr") << ", "
              << (result == RnnResult::kCn ? "y + " + state : "nullptr") << ");\n";
        }
    }
    if (result == RnnResult::kOutput) {
        const std::string last = (g.layers - 1) % 2 ? "seq1" : "seq0";
        s << "    for (i64 e = threadIdx.x; e < " << lit(T * DH) << "; e += blockDim.x) {\n"
          << "        const i64 t = e / " << lit(DH) << ", f = e % " << lit(DH) << ";\n"
          << "        y[(" << (g.batch_first ? "b * " + lit(T) + " + t" : "t * " + lit(B) + " + b")
          << ") * " << lit(DH) << " + f] = " << last << "[e];\n    }\n";
    }
    s << "}\n";
    (void)out;
    return s.str();
}

}  // namespace kforge::eval
