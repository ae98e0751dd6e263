// Input generation: SplitMix64 stream, Box-Muller normals, Student-t(3), dtype rounding.
#include "problem/inputs.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include "common/parallel.h"
#include "problem/rnn.h"

namespace kforge {
namespace {

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;  // SplitMix64's counter increment

struct SplitMix64 {
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += kGamma);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
    double normal() {  // Box-Muller, one value per call (the pair's sine half is dropped)
        double u1 = 1.0 - uniform();  // (0, 1]
        double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    }
};

uint64_t fnv1a(std::string_view s) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
    return h;
}

// Rounds to a binary float format with `digits` significant bits (implicit bit included),
// smallest normal exponent `min_exp` (value 2^min_exp) and largest finite value `max_finite`.
double round_float(double x, int digits, int min_exp, double max_finite) {
    if (!std::isfinite(x) || x == 0.0) return x;
    int e = std::max(std::ilogb(x), min_exp);  // subnormals share the smallest quantum
    double quantum = std::ldexp(1.0, e - (digits - 1));
    double r = std::nearbyint(x / quantum) * quantum;  // default rounding mode: ties to even
    if (std::fabs(r) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), x);
    return r;
}

double round_int(double x, double lo, double hi) {
    if (std::isnan(x)) return 0.0;
    return std::clamp(std::nearbyint(x), lo, hi);
}

}  // namespace

std::string_view to_string(Distribution d) {
    switch (d) {
        case Distribution::kUniform01: return "uniform01";
        case Distribution::kUniformPm1: return "uniform_pm1";
        case Distribution::kNormal: return "normal";
        case Distribution::kHeavyTailed: return "heavy_tailed";
        case Distribution::kSpecified: return "specified";
    }
    return "?";
}

std::optional<Distribution> distribution_from_string(std::string_view s) {
    for (Distribution d : {Distribution::kUniform01, Distribution::kUniformPm1,
                           Distribution::kNormal, Distribution::kHeavyTailed}) {
        if (to_string(d) == s) return d;
    }
    return std::nullopt;
}

std::string describe_distributions(const Problem& problem) {
    std::string out;
    bool scaled = false;
    for (const Tensor* t : problem.graph_inputs()) {
        out += (out.empty() ? "" : ", ") + t->name + " " + std::string(to_string(t->distribution));
        if (const double s = draw_scale(problem, *t); s != 1.0) {
            char buf[32];  // the shortest text that reads back as s
            const auto r = std::to_chars(buf, buf + sizeof buf, s);
            out += " x" + std::string(buf, r.ptr);
        }
        scaled = scaled || has_draw_scale(problem, *t);
    }
    // the correctness rounds' draws of those differ from before it was so (cached evaluations)
    if (scaled) out += "; the uniform01 round draws the scaled ones on [-1, 1)";
    return out;
}

double round_to_dtype(double x, DType dtype) {
    switch (dtype) {
        case DType::kF64: return x;
        case DType::kF32: return round_float(x, 24, -126, 0x1.fffffep127);
        case DType::kF16: return round_float(x, 11, -14, 65504.0);
        case DType::kBF16: return round_float(x, 8, -126, 0x1.fep127);
        case DType::kI32: return round_int(x, -2147483648.0, 2147483647.0);
        case DType::kI64: return round_int(x, -0x1p63, 0x1p63 - 1024.0);
        case DType::kBool: return x != 0.0 ? 1.0 : 0.0;
    }
    return x;
}

