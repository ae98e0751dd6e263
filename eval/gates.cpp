#include "eval/gates.h"

#include <algorithm>
#include <set>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>

#include "common/parallel.h"
#include "device/timing.h"
#include "problem/inputs.h"
#include "problem/spec.h"

namespace kforge::eval {
namespace {

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

// `value` with enough digits to read below `bound` (99.97 is not printed as "100" beside a
// required 100).
std::string fmt_below(double value, double bound) {
    char buf[32];
    for (int digits = 3; digits <= 12; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, value);
        if (value >= bound || std::strtod(buf, nullptr) < bound) break;
    }
    return buf;
}

bool same_nonfinite(double out, double ref) {
    if (std::isnan(ref)) return std::isnan(out);
    return out == ref;  // both +Inf or both -Inf
}

constexpr size_t kProfileMaxSamples = size_t{1} << 20;  // elements behind the median (1M: a
// median to well under 1% of its rank, at a quarter of the cost of 4M on a full-shape output)

// One chunk's share of a tensor comparison (compare_tensor merges them in order).
struct ChunkStats {
    int64_t ok_count = 0, nonfinite_count = 0;
    int64_t worst_finite = -1, first_nonfinite = -1;
    double max_abs_err = 0, max_rel_err = 0, worst_excess = 0;
    bool out_all_zero = true, ref_all_zero = true;
};

ChunkStats compare_chunk(const double* out, const double* ref, const double* sens, size_t lo,
                         size_t hi, const Tolerance& tolerance, double scale) {
    ChunkStats s;
    for (size_t i = lo; i < hi; ++i) {
        double o = out[i], r = ref[i];
        if (o != 0) s.out_all_zero = false;
        if (r != 0) s.ref_all_zero = false;
        if (!std::isfinite(r)) {
            if (same_nonfinite(o, r)) ++s.ok_count;
            continue;
        }
        if (!std::isfinite(o)) {
            if (s.nonfinite_count++ == 0) s.first_nonfinite = static_cast<int64_t>(i);
            continue;
        }
        double err = std::fabs(o - r);
        double band = tolerance.atol + tolerance.rtol * std::max(std::fabs(r), scale);
        if (sens) band += kSensitivityFactor * sens[i];
        if (err <= band) ++s.ok_count;
        if (band > 0) s.worst_excess = std::max(s.worst_excess, err / band);
        else if (err > 0) s.worst_excess = INFINITY;
        if (r != 0) s.max_rel_err = std::max(s.max_rel_err, err / std::fabs(r));
        if (s.worst_finite < 0 || err > s.max_abs_err) {
            s.max_abs_err = err;
            s.worst_finite = static_cast<int64_t>(i);
        }
    }
    return s;
}

// Folds the next chunk (in index order) into `all`.
void merge_into(ChunkStats& all, const ChunkStats& p) {
    all.ok_count += p.ok_count;
    if (all.first_nonfinite < 0) all.first_nonfinite = p.first_nonfinite;
    all.nonfinite_count += p.nonfinite_count;
    if (p.worst_finite >= 0 && (all.worst_finite < 0 || p.max_abs_err > all.max_abs_err)) {
        all.max_abs_err = p.max_abs_err;
        all.worst_finite = p.worst_finite;
    }
    all.max_rel_err = std::max(all.max_rel_err, p.max_rel_err);
    all.worst_excess = std::max(all.worst_excess, p.worst_excess);
    all.out_all_zero = all.out_all_zero && p.out_all_zero;
    all.ref_all_zero = all.ref_all_zero && p.ref_all_zero;
}

}  // namespace

bool sums_terms(const Problem& problem, const std::string& tensor) {
    std::set<std::string> summed;
    for (const Op& op : problem.ops) {
        bool s = op_class(op.kind) == OpClass::kMatrix || op_class(op.kind) == OpClass::kConv ||
                 op.kind == OpKind::kSum || op.kind == OpKind::kMean || op.kind == OpKind::kLayerNorm ||
                 op.kind == OpKind::kGroupNorm || op.kind == OpKind::kCumsum;
        for (const std::string& in : op.inputs) s = s || summed.count(in);
        if (s) summed.insert(op.output);
    }
    return summed.count(tensor) > 0;
}

int64_t product_terms(const Problem& problem, const std::string& tensor) {
    std::map<std::string, int64_t> terms;
    for (const Op& op : problem.ops) {
        int64_t n = 0;
        for (const std::string& in : op.inputs) {
            auto it = terms.find(in);
            if (it != terms.end()) n = std::max(n, it->second);
        }
        if (op.kind == OpKind::kProd) {
            const Tensor* x = problem.find_tensor(op.inputs[0]);
            const int64_t len = x ? x->shape[static_cast<size_t>(op.attrs.axis)] : 1;
            n = std::max<int64_t>(n, 1) * len;
        }
        if (n > 0) terms[op.output] = n;
    }
    auto it = terms.find(tensor);
    return it == terms.end() ? 0 : it->second;
}

