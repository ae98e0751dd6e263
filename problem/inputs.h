// Deterministic input generation for evaluation. The same (tensor name, shape, dtype,
// distribution, seed) gives the same values on every platform: the generator is kforge's own
// (SplitMix64 + Box-Muller), never the standard library's distributions. Values are rounded to
// the tensor's dtype so that the fp64 reference sees exactly what the GPU sees.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "problem/problem.h"

namespace kforge {

// Distribution (problem/problem.h):
// kUniform01: uniform on [0, 1).
// kUniformPm1: uniform on [-1, 1) (2u - 1 of one uniform u).
// kNormal: standard normal N(0, 1).
// kHeavyTailed: Student-t with 3 degrees of freedom (finite variance, heavy tails), clipped to
//   [-1e4, 1e4] so that every value is finite in f16; stresses max-shifts and accumulation.
// kSpecified: the tensor's own Tensor::distribution (one of the three above).
// Integer dtypes take the value rounded to the nearest integer (half to even).
std::string_view to_string(Distribution d);
// "uniform01", "uniform_pm1", "normal", "heavy_tailed" (a spec's "distribution"); "specified"
// is not a value a tensor can have and gives nullopt.
std::optional<Distribution> distribution_from_string(std::string_view s);

// The timing inputs' draws of `problem`, one "name distribution" per graph input in the spec's
// order, with " x<scale>" where draw_scale() is not 1 ("A normal, W uniform_pm1 x0.125"), and
// where an input has_draw_scale(), "; the uniform01 round draws the scaled ones on [-1, 1)": what
// a timing was measured on (evidence) and how the correctness rounds draw (the evaluation
// cache's key: a median and a verdict are reused only for inputs drawn alike).
std::string describe_distributions(const Problem& problem);

// numel(tensor) values for `tensor`, row-major, each already round_to_dtype(tensor.dtype). The
// stream depends on `seed` and on the tensor's name, so two inputs drawn with one seed differ.
// Tensors above 2^20 elements are filled in parallel chunks (the same values as one stream).
std::vector<double> generate(const Tensor& tensor, Distribution distribution, uint64_t seed);

// The values of graph input `tensor` of `problem` where an op restricts them: as generate(),
// except that a tensor read as cross_entropy's targets holds class indices uniform in [0, C) (C:
// the logits' last dim), drawn from the same seeded stream. Bool tensors (generate()) are masks
// with about half the elements true. Other tensors: generate()'s values times draw_scale(),
// rounded to the dtype again. Evaluation, the fp64 and GPU references and the timing inputs
// draw every input through this (python/kforge_py/spec_torch.py make_inputs follows the same
// rule for `kforge baseline`). A tensor that has_draw_scale() and is asked for kUniform01 (the
// first correctness round, the full-shape run) is drawn as kUniformPm1 instead.
std::vector<double> generate_input(const Problem& problem, const Tensor& tensor,
                                   Distribution distribution, uint64_t seed);

// The factor generate_input() multiplies `tensor`'s draws by: scale / sqrt(fan_in) where the
// spec gives either (Tensor::scale, Tensor::fan_in; each 1 where absent) - PyTorch's default-init
// bound of a Linear's or a conv's weight and bias, which `kforge import kernelbench` writes:
// drawn N(0, 1) instead, a deep network's activations grow ~sqrt(fan_in) per layer and overflow
// fp32 -; neither given, rnn_weight_scale() for an lstm / gru weight, else 1.
double draw_scale(const Problem& problem, const Tensor& tensor);

// Whether `tensor` is drawn at a scale: its spec gives "scale" or "fan_in", or it is an lstm /
// gru weight (rnn_weight_scale) - a param at its module's init bound. generate_input() draws
// such a tensor's kUniform01 on [-1, 1) times draw_scale(), zero-mean like its module's init:
// on [0, 1), every weight positive, a deep network's activations grow each layer (a GoogleNet's
// reached 1.7e15 at the small shape) and a deeper one overflows fp32, failing the gate for no
// fault of the program's. The round's other inputs keep [0, 1), inside every op's domain (log,
// sqrt), which is what the round is for.
bool has_draw_scale(const Problem& problem, const Tensor& tensor);

// 1 / sqrt(H) when `name` is a weight or bias operand of an lstm / gru op of `problem`, else
// nullopt: PyTorch's init bound, the scale an rnn weight stating neither "scale" nor "fan_in" is
// drawn at (with N(0, 1) weights the recurrence is chaotic - the recurrent matrix's gain
// ~ sqrt(H) - so any fp32 implementation, cuDNN's too, drifts from the fp64 reference far past
// fp32 tolerances within tens of steps).
std::optional<double> rnn_weight_scale(const Problem& problem, const std::string& name);

// The exclusive upper bound of the class indices `name` holds where an op reads it as such
// (cross_entropy's targets: C), or nullopt.
std::optional<int64_t> index_bound(const Problem& problem, const std::string& name);

// Rounds x to the nearest value of `dtype` (round to nearest, ties to even), as a cast on the
// GPU does: f32, f16 and bf16 with subnormals and overflow to infinity; f64 unchanged; i32 and
// i64 to the nearest integer, saturated to the type's range (NaN gives 0); bool: 1 for any
// non-zero x (NaN included), else 0.
double round_to_dtype(double x, DType dtype);

}  // namespace kforge
