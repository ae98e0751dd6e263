// Reference element-wise ops, each as PyTorch defines it (NaN propagates through relu, clamp
// and the min/max family, maximum / minimum of two tensors included; softplus reverts to x above
// its threshold; mish is x*tanh(softplus); sign is 0 at 0 and NaN at NaN).
#include <cmath>

#include "problem/interpret_ops.h"

namespace kforge::interp {
namespace {

double sigmoid(double x) {
    if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
    double e = std::exp(x);
    return e / (1.0 + e);
}

double clamp(double x, double lo, double hi) {
    if (std::isnan(x)) return x;
    return x < lo ? lo : (x > hi ? hi : x);
}

double unary(const Op& op, double x) {
    const OpAttrs& a = op.attrs;
    switch (op.kind) {
        case OpKind::kScale: return x * a.scalar;
        case OpKind::kAddScalar: return x + a.scalar;
        case OpKind::kMinScalar: return std::isnan(x) ? x : std::fmin(x, a.scalar);
        case OpKind::kMaxScalar: return std::isnan(x) ? x : std::fmax(x, a.scalar);
        case OpKind::kRelu: return std::isnan(x) ? x : (x > 0 ? x : 0.0);
        case OpKind::kLeakyRelu: return x > 0 ? x : x * a.negative_slope;
        case OpKind::kGelu:
            if (a.gelu == GeluApprox::kTanh) {
                const double k = std::sqrt(2.0 / M_PI);
                return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
            }
            return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
        case OpKind::kSilu: return x * sigmoid(x);
        case OpKind::kSigmoid: return sigmoid(x);
        case OpKind::kTanh: return std::tanh(x);
        case OpKind::kMish: return x * std::tanh(std::log1p(std::exp(x)));
        case OpKind::kHardtanh: case OpKind::kClamp: return clamp(x, a.lo, a.hi);
        case OpKind::kSoftplus:
            return a.beta * x > a.threshold ? x : std::log1p(std::exp(a.beta * x)) / a.beta;
        case OpKind::kExp: return std::exp(x);
        case OpKind::kLog: return std::log(x);
        case OpKind::kDropout: return x;
        case OpKind::kNeg: return -x;
        case OpKind::kAbs: return std::fabs(x);
        case OpKind::kSqrt: return std::sqrt(x);
        case OpKind::kRsqrt: return 1.0 / std::sqrt(x);
        case OpKind::kSquare: return x * x;
        case OpKind::kErf: return std::erf(x);
        case OpKind::kLog1p: return std::log1p(x);
        case OpKind::kExpm1: return std::expm1(x);
        case OpKind::kSin: return std::sin(x);
        case OpKind::kCos: return std::cos(x);
        case OpKind::kSign: return std::isnan(x) ? x : (x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0));
        case OpKind::kReciprocal: return 1.0 / x;
        default: return std::nan("");
    }
}

double binary(OpKind kind, double x, double y) {
    switch (kind) {
        case OpKind::kAdd: return x + y;
        case OpKind::kSub: return x - y;
        case OpKind::kMul: return x * y;
        case OpKind::kDiv: return x / y;
        case OpKind::kMaximum: return std::isnan(x) || std::isnan(y) ? x + y : std::fmax(x, y);
        case OpKind::kMinimum: return std::isnan(x) || std::isnan(y) ? x + y : std::fmin(x, y);
        default: return std::nan("");
    }
}

}  // namespace

std::vector<double> eval_elementwise(const OpArgs& a) {
    const std::vector<double>& x = *a.data[0];
    std::vector<double> out(static_cast<size_t>(a.out.numel()));
    if (a.inputs.size() == 1) {
        for (size_t i = 0; i < out.size(); ++i) out[i] = unary(a.op, x[i]);
        return out;
    }
    const std::vector<double>& y = *a.data[1];
    const std::vector<int64_t>& shape = a.out.shape;
    std::vector<int64_t> sx = broadcast_strides(a.inputs[0]->shape, shape);
    std::vector<int64_t> sy = broadcast_strides(a.inputs[1]->shape, shape);
    std::vector<int64_t> index(shape.size(), 0);
    int64_t ix = 0, iy = 0;
    for (size_t i = 0; i < out.size(); ++i) {
        out[i] = binary(a.op.kind, x[ix], y[iy]);
        for (size_t d = shape.size(); d-- > 0;) {  // advance the row-major index, carry left
            ++index[d];
            ix += sx[d];
            iy += sy[d];
            if (index[d] < shape[d]) break;
            ix -= sx[d] * shape[d];
            iy -= sy[d] * shape[d];
            index[d] = 0;
        }
    }
    return out;
}

}  // namespace kforge::interp
