// index_reference_kernel (reference/gpu_reference_index.h): argmax / argmin a thread per output
// (the interpreter's strict compare: the first index wins, a NaN is taken at once); masked_fill /
// where / tril / triu a thread per element; cross_entropy a block per row (max, then the sum of
// exp in fp64 block trees) whose losses the last block to finish sums in row order.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "problem/interpret_ops.h"
#include "reference/gpu_reference_index.h"

namespace kforge::eval {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxGrid = 1 << 20;

std::string lit(int64_t x) { return "(" + std::to_string(x) + "LL)"; }

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

unsigned blocks_for(int64_t work, int64_t per_block) {
    return static_cast<unsigned>(std::clamp<int64_t>((work + per_block - 1) / per_block, 1, kMaxGrid));
}

std::string signature(const std::string& symbol, size_t inputs) {
    std::string s = "extern \"C\" __global__ void __launch_bounds__(256) " + symbol + "(";
    for (size_t i = 0; i < inputs; ++i) s += "const double* __restrict__ p" + std::to_string(i) + ", ";
    return s + "double* __restrict__ y)";
}

std::string elements(int64_t n) {
    return "    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < " + lit(n) +
           "; e += (i64)gridDim.x * blockDim.x) {\n";
}

// Offsets o0.. of each operand for output element e (NumPy broadcasting).
std::string broadcast_offsets(const std::vector<const Tensor*>& in, const Tensor& out) {
    std::ostringstream s;
    s << "        i64 r = e";
    for (size_t k = 0; k < in.size(); ++k) s << ", o" << k << " = 0";
    s << ";\n";
    std::vector<std::vector<int64_t>> strides;
    for (const Tensor* t : in) strides.push_back(interp::broadcast_strides(t->shape, out.shape));
    for (size_t d = out.shape.size(); d-- > 0;) {
        if (out.shape[d] == 1) continue;
        s << "        { i64 c = r % " << lit(out.shape[d]) << "; r /= " << lit(out.shape[d]) << ";";
        for (size_t k = 0; k < in.size(); ++k) s << " o" << k << " += c * " << lit(strides[k][d]) << ";";
        s << " }\n";
    }
    s << "        (void)r;\n";
    return s.str();
}

std::string arg_reduce(const Op& op, const Tensor& x, bool is_max, ReferenceLaunch& launch) {
    const size_t axis = static_cast<size_t>(op.attrs.axis);
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < axis; ++i) outer *= x.shape[i];
    for (size_t i = axis + 1; i < x.shape.size(); ++i) inner *= x.shape[i];
    const int64_t len = x.shape[axis], rows = outer * inner;
    launch.grid[0] = blocks_for(rows, kThreads);
    std::ostringstream s;
    s << elements(rows)
      << "        const i64 base = (e / " << lit(inner) << ") * " << lit(len * inner) << " + e % "
      << lit(inner) << ";\n"
      << "        i64 best = 0;\n        double v = p0[base];\n"
      << "        for (i64 l = 1; l < " << lit(len) << " && !isnan(v); ++l) {\n"
      << "            const double w = p0[base + l * " << lit(inner) << "];\n"
      << "            if (isnan(w) || w " << (is_max ? ">" : "<") << " v) { v = w; best = l; }\n"
      << "        }\n        y[e] = (double)best;\n    }\n}\n";
    return s.str();
}

// The body over x's last two dims: y = `inside` where j - i <= diagonal (lower) or
// j - i >= diagonal, `outside` elsewhere (tril / triu: x inside, 0 outside; masked_fill with a
// structured mask: its value inside, x outside).
std::string triangle(const Tensor& out, bool lower, int64_t diagonal, const std::string& inside,
                     const std::string& outside) {
    const int64_t rows = out.shape[out.shape.size() - 2], cols = out.shape.back();
    return elements(out.numel()) + "        const i64 j = e % " + lit(cols) + ", i = (e / " +
           lit(cols) + ") % " + lit(rows) + ";\n        y[e] = (j - i " + (lower ? "<=" : ">=") +
           " " + lit(diagonal) + ") ? " + inside + " : " + outside + ";\n    }\n}\n";
}