Tolerance product_tolerance(const Tolerance& tolerance, int64_t terms) {
    Tolerance t = tolerance;
    if (terms > 0) t.rtol = std::max(t.rtol, static_cast<double>(terms) * kProductRelErrPerTerm);
    return t;
}

std::vector<double> product_reference(const std::vector<double>& ref, DType dtype) {
    std::vector<double> r(ref);
    if (dtype == DType::kF64) return r;
    parallel_chunks(r.size(), [&](size_t, size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
            double x = round_to_dtype(r[i], dtype);
            if (std::fabs(x) < std::numeric_limits<float>::min()) x = std::copysign(0.0, x);
            r[i] = x;
        }
    });
    return r;
}

double rms_finite(const std::vector<double>& v) {
    std::vector<std::pair<double, int64_t>> sums(chunk_count(v.size()));
    parallel_chunks(v.size(), [&](size_t k, size_t begin, size_t end) {
        double s = 0;
        int64_t f = 0;
        for (size_t i = begin; i < end; ++i)
            if (std::isfinite(v[i])) s += v[i] * v[i], ++f;
        sums[k] = {s, f};
    });
    double sum_sq = 0;
    int64_t finite = 0;
    for (const auto& [s, f] : sums) sum_sq += s, finite += f;
    return finite ? std::sqrt(sum_sq / static_cast<double>(finite)) : 0.0;
}

