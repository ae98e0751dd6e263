#include "eval/gates.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "eval/timing.h"
#include "problem/spec.h"

namespace kforge::eval {
namespace {

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

bool same_nonfinite(double out, double ref) {
    if (std::isnan(ref)) return std::isnan(out);
    return out == ref;  // both +Inf or both -Inf
}

}  // namespace

TensorComparison compare_tensor(const std::string& name, const std::vector<double>& out,
                                const std::vector<double>& ref, const Tolerance& tolerance) {
    TensorComparison c;
    c.tensor = name;
    c.count = static_cast<int64_t>(ref.size());
    if (out.size() != ref.size()) {
        c.failure = name + ": " + std::to_string(out.size()) + " elements, expected " +
                    std::to_string(ref.size());
        return c;
    }
    bool out_all_zero = true, ref_all_zero = true;
    int64_t worst_finite = -1, first_nonfinite = -1;
    // Without an explicit max_error the cap scales with each element's tolerance band, so a
    // large output value rounded to bf16 (spacing 8 at 1024..2048) is not an outlier.
    const bool relative_cap = tolerance.max_error <= 0;
    double worst_excess = 0;  // max of |out - ref| / (atol + rtol * |ref|)
    for (size_t i = 0; i < ref.size(); ++i) {
        double o = out[i], r = ref[i];
        if (o != 0) out_all_zero = false;
        if (r != 0) ref_all_zero = false;
        if (!std::isfinite(r)) {
            if (same_nonfinite(o, r)) ++c.ok_count;
            continue;
        }
        if (!std::isfinite(o)) {
            if (c.nonfinite_count++ == 0) first_nonfinite = static_cast<int64_t>(i);
            continue;
        }
        double err = std::fabs(o - r);
        double band = tolerance.atol + tolerance.rtol * std::fabs(r);
        if (err <= band) ++c.ok_count;
        if (band > 0) worst_excess = std::max(worst_excess, err / band);
        else if (err > 0) worst_excess = INFINITY;
        if (r != 0) c.max_rel_err = std::max(c.max_rel_err, err / std::fabs(r));
        if (worst_finite < 0 || err > c.max_abs_err) {
            c.max_abs_err = err;
            worst_finite = static_cast<int64_t>(i);
        }
    }
    c.worst_index = first_nonfinite >= 0 ? first_nonfinite : worst_finite;
    if (c.worst_index >= 0) {
        c.worst_out = out[c.worst_index];
        c.worst_ref = ref[c.worst_index];
    }
    c.fraction_ok = c.count ? static_cast<double>(c.ok_count) / c.count : 1.0;
    c.all_zero = out_all_zero && !ref_all_zero;
    double cap = effective_max_error(tolerance);
    std::string at = " (worst at index " + std::to_string(c.worst_index) + ": out " +
                     fmt(c.worst_out) + ", ref " + fmt(c.worst_ref) + ")";
    if (c.nonfinite_count > 0)
        c.failure = name + ": " + std::to_string(c.nonfinite_count) +
                    " elements are NaN/Inf or unwritten where the reference is finite" + at;
    else if (c.all_zero)
        c.failure = name + ": the output is all zeros, the reference is not";
    else if (c.fraction_ok < tolerance.min_fraction)
        c.failure = name + ": " + fmt(100 * c.fraction_ok) + "% of elements within atol " +
                    fmt(tolerance.atol) + " + rtol " + fmt(tolerance.rtol) + " * |ref|, " +
                    fmt(100 * tolerance.min_fraction) + "% required" + at;
    else if (!relative_cap && c.max_abs_err > cap)
        c.failure = name + ": worst error " + fmt(c.max_abs_err) + " exceeds the cap " +
                    fmt(cap) + at;
    else if (relative_cap && worst_excess > kRelativeCapFactor)
        c.failure = name + ": an element's error is " + fmt(worst_excess) +
                    "x its tolerance atol + rtol * |ref|; it exceeds the cap of " +
                    fmt(kRelativeCapFactor) + "x" + at;
    c.passed = c.failure.empty();
    return c;
}

PrecisionProfile precision_profile(PrecisionPolicy policy, DType dtype,
                                   const std::vector<double>& out,
                                   const std::vector<double>& ref) {
    PrecisionProfile p;
    if (dtype != DType::kF32 && dtype != DType::kF64) return p;
    if (policy == PrecisionPolicy::kBf16 || policy == PrecisionPolicy::kFp16) return p;
    if (out.size() != ref.size()) return p;
    double sum_sq = 0;
    int64_t finite = 0;
    for (double r : ref)
        if (std::isfinite(r)) sum_sq += r * r, ++finite;
    if (finite == 0) return p;
    double floor_abs = 0.1 * std::sqrt(sum_sq / finite);
    std::vector<double> rel;
    double worst = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        double r = ref[i], o = out[i];
        if (!std::isfinite(r) || !std::isfinite(o) || std::fabs(r) < floor_abs || r == 0) continue;
        double e = std::fabs(o - r) / std::fabs(r);
        rel.push_back(e);
        worst = std::max(worst, e);
    }
    p.sample_count = static_cast<int64_t>(rel.size());
    if (p.sample_count < kProfileMinElements) return p;
    p.median_rel_err = quantile(std::move(rel), 0.5);
    if (worst >= kProfileMaxRel) return p;
    if (p.median_rel_err >= kProfileBf16)
        p.looks_like = "bf16";
    else if (p.median_rel_err >= kProfileHalf && policy == PrecisionPolicy::kFp32Strict)
        p.looks_like = "tf32/fp16";
    return p;
}

