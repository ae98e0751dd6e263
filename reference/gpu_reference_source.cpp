// generate_reference_program (reference/gpu_reference.h): one fp64 kernel per op of the graph, each
// a transcription of the interpreter's loop for that op (problem/interpret_*.cpp) with the
// shapes, strides and attributes baked in as literals.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "problem/conv_geometry.h"
#include "problem/interpret_ops.h"
#include "reference/gpu_reference.h"
#include "reference/gpu_reference_index.h"
#include "reference/gpu_reference_pool.h"
#include "reference/gpu_reference_rnn.h"
#include "reference/gpu_reference_shape.h"

namespace kforge::eval {
namespace {

constexpr int kThreads = 256;             // REF_THREADS in the library
constexpr int64_t kTile = 64;             // REF_TILE
constexpr int64_t kMaxGridX = 1 << 20;    // grid-stride loops cover the rest
constexpr int64_t kMaxGridYZ = 65535;

// A double as a CUDA literal that reads back bit for bit (hex float; non-finite via its bits).
std::string lit(double x) {
    char buf[64];
    if (std::isfinite(x)) {
        std::snprintf(buf, sizeof buf, "(%a)", x);
    } else {
        unsigned long long bits = 0;
        std::memcpy(&bits, &x, sizeof bits);
        std::snprintf(buf, sizeof buf, "__longlong_as_double(0x%016llxLL)", bits);
    }
    return buf;
}

std::string lit(int64_t x) { return "(" + std::to_string(x) + "LL)"; }

int64_t product(const std::vector<int64_t>& shape, size_t begin, size_t end) {
    int64_t n = 1;
    for (size_t i = begin; i < end && i < shape.size(); ++i) n *= shape[i];
    return n;
}

unsigned blocks_for(int64_t work, int64_t per_block, int64_t cap) {
    int64_t b = (work + per_block - 1) / per_block;
    return static_cast<unsigned>(std::clamp<int64_t>(b, 1, cap));
}

struct OpView {
    const Op& op;
    std::vector<const Tensor*> in;
    const Tensor& out;
    std::string name;  // kernel symbol
};

// "const double* __restrict__ p0, ..., double* __restrict__ y"
std::string signature(const OpView& v) {
    std::string s = "extern \"C\" __global__ void __launch_bounds__(256) " + v.name + "(";
    for (size_t i = 0; i < v.in.size(); ++i)
        s += "const double* __restrict__ p" + std::to_string(i) + ", ";
    return s + "double* __restrict__ y)";
}

std::string unary_expr(const Op& op) {
    const OpAttrs& a = op.attrs;
    switch (op.kind) {
        case OpKind::kScale: return "v * " + lit(a.scalar);
        case OpKind::kAddScalar: return "v + " + lit(a.scalar);
        case OpKind::kMinScalar: return "ref_min_scalar(v, " + lit(a.scalar) + ")";
        case OpKind::kMaxScalar: return "ref_max_scalar(v, " + lit(a.scalar) + ")";
        case OpKind::kRelu: return "ref_relu(v)";
        case OpKind::kLeakyRelu: return "ref_leaky_relu(v, " + lit(a.negative_slope) + ")";
        case OpKind::kGelu:
            if (a.gelu == GeluApprox::kTanh)
                return "ref_gelu_tanh(v, " + lit(std::sqrt(2.0 / M_PI)) + ")";
            return "ref_gelu_erf(v, " + lit(std::sqrt(2.0)) + ")";
        case OpKind::kSilu: return "v * ref_sigmoid(v)";
        case OpKind::kSigmoid: return "ref_sigmoid(v)";
        case OpKind::kTanh: return "tanh(v)";
        case OpKind::kMish: return "ref_mish(v)";
        case OpKind::kHardtanh:
        case OpKind::kClamp: return "ref_clamp(v, " + lit(a.lo) + ", " + lit(a.hi) + ")";
        case OpKind::kSoftplus:
            return "ref_softplus(v, " + lit(a.beta) + ", " + lit(a.threshold) + ")";
        case OpKind::kExp: return "exp(v)";
        case OpKind::kLog: return "log(v)";
        case OpKind::kDropout: return "v";
        case OpKind::kNeg: return "-v";
        case OpKind::kAbs: return "fabs(v)";
        case OpKind::kSqrt: return "sqrt(v)";
        case OpKind::kRsqrt: return "1.0 / sqrt(v)";
        case OpKind::kSquare: return "v * v";
        case OpKind::kErf: return "erf(v)";
        case OpKind::kLog1p: return "log1p(v)";
        case OpKind::kExpm1: return "expm1(v)";
        case OpKind::kSin: return "sin(v)";
        case OpKind::kCos: return "cos(v)";
        case OpKind::kSign: return "ref_sign(v)";
        case OpKind::kReciprocal: return "1.0 / v";
        default: return "";
    }
}

std::string grid_stride_elements(int64_t n) {
    return "    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < " + lit(n) +
           "; e += (i64)gridDim.x * blockDim.x) {\n";
}

Expected<std::string> elementwise(const OpView& v, ReferenceLaunch& launch) {
    int64_t n = v.out.numel();
    launch.grid[0] = blocks_for(n, kThreads, kMaxGridX);
    launch.block[0] = kThreads;
    std::ostringstream s;
    s << signature(v) << " {\n" << grid_stride_elements(n);
    if (v.in.size() == 1) {
        std::string expr = unary_expr(v.op);
        if (expr.empty()) return make_error(v.op.json_path, "no GPU reference for this op");
        s << "        double v = p0[e];\n        y[e] = " << expr << ";\n    }\n}\n";
        return s.str();
    }
    const char* sym = v.op.kind == OpKind::kAdd   ? "+"
                      : v.op.kind == OpKind::kSub ? "-"
                      : v.op.kind == OpKind::kMul ? "*"
                      : v.op.kind == OpKind::kDiv ? "/"
                                                  : nullptr;
    const char* fn = v.op.kind == OpKind::kMaximum   ? "ref_maximum"
                     : v.op.kind == OpKind::kMinimum ? "ref_minimum"
                                                     : nullptr;
    if ((!sym && !fn) || v.in.size() != 2)
        return make_error(v.op.json_path, "no GPU reference for this op");
    const std::vector<int64_t>& shape = v.out.shape;
    std::vector<int64_t> sx = interp::broadcast_strides(v.in[0]->shape, shape);
    std::vector<int64_t> sy = interp::broadcast_strides(v.in[1]->shape, shape);
    s << "        i64 r = e, ix = 0, iy = 0;\n";
    for (size_t d = shape.size(); d-- > 0;) {
        if (shape[d] == 1) continue;
        s << "        { i64 c = r % " << lit(shape[d]) << "; r /= " << lit(shape[d])
          << "; ix += c * " << lit(sx[d]) << "; iy += c * " << lit(sy[d]) << "; }\n";
    }
    if (fn) s << "        y[e] = " << fn << "(p0[ix], p1[iy]);\n    }\n}\n";
    else s << "        y[e] = p0[ix] " << sym << " p1[iy];\n    }\n}\n";
    return s.str();
}

Expected<std::string> matrix(const OpView& v, ReferenceLaunch& launch) {
    const Tensor &ta = *v.in[0], &tb = *v.in[1];
    size_t ro = v.out.shape.size();
    int64_t m = 0, n = 0, k = 0, batches = 1;
    bool trans_a = false, trans_b = true;
    std::string batch_code, bias = "nullptr";
    if (v.op.kind == OpKind::kMatmul) {
        trans_a = v.op.attrs.transpose_a;
        trans_b = v.op.attrs.transpose_b;
        size_t ra = ta.shape.size();
        m = v.out.shape[ro - 2];
        n = v.out.shape[ro - 1];
        k = trans_a ? ta.shape[ra - 2] : ta.shape[ra - 1];
        std::vector<int64_t> batch_out(v.out.shape.begin(), v.out.shape.end() - 2);
        std::vector<int64_t> sa =
            interp::broadcast_strides({ta.shape.begin(), ta.shape.end() - 2}, batch_out);
        std::vector<int64_t> sb =
            interp::broadcast_strides({tb.shape.begin(), tb.shape.end() - 2}, batch_out);
        batches = product(batch_out, 0, batch_out.size());
        for (size_t d = batch_out.size(); d-- > 0;) {
            if (batch_out[d] == 1) continue;
            batch_code += "        { i64 c = r % " + lit(batch_out[d]) + "; r /= " +
                          lit(batch_out[d]) + "; ba += c * " + lit(sa[d]) + "; bb += c * " +
                          lit(sb[d]) + "; }\n";
        }
    } else {  // linear: X [..., K] @ W[N, K]^T (+ b[N])
        n = tb.shape[0];
        k = tb.shape[1];
        m = ta.numel() / k;
        if (v.in.size() > 2) bias = "p2";
    }
    int64_t tiles_m = (m + kTile - 1) / kTile, tiles_n = (n + kTile - 1) / kTile;
    launch.grid[0] = static_cast<unsigned>(std::min(tiles_n, kMaxGridX));
    launch.grid[1] = static_cast<unsigned>(std::min(tiles_m, kMaxGridYZ));
    launch.grid[2] = static_cast<unsigned>(std::min(batches, kMaxGridYZ));
    launch.block[0] = kThreads;
    std::ostringstream s;
    s << signature(v) << " {\n"
      << "    const i64 m = " << lit(m) << ", n = " << lit(n) << ", k = " << lit(k) << ";\n"
      << "    for (i64 z = blockIdx.z; z < " << lit(batches) << "; z += gridDim.z) {\n"
      << "        i64 r = z, ba = 0, bb = 0;\n"
      << batch_code
      << "        (void)r;\n"
      << "        for (i64 tm = blockIdx.y; tm < " << lit(tiles_m) << "; tm += gridDim.y)\n"
      << "            for (i64 tn = blockIdx.x; tn < " << lit(tiles_n) << "; tn += gridDim.x)\n"
      << "                ref_gemm_tile<" << (trans_a ? "true" : "false") << ", "
      << (trans_b ? "true" : "false") << ">(p0 + ba * m * k, p1 + bb * k * n, y + z * m * n, "
      << bias << ", m, n, k, tm, tn);\n"
      << "    }\n}\n";
    return s.str();
}

// Convolutions (conv1d/2d/3d, conv_transpose1d/2d/3d) over problem/conv_geometry.h's 3-D view:
// one thread per output element (grid-stride over y [N, K, OD, OH, OW], ow fastest so a warp
// reads neighbouring x and one w), the interpreter's loop order (c, td, th, tw) with fused adds.
std::string conv_source_axis(const ConvGeometry& g, int a, const char* i, const char* o,
                             const char* t, const char* in, const std::string& indent) {
    std::ostringstream s;
    if (!g.transpose) {
        s << indent << "const i64 " << i << " = " << o << " * " << lit(g.stride[a]) << " - "
          << lit(g.padding[a]) << " + " << t << " * " << lit(g.dilation[a]) << ";\n"
          << indent << "if (" << i << " < 0 || " << i << " >= " << in << ") continue;\n";
    } else {
        s << indent << "const i64 " << i << "n = " << o << " + " << lit(g.padding[a]) << " - "
          << t << " * " << lit(g.dilation[a]) << ";\n"
          << indent << "if (" << i << "n < 0 || " << i << "n % " << lit(g.stride[a])
          << " != 0) continue;\n"
          << indent << "const i64 " << i << " = " << i << "n / " << lit(g.stride[a]) << ";\n"
          << indent << "if (" << i << " >= " << in << ") continue;\n";
    }
    return s.str();
}

Expected<std::string> conv(const OpView& v, ReferenceLaunch& launch) {
    const Tensor &tx = *v.in[0], &tw = *v.in[1];
    const size_t full = static_cast<size_t>(spatial_rank(v.op.kind)) + 2;
    if (tx.shape.size() != full || tw.shape.size() != full || v.out.shape.size() != full)
        return make_error(v.op.json_path, "convolution operands do not have rank " +
                                              std::to_string(full));
    const ConvGeometry g = conv_geometry(v.op, tx, tw, v.out);
    const int64_t n = v.out.numel();
    launch.grid[0] = blocks_for(n, kThreads, kMaxGridX);
    launch.block[0] = kThreads;
    std::ostringstream s;
    s << signature(v) << " {\n"
      << "    const i64 C = " << lit(g.c) << ", K = " << lit(g.k) << ", CG = "
      << lit(g.c_per_group()) << ", KG = " << lit(g.k_per_group()) << ";\n"
      << "    const i64 D = " << lit(g.in[0]) << ", H = " << lit(g.in[1]) << ", W = "
      << lit(g.in[2]) << ";\n"
      << "    const i64 T = " << lit(g.kernel[0]) << ", R = " << lit(g.kernel[1]) << ", S = "
      << lit(g.kernel[2]) << ";\n"
      << "    const i64 OD = " << lit(g.out[0]) << ", OH = " << lit(g.out[1]) << ", OW = "
      << lit(g.out[2]) << ";\n"
      << grid_stride_elements(n)
      << "        const i64 ow = e % OW, oh = (e / OW) % OH, od = (e / (OW * OH)) % OD;\n"
      << "        const i64 k = (e / (OW * OH * OD)) % K, b = e / (OW * OH * OD * K);\n"
      << "        const i64 g = k / KG;\n"
      << "        double acc = 0.0;\n"
      << "        for (i64 c = 0; c < CG; ++c) {\n"
      << "            const double* xb = p0 + (b * C + g * CG + c) * D * H * W;\n"
      << "            const double* wb = p1 + "
      << (g.transpose ? "((g * CG + c) * KG + k % KG)" : "(k * CG + c)") << " * T * R * S;\n"
      << "            for (i64 td = 0; td < T; ++td) {\n"
      << conv_source_axis(g, 0, "id", "od", "td", "D", "                ")
      << "                for (i64 th = 0; th < R; ++th) {\n"
      << conv_source_axis(g, 1, "ih", "oh", "th", "H", "                    ")
      << "                    for (i64 tw = 0; tw < S; ++tw) {\n"
      << conv_source_axis(g, 2, "iw", "ow", "tw", "W", "                        ")
      << "                        acc = fma(xb[(id * H + ih) * W + iw], "
         "wb[(td * R + th) * S + tw], acc);\n"
      << "                    }\n"
      << "                }\n"
      << "            }\n"
      << "        }\n"
      << "        y[e] = acc" << (v.in.size() > 2 ? " + p2[k]" : "") << ";\n"
      << "    }\n}\n";
    return s.str();
}

const char* reduce_kind(OpKind k) {
    switch (k) {
        case OpKind::kSum: return "REF_SUM";
        case OpKind::kMean: return "REF_MEAN";
        case OpKind::kMax: return "REF_MAX";
        case OpKind::kMin: return "REF_MIN";
        case OpKind::kProd: return "REF_PROD";
        case OpKind::kSoftmax: return "REF_SOFTMAX";
        case OpKind::kLogSoftmax: return "REF_LOG_SOFTMAX";
        case OpKind::kLogsumexp: return "REF_LOGSUMEXP";
        case OpKind::kL1Normalize: return "REF_L1_NORMALIZE";
        case OpKind::kL2Normalize: return "REF_L2_NORMALIZE";
        default: return nullptr;
    }
}

// Sum, mean, max, min, prod, the softmax family and l1 / l2 normalize over one axis. Contiguous rows
// (inner == 1) of at least a warp, and few long rows, take a block per row; otherwise a thread
// per row (adjacent threads read adjacent elements when inner > 1).
Expected<std::string> reduction(const OpView& v, ReferenceLaunch& launch) {
    const char* kind = reduce_kind(v.op.kind);
    if (!kind) return make_error(v.op.json_path, "no GPU reference for this op");
    const std::vector<int64_t>& shape = v.in[0]->shape;
    size_t axis = static_cast<size_t>(v.op.attrs.axis);
    int64_t outer = product(shape, 0, axis), len = shape[axis];
    int64_t inner = product(shape, axis + 1, shape.size()), rows = outer * inner;
    bool block_rows = (inner == 1 && len >= 32) || (rows < 2048 && len >= 512);
    const bool normalize = v.op.kind == OpKind::kL1Normalize || v.op.kind == OpKind::kL2Normalize;
    const std::string tail = normalize ? ", " + lit(v.op.attrs.eps) + ");\n}\n" : ");\n}\n";
    launch.block[0] = kThreads;
    std::ostringstream s;
    s << signature(v) << " {\n";
    if (block_rows) {
        launch.grid[0] = blocks_for(rows, 1, kMaxGridX);
        s << "    for (i64 r = blockIdx.x; r < " << lit(rows) << "; r += gridDim.x)\n"
          << "        ref_reduce_row_block<" << kind << ">(p0, y, r / " << lit(inner) << ", r % "
          << lit(inner) << ", " << lit(len) << ", " << lit(inner) << tail;
    } else {
        launch.grid[0] = blocks_for(rows, kThreads, kMaxGridX);
        s << "    for (i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x; r < " << lit(rows)
          << "; r += (i64)gridDim.x * blockDim.x)\n"
          << "        ref_reduce_row_serial<" << kind << ">(p0, y, r / " << lit(inner) << ", r % "
          << lit(inner) << ", " << lit(len) << ", " << lit(inner) << tail;
    }
    return s.str();
}

// layer_norm / rms_norm: a block per row of the trailing dims from `axis`; group_norm: a block
// per (sample, group), a group being contiguous.
Expected<std::string> norm(const OpView& v, ReferenceLaunch& launch) {
    const std::vector<int64_t>& shape = v.in[0]->shape;
    bool has_w = v.in.size() > 1, has_b = v.in.size() > 2;
    launch.block[0] = kThreads;
    std::ostringstream s;
    s << signature(v) << " {\n";
    std::string eps = lit(v.op.attrs.eps);
    if (v.op.kind == OpKind::kGroupNorm) {
        int64_t groups = v.op.attrs.num_groups, per_group = shape[1] / groups;
        int64_t spatial = product(shape, 2, shape.size()), count = per_group * spatial;
        int64_t blocks = shape[0] * groups;
        launch.grid[0] = blocks_for(blocks, 1, kMaxGridX);
        s << "    for (i64 g = blockIdx.x; g < " << lit(blocks) << "; g += gridDim.x) {\n"
          << "        const i64 begin = g * " << lit(count) << ";\n"
          << "        double mean, inv_std;\n"
          << "        ref_block_moments(p0 + begin, " << lit(count) << ", " << eps
          << ", false, &mean, &inv_std);\n"
          << "        for (i64 l = threadIdx.x; l < " << lit(count) << "; l += REF_THREADS) {\n"
          << "            i64 channel = (g % " << lit(groups) << ") * " << lit(per_group)
          << " + l / " << lit(spatial) << ";\n"
          << "            double w = " << (has_w ? "p1[channel]" : "1.0") << ";\n"
          << "            double bb = " << (has_b ? "p2[channel]" : "0.0") << ";\n"
          << "            (void)channel;\n"
          << "            y[begin + l] = (p0[begin + l] - mean) * inv_std * w + bb;\n"
          << "        }\n    }\n}\n";
        return s.str();
    }
    bool rms = v.op.kind == OpKind::kRmsNorm;
    int64_t cols = product(shape, static_cast<size_t>(v.op.attrs.axis), shape.size());
    int64_t rows = v.in[0]->numel() / cols;
    launch.grid[0] = blocks_for(rows, 1, kMaxGridX);
    s << "    for (i64 r = blockIdx.x; r < " << lit(rows) << "; r += gridDim.x) {\n"
      << "        const double* row = p0 + r * " << lit(cols) << ";\n"
      << "        double mean, inv_std;\n"
      << "        ref_block_moments(row, " << lit(cols) << ", " << eps << ", "
      << (rms ? "true" : "false") << ", &mean, &inv_std);\n"
      << "        for (i64 j = threadIdx.x; j < " << lit(cols) << "; j += REF_THREADS) {\n"
      << "            double v = (row[j] - mean) * inv_std;\n"
      << (has_w ? "            v *= p1[j];\n" : "") << (has_b ? "            v += p2[j];\n" : "")
      << "            y[r * " << lit(cols) << " + j] = v;\n"
      << "        }\n    }\n}\n";
    return s.str();
}

// cumsum / cumprod over one axis: a thread per row, the interpreter's sequential fp64 loop
// (exclusive: the value before the element; reverse: from the end of the axis).
Expected<std::string> scan(const OpView& v, ReferenceLaunch& launch) {
    const std::vector<int64_t>& shape = v.in[0]->shape;
    size_t axis = static_cast<size_t>(v.op.attrs.axis);
    int64_t outer = product(shape, 0, axis), len = shape[axis];
    int64_t inner = product(shape, axis + 1, shape.size()), rows = outer * inner;
    const bool prod = v.op.kind == OpKind::kCumprod;
    launch.block[0] = kThreads;
    launch.grid[0] = blocks_for(rows, kThreads, kMaxGridX);
    std::ostringstream s;
    s << signature(v) << " {\n"
      << "    for (i64 r = (i64)blockIdx.x * blockDim.x + threadIdx.x; r < " << lit(rows)
      << "; r += (i64)gridDim.x * blockDim.x) {\n"
      << "        const i64 base = (r / " << lit(inner) << ") * " << lit(len * inner)
      << " + r % " << lit(inner) << ";\n"
      << "        double acc = " << (prod ? "1.0" : "0.0") << ";\n"
      << "        for (i64 step = 0; step < " << lit(len) << "; ++step) {\n"
      << "            const i64 at = base + "
      << (v.op.attrs.reverse ? "(" + lit(len - 1) + " - step)" : std::string("step")) << " * "
      << lit(inner) << ";\n"
      << "            const double before = acc;\n"
      << "            acc " << (prod ? "*=" : "+=") << " p0[at];\n"
      << "            y[at] = " << (v.op.attrs.exclusive ? "before" : "acc") << ";\n"
      << "            (void)before;\n"
      << "        }\n    }\n}\n";
    return s.str();
}

}  // namespace

Expected<ReferenceProgram> generate_reference_program(const Problem& problem) {
    ReferenceProgram program;
    std::string kernels;
    for (const Tensor& t : problem.tensors) program.buffer_bytes += t.numel() * 8;
    for (size_t i = 0; i < problem.ops.size(); ++i) {
        const Op& op = problem.ops[i];
        const Tensor* out = problem.find_tensor(op.output);
        if (!out) return make_error(op.json_path, "output tensor is not in the problem");
        OpView v{op, {}, *out, "ref_op" + std::to_string(i)};
        ReferenceLaunch launch;
        launch.symbol = v.name;
        for (const std::string& name : op.inputs) {
            const Tensor* t = problem.find_tensor(name);
            if (!t)
                return make_error(op.json_path, "operand \"" + name + "\" is not in the problem");
            v.in.push_back(t);
            launch.tensors.push_back(name);
        }
        launch.tensors.push_back(op.output);
        Expected<std::string> code = make_error(op.json_path, "no GPU reference for this op");
        bool norm_op = op.kind == OpKind::kLayerNorm || op.kind == OpKind::kRmsNorm ||
                       op.kind == OpKind::kGroupNorm;
        if (interp::is_index_op(op.kind))  // gpu_reference_index.cpp
            code = index_reference_kernel(op, v.in, *out, v.name, launch);
        else
        if (op_class(op.kind) == OpClass::kShape)  // gpu_reference_shape.cpp
            code = shape_reference_kernel(op, v.in, *out, v.name, launch);
        else
        switch (op_class(op.kind)) {
            case OpClass::kMatrix: code = matrix(v, launch); break;
            case OpClass::kElementwise: code = elementwise(v, launch); break;
            case OpClass::kReduction: code = reduction(v, launch); break;
            case OpClass::kRowwise:
                code = norm_op ? norm(v, launch)
                       : (op.kind == OpKind::kCumsum || op.kind == OpKind::kCumprod)
                           ? scan(v, launch)
                           : reduction(v, launch);
                break;
            case OpClass::kConv: code = conv(v, launch); break;
            case OpClass::kPool:  // gpu_reference_pool.cpp
                code = pool_reference_kernel(op, v.in, *out, v.name, launch);
                break;
            case OpClass::kRecurrent:  // gpu_reference_rnn.cpp
                code = rnn_reference_kernel(op, v.in, *out, v.name, launch);
                break;
        }
        if (!code) return code.error();
        kernels += "\n// " + op.json_path + ": " + std::string(to_string(op.kind)) + " -> " +
                   op.output + "\n" + *code;
        program.launches.push_back(std::move(launch));
    }
    program.source = std::string(gpu_reference_library()) + kernels;
    return program;
}

}  // namespace kforge::eval
