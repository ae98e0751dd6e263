// pool_reference_kernel: one thread per output element (grid-stride over y [N, C, o1..ok], the
// last axis fastest), each axis's window computed as problem/pool.h's pool_taps does, the taps
// visited in the interpreter's order (first axis outermost).
#include "reference/gpu_reference_pool.h"

#include <algorithm>
#include <sstream>

#include "problem/pool.h"

namespace kforge::eval {
namespace {

std::string lit(int64_t x) { return "(" + std::to_string(x) + "LL)"; }

// The window of output index o<a> on axis a: f<a> (first input position), c<a> (taps), s<a>
// (step), x<a> (extent, avg_pool's divisor factor with the padding counted).
std::string taps_code(OpKind kind, const PoolAxis& ax, size_t a) {
    const std::string i = std::to_string(a), o = "o" + i;
    std::ostringstream s;
    s << "        i64 f" << i << ", c" << i << ", s" << i << " = 1, x" << i << ";\n";
    if (is_adaptive_pool(kind)) {
        s << "        { f" << i << " = (" << o << " * " << lit(ax.in) << ") / " << lit(ax.out)
          << "; const i64 end = ((" << o << " + 1) * " << lit(ax.in) << " + " << lit(ax.out - 1)
          << ") / " << lit(ax.out) << "; c" << i << " = end - f" << i << "; x" << i << " = c" << i
          << "; }\n";
    } else if (kind == OpKind::kAvgPool) {  // (no min/max: the emulation has no CUDA's)
        s << "        { const i64 st = " << o << " * " << lit(ax.stride) << " - " << lit(ax.padding)
          << "; i64 en = st + " << lit(ax.kernel) << "; if (en > " << lit(ax.in + ax.padding)
          << ") en = " << lit(ax.in + ax.padding) << "; x" << i << " = en - st; f" << i
          << " = st < 0 ? 0 : st; const i64 last = en < " << lit(ax.in) << " ? en : "
          << lit(ax.in) << "; c" << i << " = last > f" << i << " ? last - f" << i << " : 0; }\n";
    } else {
        s << "        { const i64 st = " << o << " * " << lit(ax.stride) << " - " << lit(ax.padding)
          << "; const i64 j0 = st < 0 ? (-st + " << lit(ax.dilation - 1) << ") / "
          << lit(ax.dilation) << " : 0; const i64 num = " << lit(ax.in - 1) << " - st;"
          << " i64 j1 = num >= 0 ? num / " << lit(ax.dilation) << " : -1LL; if (j1 > "
          << lit(ax.kernel - 1) << ") j1 = " << lit(ax.kernel - 1) << "; f" << i << " = st + j0 * "
          << lit(ax.dilation) << "; s" << i << " = " << lit(ax.dilation) << "; c" << i
          << " = j1 >= j0 ? j1 - j0 + 1 : 0; x" << i << " = c" << i << "; }\n";
    }
    return s.str();
}

}  // namespace

Expected<std::string> pool_reference_kernel(const Op& op, const std::vector<const Tensor*>& in,
                                            const Tensor& out, const std::string& symbol,
                                            ReferenceLaunch& launch) {
    const Tensor& x = *in[0];
    if (x.shape.size() < 3 || x.shape.size() > 5 || out.shape.size() != x.shape.size())
        return make_error(op.json_path, "pool operands are not [N, C, *] with 1-3 spatial axes");
    const std::vector<PoolAxis> axes = pool_axes(op, x.shape, out.shape);
    const size_t rank = axes.size();
    const int64_t n = out.numel();
    int64_t in_plane = 1, out_plane = 1;
    for (const PoolAxis& a : axes) {
        in_plane *= a.in;
        out_plane *= a.out;
    }
    launch.grid[0] = static_cast<unsigned>(std::clamp<int64_t>((n + 255) / 256, 1, 1 << 20));
    launch.block[0] = 256;
    const bool max = is_max_pool(op.kind);
    std::ostringstream s;
    s << "extern \"C\" __global__ void __launch_bounds__(256) " << symbol
      << "(const double* __restrict__ p0, double* __restrict__ y) {\n"
      << "    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < " << lit(n)
      << "; e += (i64)gridDim.x * blockDim.x) {\n"
      << "        i64 r = e;\n";
    for (size_t a = rank; a-- > 0;) {
        s << "        const i64 o" << a << " = r % " << lit(axes[a].out) << "; r /= "
          << lit(axes[a].out) << ";\n";
    }
    s << "        const double* xp = p0 + r * " << lit(in_plane) << ";\n";
    for (size_t a = 0; a < rank; ++a) s << taps_code(op.kind, axes[a], a);
    s << "        double acc = " << (max ? "-__longlong_as_double(0x7ff0000000000000LL)" : "0.0")
      << ";\n";
    std::string indent = "        ", index = "0";
    for (size_t a = 0; a < rank; ++a) {
        const std::string i = std::to_string(a);
        s << indent << "for (i64 j" << i << " = 0; j" << i << " < c" << i << "; ++j" << i
          << ") {\n";
        indent += "    ";
        index = "(" + index + ") * " + lit(axes[a].in) + " + f" + i + " + j" + i + " * s" + i;
    }
    s << indent << "const double v = xp[" << index << "];\n";
    if (max) s << indent << "if (v > acc || v != v) acc = v;\n";
    else s << indent << "acc += v;\n";
    for (size_t a = rank; a-- > 0;) {
        indent.resize(indent.size() - 4);
        s << indent << "}\n";
    }
    if (!max) {
        std::string count = "1", extent = "1";
        for (size_t a = 0; a < rank; ++a) {
            count += " * c" + std::to_string(a);
            extent += " * x" + std::to_string(a);
        }
        const OpAttrs& at = op.attrs;
        const std::string divisor = op.kind == OpKind::kAdaptiveAvgPool ? count
                                    : at.divisor_override > 0 ? lit(at.divisor_override)
                                    : at.count_include_pad    ? extent
                                                              : count;
        s << "        acc = (" << count << ") == 0 ? 0.0 : acc / (double)(" << divisor << ");\n";
    }
    s << "        y[e] = acc;\n    }\n}\n";
    (void)out_plane;
    return s.str();
}

}  // namespace kforge::eval