Comparison compare_outputs(const Problem& problem, const TensorData& outputs,
                           const TensorData& reference) {
    Comparison c;
    for (const std::string& name : problem.outputs) {
        const Tensor* t = problem.find_tensor(name);
        auto r = reference.find(name);
        auto o = outputs.find(name);
        static const std::vector<double> kEmpty;
        const std::vector<double>& ref = r == reference.end() ? kEmpty : r->second;
        if (o == outputs.end()) {
            TensorComparison missing;
            missing.tensor = name;
            missing.count = static_cast<int64_t>(ref.size());
            missing.failure = name + ": output missing";
            c.tensors.push_back(missing);
            c.profiles.emplace_back();
            continue;
        }
        c.tensors.push_back(compare_tensor(name, o->second, ref, problem.tolerance));
        c.profiles.push_back(precision_profile(problem.policy, t ? t->dtype : DType::kF32,
                                               o->second, ref));
    }
    for (size_t i = 0; i < c.tensors.size(); ++i) {
        const PrecisionProfile& p = c.profiles[i];
        if (p.looks_like.empty()) continue;
        c.status = EvalStatus::kFlaggedGaming;
        c.message = c.tensors[i].tensor + ": error profile looks like " + p.looks_like +
                    " (median rel err " + fmt(p.median_rel_err) + ") under policy " +
                    std::string(to_string(problem.policy));
        return c;
    }
    for (const TensorComparison& t : c.tensors) {
        if (t.passed) continue;
        c.status = EvalStatus::kIncorrect;
        c.message = t.failure;
        return c;
    }
    return c;
}

bool outputs_identical(const TensorData& a, const TensorData& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [name, va] : a) {
        auto it = b.find(name);
        if (it == b.end() || it->second.size() != va.size()) return false;
        for (size_t i = 0; i < va.size(); ++i) {
            double x = va[i], y = it->second[i];
            if (std::isnan(x) && std::isnan(y)) continue;
            if (std::memcmp(&x, &y, sizeof x) != 0) return false;
        }
    }
    return true;
}

nlohmann::ordered_json to_json(const Comparison& c, const Tolerance& tolerance) {
    nlohmann::ordered_json j;
    j["status"] = std::string(to_string(c.status));
    if (!c.message.empty()) j["message"] = c.message;
    j["tolerance"] = {{"atol", tolerance.atol},
                      {"rtol", tolerance.rtol},
                      {"min_fraction", tolerance.min_fraction},
                      {"max_error", effective_max_error(tolerance)}};
    auto finite = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v)
                                                         : nlohmann::ordered_json(fmt(v)); };
    for (size_t i = 0; i < c.tensors.size(); ++i) {
        const TensorComparison& t = c.tensors[i];
        nlohmann::ordered_json e;
        e["tensor"] = t.tensor;
        e["passed"] = t.passed;
        e["count"] = t.count;
        e["fraction_ok"] = t.fraction_ok;
        e["max_abs_err"] = t.max_abs_err;
        e["max_rel_err"] = t.max_rel_err;
        e["nonfinite_or_unwritten"] = t.nonfinite_count;
        e["all_zero"] = t.all_zero;
        e["worst_index"] = t.worst_index;
        e["worst_out"] = finite(t.worst_out);
        e["worst_ref"] = finite(t.worst_ref);
        if (!t.failure.empty()) e["failure"] = t.failure;
        const PrecisionProfile& p = c.profiles[i];
        e["profile"] = {{"median_rel_err", p.median_rel_err},
                        {"samples", p.sample_count},
                        {"looks_like", p.looks_like}};
        j["tensors"].push_back(e);
    }
    return j;
}

}  // namespace kforge::eval