TensorComparison compare_tensor(const std::string& name, const std::vector<double>& out,
                                const std::vector<double>& ref, const Tolerance& tolerance,
                                double scale, const std::vector<double>* sensitivity) {
    TensorComparison c;
    c.tensor = name;
    c.scale = scale;
    if (sensitivity && sensitivity->size() != ref.size()) sensitivity = nullptr;
    c.sensitivity_band = sensitivity != nullptr;
    c.count = static_cast<int64_t>(ref.size());
    if (out.size() != ref.size()) {
        c.failure = name + ": " + std::to_string(out.size()) + " elements, expected " +
                    std::to_string(ref.size());
        return c;
    }
    // Without an explicit max_error the cap scales with each element's tolerance band, so a
    // large output value rounded to bf16 (spacing 8 at 1024..2048) is not an outlier.
    const bool relative_cap = tolerance.max_error <= 0;
    // Full-shape outputs reach 10^9 elements: chunks are compared on every core and merged in
    // chunk order, so the worst index is the first of the largest error, as in one sweep.
    std::vector<ChunkStats> part(chunk_count(ref.size()));
    parallel_chunks(ref.size(), [&](size_t k, size_t begin, size_t end) {
        part[k] = compare_chunk(out.data(), ref.data(),
                                sensitivity ? sensitivity->data() : nullptr, begin, end,
                                tolerance, scale);
    });
    ChunkStats all;
    for (const ChunkStats& p : part) merge_into(all, p);
    c.ok_count = all.ok_count;
    c.nonfinite_count = all.nonfinite_count;
    c.max_abs_err = all.max_abs_err;
    c.max_rel_err = all.max_rel_err;
    const bool out_all_zero = all.out_all_zero, ref_all_zero = all.ref_all_zero;
    const int64_t worst_finite = all.worst_finite, first_nonfinite = all.first_nonfinite;
    const double worst_excess = all.worst_excess;  // max of |out - ref| / (atol + rtol * |ref|)
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
        c.failure = name + ": " + fmt_below(100 * c.fraction_ok, 100 * tolerance.min_fraction) +
                    "% of elements within atol " + fmt(tolerance.atol) + " + rtol " +
                    fmt(tolerance.rtol) +
                    (scale > 0 ? " * max(|ref|, rms " + fmt(scale) + ")" : std::string(" * |ref|")) +
                    (c.sensitivity_band ? " + " + fmt(kSensitivityFactor) +
                                              " x its change under input rounding"
                                        : std::string()) +
                    " (" + std::to_string(c.count - c.ok_count) +
                    " of " + std::to_string(c.count) + " outside), " +
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
    // Two sweeps over chunks on every core: the rms of the reference, then the worst relative
    // error over every element and, for the median, every `stride`-th one (at most
    // kProfileMaxSamples: a deterministic sample of a full-shape output).
    const size_t n = ref.size(), chunks = chunk_count(n);
    const double rms = rms_finite(ref);
    if (rms == 0) return p;
    const double floor_abs = 0.1 * rms;
    const size_t stride = std::max<size_t>(1, n / kProfileMaxSamples);
    std::vector<std::vector<double>> rels(chunks);
    std::vector<double> worsts(chunks, 0.0);
    parallel_chunks(n, [&](size_t k, size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
            double r = ref[i], o = out[i];
            if (!std::isfinite(r) || !std::isfinite(o) || std::fabs(r) < floor_abs || r == 0)
                continue;
            double err = std::fabs(o - r) / std::fabs(r);
            worsts[k] = std::max(worsts[k], err);
            if (i % stride == 0) rels[k].push_back(err);
        }
    });
    std::vector<double> rel;
    for (const auto& r : rels) rel.insert(rel.end(), r.begin(), r.end());
    const double worst = worsts.empty() ? 0.0 : *std::max_element(worsts.begin(), worsts.end());
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
                           const TensorData& reference, const TensorData* sensitivity) {
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
        const DType dtype = t ? t->dtype : DType::kF32;
        if (dtype == DType::kI32 || dtype == DType::kI64 || dtype == DType::kBool) {
            // indices and masks compare exactly (argmax ties: the first index, as PyTorch)
            c.tensors.push_back(compare_tensor(name, o->second, ref, Tolerance{0, 0, 1.0, 0}, 0));
            c.profiles.emplace_back();
            continue;
        }
        const int64_t terms = product_terms(problem, name);
        std::vector<double> held;  // a product's reference as the output dtype holds it
        if (terms > 0) held = product_reference(ref, dtype);
        const std::vector<double>& want = terms > 0 ? held : ref;
        const double scale = sums_terms(problem, name) ? rms_finite(want) : 0.0;
        const std::vector<double>* sens = nullptr;
        if (sensitivity)
            if (auto it = sensitivity->find(name); it != sensitivity->end()) sens = &it->second;
        c.tensors.push_back(compare_tensor(name, o->second, want,
                                           product_tolerance(problem.tolerance, terms), scale,
                                           sens));
        c.profiles.push_back(precision_profile(problem.policy, dtype, o->second, want));
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

bool failed_on_bands_only(const Comparison& c) {
    if (c.status != EvalStatus::kIncorrect) return false;
    for (const TensorComparison& t : c.tensors) {
        if (t.passed) continue;
        // ill conditioning moves a few elements (3 of 50M in L3 43); a kernel wrong in more
        // than 1% of them is not rechecked (a reference or two the CPU need not compute). A
        // missing or mis-sized output has fraction_ok 0.
        if (t.fraction_ok < kRecheckMinFraction || t.nonfinite_count > 0 || t.all_zero)
            return false;
    }
    return true;
}

double unit_roundoff(PrecisionPolicy policy) {
    switch (policy) {
        case PrecisionPolicy::kFp32Strict: return 0x1p-24;
        case PrecisionPolicy::kTf32:
        case PrecisionPolicy::kFp16: return 0x1p-11;
        case PrecisionPolicy::kBf16: return 0x1p-8;
    }
    return 0x1p-24;
}

TensorData perturbed_inputs(const Problem& problem, const TensorData& inputs, double u,
                            uint64_t salt) {
    TensorData out = inputs;
    uint64_t tensor_salt = salt;
    for (const Tensor* t : problem.graph_inputs()) {
        tensor_salt = tensor_salt * 0x9e3779b97f4a7c15ULL + 1;
        if (t->dtype == DType::kI32 || t->dtype == DType::kI64 || t->dtype == DType::kBool)
            continue;
        auto it = out.find(t->name);
        if (it == out.end()) continue;
        std::vector<double>& v = it->second;
        const uint64_t base = tensor_salt;
        parallel_chunks(v.size(), [&](size_t, size_t begin, size_t end) {
            for (size_t i = begin; i < end; ++i) {
                uint64_t h = base + 0x9e3779b97f4a7c15ULL * (i + 1);  // splitmix64
                h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
                h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
                h ^= h >> 31;
                v[i] *= (h & 1) ? 1.0 + u : 1.0 - u;
            }
        });
    }
    return out;
}

TensorData sensitivity_of(const TensorData& reference, const std::vector<TensorData>& others) {
    TensorData out;
    for (const auto& [name, ref] : reference) {
        std::vector<double> d(ref.size(), 0.0);
        for (const TensorData& other : others) {
            auto it = other.find(name);
            if (it == other.end() || it->second.size() != ref.size()) continue;
            const std::vector<double>& o = it->second;
            parallel_chunks(ref.size(), [&](size_t, size_t begin, size_t end) {
                for (size_t i = begin; i < end; ++i)
                    if (std::isfinite(ref[i]) && std::isfinite(o[i]))
                        d[i] = std::max(d[i], std::fabs(o[i] - ref[i]));
            });
        }
        out.emplace(name, std::move(d));
    }
    return out;
}

bool outputs_identical(const TensorData& a, const TensorData& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [name, va] : a) {
        auto it = b.find(name);
        if (it == b.end() || it->second.size() != va.size()) return false;
        const std::vector<double>& vb = it->second;
        std::atomic<bool> differ{false};
        parallel_chunks(va.size(), [&](size_t, size_t begin, size_t end) {
            for (size_t i = begin; i < end && !differ.load(std::memory_order_relaxed); ++i) {
                double x = va[i], y = vb[i];
                if (std::isnan(x) && std::isnan(y)) continue;
                if (std::memcmp(&x, &y, sizeof x) != 0) differ = true;
            }
        });
        if (differ) return false;
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
        if (t.scale > 0) e["band_scale"] = t.scale;
        if (t.sensitivity_band) e["sensitivity_factor"] = kSensitivityFactor;
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
