// generate_reference_program (reference/gpu_reference.h): one fp64 kernel per op of the graph, each
// a transcription of the interpreter's loop for that op (problem/interpret_*.cpp) with the
// shapes, strides and attributes baked in as literals.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "problem/interpret_ops.h"
#include "reference/gpu_reference.h"

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

// conv2d: one thread per output element (grid-stride over y [N, K, P, Q], q fastest so a warp
// reads neighbouring x and one w), the interpreter's loop order (c, r, s) with fused adds.
Expected<std::string> conv2d(const OpView& v, ReferenceLaunch& launch) {
    const OpAttrs& a = v.op.attrs;
    const Tensor &tx = *v.in[0], &tw = *v.in[1];
    if (tx.shape.size() != 4 || tw.shape.size() != 4 || v.out.shape.size() != 4)
        return make_error(v.op.json_path, "conv2d operands are not 4-D");
    const int64_t n = v.out.numel();
    launch.grid[0] = blocks_for(n, kThreads, kMaxGridX);
    launch.block[0] = kThreads;
    std::ostringstream s;
    s << signature(v) << " {\n"
      << "    const i64 C = " << lit(tx.shape[1]) << ", H = " << lit(tx.shape[2])
      << ", W = " << lit(tx.shape[3]) << ";\n"
      << "    const i64 K = " << lit(tw.shape[0]) << ", CG = " << lit(tw.shape[1])
      << ", R = " << lit(tw.shape[2]) << ", S = " << lit(tw.shape[3])
      << ", KG = " << lit(tw.shape[0] / a.groups) << ";\n"
      << "    const i64 P = " << lit(v.out.shape[2]) << ", Q = " << lit(v.out.shape[3]) << ";\n"
      << grid_stride_elements(n)
      << "        const i64 q = e % Q, p = (e / Q) % P, k = (e / (P * Q)) % K, b = e / (P * Q * K);\n"
      << "        const double* xb = p0 + (b * C + (k / KG) * CG) * H * W;\n"
      << "        const double* wb = p1 + k * CG * R * S;\n"
      << "        double acc = 0.0;\n"
      << "        for (i64 c = 0; c < CG; ++c)\n"
      << "            for (i64 r = 0; r < R; ++r) {\n"
      << "                const i64 hi = p * " << lit(a.stride[0]) << " - " << lit(a.padding[0])
      << " + r * " << lit(a.dilation[0]) << ";\n"
      << "                if (hi < 0 || hi >= H) continue;\n"
      << "                for (i64 t = 0; t < S; ++t) {\n"
      << "                    const i64 wi = q * " << lit(a.stride[1]) << " - " << lit(a.padding[1])
      << " + t * " << lit(a.dilation[1]) << ";\n"
      << "                    if (wi < 0 || wi >= W) continue;\n"
      << "                    acc = fma(xb[(c * H + hi) * W + wi], wb[(c * R + r) * S + t], acc);\n"
      << "                }\n"
      << "            }\n"
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
            case OpClass::kConv: code = conv2d(v, launch); break;
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
