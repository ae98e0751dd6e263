// Correctness gates: comparison of a candidate's outputs with the fp64 reference. Pure functions.
//
// Per output element: ok when |out - ref| <= atol + rtol * max(|ref|, s) (problem Tolerance), where
// s is 0 for outputs of element-wise and row-wise ops alone, and the rms of the reference tensor
// for outputs computed through a sum of many terms (matmul, linear, sum, mean, layer_norm,
// group_norm, cumsum, on the path from the inputs): such an element's rounding error scales with the
// terms it sums, not with its own value, and an element that cancels to near zero carries the
// error of its large terms (fp32 GEMMs, 2048^3 on the H200, heavy-tailed inputs: |ref| 1e-2,
// |out - ref| 1e-3 in 3 of 4.2M elements with every correct implementation, 2026-12-01). Below
// the band is called atol + rtol * |ref| for short. A tensor
// passes when (1) the fraction of ok elements >= min_fraction, (2) no element is far outside its
// band: |out - ref| <= kRelativeCapFactor * (atol + rtol * |ref|), or, where the spec sets
// max_error, the worst |out - ref| <= max_error, (3) no element is NaN/Inf where the reference is finite (the
// harness poisons outputs with NaN before every run, so an element the candidate never wrote
// is NaN too and fails here as "non-finite or unwritten"), (4) it is not all zeros where the
// reference is not. A non-finite reference element needs the identical value (same Inf, or NaN).
//
// Outputs computed through a product (prod, on the path from the inputs) of n factors in total:
// the relative error of an f32 product grows with n (each multiply rounds once, up to n * 2^-24),
// so rtol is raised to at least n * kProductRelErrPerTerm; and a product leaves the f32 range
// easily (256 randn factors: |prod| ~ 1e-70), so the fp64 reference is first held as the output
// dtype holds it (PyTorch's f32 result): rounded to that dtype (beyond its range: Inf, as the
// candidate must then give), and below the smallest normal f32 flushed to 0 (an underflowed
// product, flushed or subnormal, compares equal and an all-zero output is not "all zeros where
// the reference is not"). Other outputs keep the problem's tolerance unchanged.
//
// Conditioning (only where a comparison failed on its bands alone, evaluate_gates.cpp): the
// reference is computed again on inputs perturbed by the policy's unit roundoff u (each
// floating input element times 1 + u or 1 - u, signs from a hash of its index; two draws), and
// each element's band grows by kSensitivityFactor * its largest change. A problem whose output
// moves more under one rounding of its inputs than the tolerance allows (a softmax over logits
// of 1e6 from heavy-tailed inputs) cannot be computed within that tolerance at the policy's
// precision by any implementation; the recheck forgives that much and no more: a wrong element
// (an indexing or tiling bug) is off by about |ref|, far beyond a band of rounding changes.
// NaN/Inf, unwritten, all-zero and missing outputs, and a tensor with more than 1% of its
// elements outside, are never rechecked.
//
// Error profile (anti-gaming): a policy that demands more precision than the outputs show is
// flagged. Over the elements with |ref| >= 0.1 * rms(ref) (no cancellation blow-up), the median
// of |out - ref| / |ref| is compared with what rounding to a narrower format leaves behind:
// >= kProfileBf16 (bf16 keeps 8 mantissa bits, median ~1e-3) looks like bf16, >= kProfileHalf
// (tf32/fp16: 11 bits, median ~1.2e-4) looks like tf32/fp16. Applied only to f32/f64 outputs:
// fp32_strict flags both, tf32 flags bf16, bf16/fp16 policies flag nothing. A profile flag
// needs the worst relative error below kProfileMaxRel (rounding, not garbage): the comparison
// then says kFlaggedGaming even when the tolerance passed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "device/device.h"
#include "problem/problem.h"
#include "store/enums.h"