std::vector<double> generate(const Tensor& tensor, Distribution distribution, uint64_t seed) {
    if (distribution == Distribution::kSpecified) distribution = tensor.distribution;
    SplitMix64 rng{seed ^ fnv1a(tensor.name)};
    rng.next();
    // Every value takes a fixed number of draws and SplitMix64's state is a counter, so value i
    // starts at state + i * draws * gamma: large tensors are generated in parallel chunks with
    // exactly the values of one sequential stream.
    const uint64_t draws = distribution == Distribution::kUniform01 ||
                                   distribution == Distribution::kUniformPm1
                               ? 1
                           : distribution == Distribution::kNormal ? 2
                                                                   : 8;
    std::vector<double> values(static_cast<size_t>(tensor.numel()));
    auto fill = [&](size_t begin, size_t end) {
        SplitMix64 r{rng.state + begin * draws * kGamma};
        for (size_t i = begin; i < end; ++i) {
            double v = 0.0;
            switch (distribution) {
                case Distribution::kUniform01: v = r.uniform(); break;
                case Distribution::kUniformPm1: v = 2.0 * r.uniform() - 1.0; break;
                case Distribution::kNormal: v = r.normal(); break;
                case Distribution::kHeavyTailed: {
                    double z = r.normal();
                    double chi2 = 0.0;
                    for (int k = 0; k < 3; ++k) {
                        double g = r.normal();
                        chi2 += g * g;
                    }
                    v = std::clamp(z / std::sqrt(std::max(chi2, 1e-300) / 3.0), -1e4, 1e4);
                    break;
                }
                case Distribution::kSpecified: break;  // resolved to the tensor's own above
            }
            if (tensor.dtype == DType::kBool) {  // a mask, about half true: above the median
                v = v > (distribution == Distribution::kUniform01 ? 0.5 : 0.0) ? 1.0 : 0.0;
            }
            values[i] = round_to_dtype(v, tensor.dtype);
        }
    };
    parallel_chunks(values.size(), [&](size_t, size_t begin, size_t end) { fill(begin, end); });
    return values;
}

std::optional<int64_t> index_bound(const Problem& problem, const std::string& name) {
    for (const Op& op : problem.ops) {
        if (op.kind != OpKind::kCrossEntropy || op.inputs.size() < 2 || op.inputs[1] != name) continue;
        const Tensor* logits = problem.find_tensor(op.inputs[0]);
        if (logits != nullptr && !logits->shape.empty()) return logits->shape.back();
    }
    return std::nullopt;
}

std::optional<double> rnn_weight_scale(const Problem& problem, const std::string& name) {
    for (const Op& op : problem.ops) {
        if (!is_rnn(op.kind) || op.inputs.size() < 2) continue;
        const Tensor* h0 = problem.find_tensor(op.inputs[1]);
        if (h0 == nullptr || h0->shape.empty() || h0->shape.back() < 1) continue;
        for (size_t i = rnn_state_count(op.kind); i < op.inputs.size(); ++i)
            if (op.inputs[i] == name) return 1.0 / std::sqrt(static_cast<double>(h0->shape.back()));
    }
    return std::nullopt;
}

bool has_draw_scale(const Problem& problem, const Tensor& tensor) {
    return tensor.scale || tensor.fan_in_value > 0 ||
           rnn_weight_scale(problem, tensor.name).has_value();
}

double draw_scale(const Problem& problem, const Tensor& tensor) {
    if (tensor.scale || tensor.fan_in_value > 0) {
        const double s = tensor.scale.value_or(1.0);
        return tensor.fan_in_value > 0 ? s / std::sqrt(static_cast<double>(tensor.fan_in_value))
                                       : s;
    }
    return rnn_weight_scale(problem, tensor.name).value_or(1.0);
}

std::vector<double> generate_input(const Problem& problem, const Tensor& tensor,
                                   Distribution distribution, uint64_t seed) {
    const std::optional<int64_t> bound = index_bound(problem, tensor.name);
    if (!bound) {
        // a param at its init bound: zero-mean in the uniform round too (inputs.h
        // has_draw_scale), 2u - 1 of the same stream (a mask's bits: u > 0.5 either way)
        const bool signed_uniform =
            distribution == Distribution::kUniform01 && has_draw_scale(problem, tensor);
        std::vector<double> v = generate(
            tensor, signed_uniform ? Distribution::kUniformPm1 : distribution, seed);
        const double scale = draw_scale(problem, tensor);
        if (scale != 1.0 && tensor.dtype != DType::kBool)  // a mask stays as drawn
            for (double& x : v) x = round_to_dtype(x * scale, tensor.dtype);
        return v;
    }
    Tensor unit = tensor;  // the same stream, as uniforms in [0, 1)
    unit.dtype = DType::kF64;
    std::vector<double> v = generate(unit, Distribution::kUniform01, seed);
    const double c = static_cast<double>(*bound);
    for (double& x : v) x = std::min(std::floor(x * c), c - 1.0);
    return v;
}

}  // namespace kforge