std::string cross_entropy(const std::string& symbol, const Tensor& x, ReferenceLaunch& launch) {
    const int64_t c = x.shape.back();
    const int64_t n = x.shape.size() == 2 ? x.shape[0] : 1;
    const int64_t blocks = std::min<int64_t>(n, 4096);
    launch.grid[0] = static_cast<unsigned>(blocks);
    std::ostringstream s;
    s << "__device__ double " << symbol << "_loss[" << n << "];\n"
      << "__device__ unsigned int " << symbol << "_done = 0;\n"
      << signature(symbol, 2) << " {\n"
      << "    for (i64 r = blockIdx.x; r < " << lit(n) << "; r += gridDim.x) {\n"
      << "        const double* row = p0 + r * " << lit(c) << ";\n"
      << "        const double t = p1[r];\n"
      << "        double m = -ref_inf();\n"
      << "        for (i64 j = threadIdx.x; j < " << lit(c) << "; j += REF_THREADS) m = fmax(m, row[j]);\n"
      << "        m = ref_block_minmax(m, true);\n"
      << "        const double shift = isinf(m) ? 0.0 : m;\n"
      << "        double sum = 0.0;\n"
      << "        for (i64 j = threadIdx.x; j < " << lit(c) << "; j += REF_THREADS) sum += exp(row[j] - shift);\n"
      << "        sum = ref_block_sum(sum);\n"
      << "        if (threadIdx.x == 0) {\n"
      << "            const bool ok = t >= 0.0 && t < " << lit(static_cast<double>(c)) << ";\n"
      << "            " << symbol << "_loss[r] = ok ? log(sum) + shift - row[(i64)t] : ref_nan();\n"
      << "        }\n    }\n"
      << "    __threadfence();\n    __shared__ bool last;\n    __syncthreads();\n"
      // (a space before every use of the symbol: the emulated test renames " ref_opN")
      << "    if (threadIdx.x == 0) last = atomicAdd(& " << symbol << "_done, 1u) == gridDim.x - 1;\n"
      << "    __syncthreads();\n    if (!last) return;\n    __threadfence();\n"
      << "    double total = 0.0;\n"
      << "    for (i64 r = threadIdx.x; r < " << lit(n) << "; r += REF_THREADS) total += "
      << symbol << "_loss[r];\n"
      << "    total = ref_block_sum(total);\n"
      << "    if (threadIdx.x == 0) { y[0] = total / " << lit(static_cast<double>(n)) << "; "
      << symbol << "_done = 0; }\n}\n";
    return s.str();
}

}  // namespace

Expected<std::string> index_reference_kernel(const Op& op, const std::vector<const Tensor*>& in,
                                             const Tensor& out, const std::string& symbol,
                                             ReferenceLaunch& launch) {
    launch.block[0] = kThreads;
    if (op.kind == OpKind::kCrossEntropy) return cross_entropy(symbol, *in[0], launch);
    std::ostringstream s;
    s << signature(symbol, in.size()) << " {\n";
    const int64_t n = out.numel();
    switch (op.kind) {
        case OpKind::kArgmax: case OpKind::kArgmin:
            return s.str() + arg_reduce(op, *in[0], op.kind == OpKind::kArgmax, launch);
        case OpKind::kMaskedFill:
            if (op.attrs.tri_mask != TriMask::kNone) {  // structured: from the indices
                s << triangle(out, op.attrs.tri_mask == TriMask::kTril, op.attrs.diagonal,
                              lit(op.attrs.scalar), "p0[e]");
                break;
            }
            s << elements(n) << broadcast_offsets(in, out) << "        y[e] = p1[o1] != 0.0 ? "
              << lit(op.attrs.scalar) << " : p0[o0];\n    }\n}\n";
            break;
        case OpKind::kWhere:
            s << elements(n) << broadcast_offsets(in, out)
              << "        y[e] = p0[o0] != 0.0 ? p1[o1] : p2[o2];\n    }\n}\n";
            break;
        case OpKind::kTril: case OpKind::kTriu:
            s << triangle(out, op.kind == OpKind::kTril, op.attrs.diagonal, "p0[e]", "0.0");
            break;
        default:
            return make_error(op.json_path, "no GPU reference for this op");
    }
    launch.grid[0] = blocks_for(n, kThreads);
    return s.str();
}

}  // namespace kforge::eval