namespace kforge::eval {

// The cap on any element without an explicit max_error: its error in units of its band.
inline constexpr double kRelativeCapFactor = 100.0;
inline constexpr double kProfileBf16 = 3e-4;
inline constexpr double kProfileHalf = 4e-5;
inline constexpr double kProfileMaxRel = 0.1;
inline constexpr int64_t kProfileMinElements = 16;
// The conditioning recheck's band per unit of an element's change under input rounding: a
// program rounds every intermediate (q, k, the logits) once or more, each a perturbation the
// size of the inputs' rounding.
inline constexpr double kSensitivityFactor = 8.0;
// A tensor with more of its elements outside than 1 - this is not rechecked.
inline constexpr double kRecheckMinFraction = 0.99;
// Relative error per factor of an f32 product: 2^-23, twice the unit roundoff of one multiply.
inline constexpr double kProductRelErrPerTerm = 0x1p-23;

struct TensorComparison {
    std::string tensor;
    int64_t count = 0;
    int64_t ok_count = 0;
    int64_t nonfinite_count = 0;  // NaN/Inf (or still the NaN poison) where ref is finite
    double fraction_ok = 0;
    double scale = 0;             // s of the band atol + rtol * max(|ref|, s)
    double max_abs_err = 0;       // over finite pairs
    double max_rel_err = 0;       // |out - ref| / |ref| over finite pairs with ref != 0
    int64_t worst_index = -1;     // of max_abs_err (or the first non-finite element)
    double worst_out = 0;
    double worst_ref = 0;
    bool all_zero = false;        // output all zero while the reference is not
    bool sensitivity_band = false;  // bands widened by the conditioning recheck
    bool passed = false;
    std::string failure;          // empty when passed
};

struct PrecisionProfile {
    std::string looks_like;       // "", "bf16", "tf32/fp16"
    double median_rel_err = 0;
    int64_t sample_count = 0;
};

struct Comparison {
    EvalStatus status = EvalStatus::kPassed;  // kPassed, kIncorrect or kFlaggedGaming
    std::string message;                      // first failure in words; empty when passed
    std::vector<TensorComparison> tensors;
    std::vector<PrecisionProfile> profiles;   // per tensor, same order
    bool passed() const { return status == EvalStatus::kPassed; }
};

// Compares one output tensor under `tolerance`; `scale` is s above (0: per-element bands);
// `sensitivity`, when given (the conditioning recheck), adds kSensitivityFactor * its element
// to each band.
TensorComparison compare_tensor(const std::string& name, const std::vector<double>& out,
                                const std::vector<double>& ref, const Tolerance& tolerance,
                                double scale = 0.0,
                                const std::vector<double>* sensitivity = nullptr);

// Whether output `tensor` of `problem` is computed through a sum of many terms (see above).
bool sums_terms(const Problem& problem, const std::string& tensor);

// The number of factors multiplied into output `tensor` by prod ops (the product of their row
// lengths along a path; the largest over paths); 0 when no prod is on its path (see above).
int64_t product_terms(const Problem& problem, const std::string& tensor);

// `tolerance` with rtol raised to terms * kProductRelErrPerTerm (unchanged when terms is 0).
Tolerance product_tolerance(const Tolerance& tolerance, int64_t terms);

// The fp64 reference of a product output as `dtype` holds it (see above); f64: unchanged.
std::vector<double> product_reference(const std::vector<double>& ref, DType dtype);

// The root mean square of the finite elements of `v` (0 when none).
double rms_finite(const std::vector<double>& v);

// The error profile of one tensor (see above); looks_like is empty when nothing is flagged.
PrecisionProfile precision_profile(PrecisionPolicy policy, DType dtype,
                                   const std::vector<double>& out, const std::vector<double>& ref);

// Compares every problem output (missing or mis-sized tensors fail) and runs the profile;
// `sensitivity` (per output, as reference) widens the bands (the conditioning recheck).
Comparison compare_outputs(const Problem& problem, const TensorData& outputs,
                           const TensorData& reference, const TensorData* sensitivity = nullptr);

// Whether a failed comparison failed on its bands alone (no NaN/Inf, unwritten, all-zero,
// missing or mis-sized output, no profile flag): only those get the conditioning recheck.
bool failed_on_bands_only(const Comparison& c);

// The policy's unit roundoff: fp32_strict 2^-24, tf32 and fp16 2^-11, bf16 2^-8.
double unit_roundoff(PrecisionPolicy policy);

// `inputs` with each floating element of the problem's graph inputs times (1 + u) or (1 - u),
// the sign from a hash of (`salt`, tensor, index); integer and bool inputs unchanged.
TensorData perturbed_inputs(const Problem& problem, const TensorData& inputs, double u,
                            uint64_t salt);

// Per output element, the largest |other - reference| over `others` (references of perturbed
// inputs); non-finite pairs give 0.
TensorData sensitivity_of(const TensorData& reference, const std::vector<TensorData>& others);

// True when every output tensor holds bit-identical values in `a` and `b` (NaN equals NaN).
bool outputs_identical(const TensorData& a, const TensorData& b);

// Evidence JSON: per tensor max abs/rel error, fraction ok, worst index and values, counts,
// profile; plus the tolerance.
nlohmann::ordered_json to_json(const Comparison& c, const Tolerance& tolerance);

}  // namespace kforge::eval
