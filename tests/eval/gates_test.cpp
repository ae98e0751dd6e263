// Unit tests of the correctness gates (eval/gates.h): one case per failure class.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "eval/gates.h"
#include "problem/inputs.h"
#include "problem/spec.h"

namespace kforge::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Problem problem(const char* policy, const char* dtype) {
    std::string spec = std::string(R"({"name": "p", "dims": {"N": 64},
        "inputs": {"X": {"shape": ["N"], "dtype": ")") + dtype + R"("}},
        "graph": [{"op": "relu", "inputs": ["X"], "output": "Y"}], "outputs": ["Y"],
        "precision": {"policy": ")" + policy + R"(", "atol": 0.001, "rtol": 0.001}})";
    auto p = parse_problem(spec, "<test>");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return *p;
}

std::vector<double> ramp(int n) {
    std::vector<double> v(n);
    for (int i = 0; i < n; ++i) v[i] = 1.0 + 0.37 * i;
    return v;
}

TEST(Gates, ExactOutputsPass) {
    Problem p = problem("fp32_strict", "f32");
    Comparison c = compare_outputs(p, {{"Y", ramp(64)}}, {{"Y", ramp(64)}});
    EXPECT_TRUE(c.passed()) << c.message;
    EXPECT_EQ(c.tensors[0].fraction_ok, 1.0);
    EXPECT_EQ(c.tensors[0].max_abs_err, 0.0);
}

TEST(Gates, OutOfToleranceIsIncorrectWithWorstIndex) {
    Problem p = problem("fp32_strict", "f32");
    std::vector<double> out = ramp(64);
    out[17] += 0.05;
    Comparison c = compare_outputs(p, {{"Y", out}}, {{"Y", ramp(64)}});
    EXPECT_EQ(c.status, EvalStatus::kIncorrect);
    EXPECT_EQ(c.tensors[0].worst_index, 17);
    EXPECT_NEAR(c.tensors[0].max_abs_err, 0.05, 1e-12);
    EXPECT_NE(c.message.find("within atol"), std::string::npos) << c.message;
    auto j = to_json(c, p.tolerance);
    EXPECT_EQ(j["tensors"][0]["worst_index"], 17);
}

TEST(Gates, MinFractionAllowsSomeMissesButTheCapStillHolds) {
    Tolerance t{1e-3, 0, 0.9, 0.01};
    std::vector<double> ref(100, 1.0), out(100, 1.0);
    out[3] = 1.005;  // outside atol, inside the cap
    EXPECT_TRUE(compare_tensor("Y", out, ref, t).passed);
    out[4] = 1.5;  // beyond the cap of 0.01
    TensorComparison c = compare_tensor("Y", out, ref, t);
    EXPECT_FALSE(c.passed);
    EXPECT_NE(c.failure.find("exceeds the cap"), std::string::npos) << c.failure;
}

// Seen on the H200 (swiglu_bf16): a bf16 output of 1272 against a reference of 1280.44 is one
// bf16 step off (spacing 8 at 1024..2048) and within rtol; an absolute cap of 100 * (atol +
// rtol) = 4 wrongly failed it. Without max_error the cap scales with |ref|.
TEST(Gates, DefaultCapScalesWithTheReference) {
    Tolerance t{2e-2, 2e-2, 0.999, 0.0};
    std::vector<double> ref(1000, 1280.438), out(1000, 1280.0);
    out[7] = 1272.0;
    EXPECT_TRUE(compare_tensor("Y", out, ref, t).passed) << compare_tensor("Y", out, ref, t).failure;
    // but one element far outside its band still fails, even when the fraction allows a miss
    ref.assign(1000, 1.0);
    out.assign(1000, 1.0);
    out[7] = 9.0;  // 8 / (0.02 + 0.02) = 200x its band
    TensorComparison c = compare_tensor("Y", out, ref, t);
    EXPECT_FALSE(c.passed);
    EXPECT_NE(c.failure.find("exceeds the cap of 100x"), std::string::npos) << c.failure;
}

// An fp32 GEMM on the H200 (2048^3, heavy-tailed inputs, 2026-12-01): elements that cancel to
// near zero carry the rounding error of their large terms (|ref| 1e-2, error 1e-3) in every
// correct implementation. Outputs computed through a sum get the band atol + rtol * max(|ref|,
// rms(ref)); element-wise outputs keep per-element bands; an element off by the tensor's scale
// still fails.
TEST(Gates, SummedOutputsGetABandAtTheTensorsScale) {
    auto spec = [](const std::string& op) {
        std::string a = op == "matmul" ? R"("A": {"shape": ["M", "K"], "dtype": "f32"}, "B": {"shape": ["K", "M"], "dtype": "f32"})"
                                       : R"("A": {"shape": ["M", "M"], "dtype": "f32"})";
        std::string in = op == "matmul" ? R"(["A", "B"])" : R"(["A"])";
        auto p = parse_problem(R"({"name": "t", "dims": {"M": 8, "K": 8}, "inputs": {)" + a +
                               R"(}, "graph": [{"op": ")" + op + R"(", "inputs": )" + in +
                               R"(, "output": "H"}, {"op": "relu", "inputs": ["H"], "output": "Y"}],
                               "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})", "<test>");
        EXPECT_TRUE(p) << p.error().to_string();
        return *p;
    };
    Problem gemm = spec("matmul"), map = spec("exp");
    EXPECT_TRUE(sums_terms(gemm, "Y"));
    EXPECT_TRUE(sums_terms(gemm, "H"));
    EXPECT_FALSE(sums_terms(map, "Y"));
    std::vector<double> ref(64, 17349.5), out(64, 17349.5);
    ref[9] = 0.01;
    out[9] = 0.011;  // 1e-3 off: outside 1e-4 + 1e-4 * 0.01, inside 1e-4 * rms ~ 1.7
    Comparison c = compare_outputs(gemm, {{"Y", out}}, {{"Y", ref}});
    EXPECT_TRUE(c.passed()) << c.message;
    EXPECT_NEAR(c.tensors[0].scale, rms_finite(ref), 1e-9);
    EXPECT_GT(to_json(c, gemm.tolerance)["tensors"][0]["band_scale"].get<double>(), 1e4);
    c = compare_outputs(map, {{"Y", out}}, {{"Y", ref}});
    EXPECT_FALSE(c.passed());
    out[9] = 20.0;  // wrong by the tensor's scale: fails in both
    c = compare_outputs(gemm, {{"Y", out}}, {{"Y", ref}});
    EXPECT_FALSE(c.passed());
    EXPECT_NE(c.message.find("max(|ref|, rms"), std::string::npos) << c.message;
}

// prod (KernelBench level 1, 50): the band's rtol grows with the factors multiplied (n * 2^-23,
// never below the spec's), and the fp64 reference is held as f32 holds it: an underflowed
// product compares equal to 0 and is not an "all zeros" output, one beyond the f32 range must be
// Inf. Outputs without a prod keep the spec's tolerance and the fp64 reference.
TEST(Gates, ProductOutputsGetABandThatGrowsWithTheFactorsAndTheF32Range) {
    auto spec = [](const std::string& op, int len) {
        auto p = parse_problem(R"({"name": "t", "dims": {"R": 4, "L": )" + std::to_string(len) +
                               R"(}, "inputs": {"X": {"shape": ["R", "L"], "dtype": "f32"}},
                               "graph": [{"op": ")" + op + R"(", "inputs": ["X"], "output": "H",
                               "axis": 1}, {"op": "neg", "inputs": ["H"], "output": "Y"}],
                               "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})", "<test>");
        EXPECT_TRUE(p) << p.error().to_string();
        return *p;
    };
    Problem prod = spec("prod", 2048), sum = spec("sum", 2048), short_prod = spec("prod", 64);
    EXPECT_EQ(product_terms(prod, "Y"), 2048);
    EXPECT_EQ(product_terms(prod, "H"), 2048);
    EXPECT_EQ(product_terms(sum, "Y"), 0);
    EXPECT_DOUBLE_EQ(product_tolerance(prod.tolerance, 2048).rtol, 2048 * 0x1p-23);
    EXPECT_EQ(product_tolerance(short_prod.tolerance, 64).rtol, 1e-4) << "never below the spec's";
    EXPECT_EQ(product_tolerance(prod.tolerance, 0).rtol, 1e-4);

    // 1e-70 and -3e-50 underflow f32 (PyTorch gives 0), 1e50 overflows it (PyTorch gives Inf)
    const std::vector<double> ref = {1e-70, -3e-50, 2.0, 1e50};
    std::vector<double> out = {0.0, -0.0, 2.0 * (1 + 2e-4), kInf};
    Comparison c = compare_outputs(prod, {{"Y", out}}, {{"Y", ref}});
    EXPECT_TRUE(c.passed()) << c.message;
    c = compare_outputs(short_prod, {{"Y", out}}, {{"Y", ref}});
    EXPECT_FALSE(c.passed()) << "2e-4 off is outside the spec's 1e-4 band over 64 factors";
    out[2] = 2.0 * (1 + 5e-4);  // outside 1e-4 + 2048 * 2^-23 * 2
    EXPECT_FALSE(compare_outputs(prod, {{"Y", out}}, {{"Y", ref}}).passed());
    out[2] = 2.0;
    out[3] = 3.4e38;  // finite where f32 must overflow
    EXPECT_FALSE(compare_outputs(prod, {{"Y", out}}, {{"Y", ref}}).passed());
    out[3] = -kInf;
    EXPECT_FALSE(compare_outputs(prod, {{"Y", out}}, {{"Y", ref}}).passed());

    // every product underflowed (one to an f32 subnormal): all zeros is the right answer
    const std::vector<double> tiny = {1e-70, 1e-40, -1e-300, 0.0}, zeros(4, 0.0);
    c = compare_outputs(prod, {{"Y", zeros}}, {{"Y", tiny}});
    EXPECT_TRUE(c.passed()) << c.message;
    EXPECT_FALSE(c.tensors[0].all_zero);
    // a sum keeps the fp64 reference: zeros against it are still "all zeros"
    c = compare_outputs(sum, {{"Y", zeros}}, {{"Y", tiny}});
    EXPECT_FALSE(c.passed());
    EXPECT_TRUE(c.tensors[0].all_zero);
}

TEST(Gates, NaNWhereTheReferenceIsFiniteFails) {
    Problem p = problem("fp32_strict", "f32");
    std::vector<double> out = ramp(64);
    out[5] = kNaN;
    Comparison c = compare_outputs(p, {{"Y", out}}, {{"Y", ramp(64)}});
    EXPECT_EQ(c.status, EvalStatus::kIncorrect);
    EXPECT_EQ(c.tensors[0].nonfinite_count, 1);
    EXPECT_EQ(c.tensors[0].worst_index, 5);
}

TEST(Gates, UnwrittenPoisonedElementsFail) {
    Problem p = problem("fp32_strict", "f32");
    std::vector<double> out = ramp(64);
    for (int i = 56; i < 64; ++i) out[i] = kNaN;  // the harness's NaN poison, never written
    Comparison c = compare_outputs(p, {{"Y", out}}, {{"Y", ramp(64)}});
    EXPECT_EQ(c.status, EvalStatus::kIncorrect);
    EXPECT_EQ(c.tensors[0].nonfinite_count, 8);
    EXPECT_NE(c.message.find("unwritten"), std::string::npos);
}

TEST(Gates, InfOutputFailsButMatchingInfReferencePasses) {
    Tolerance t{1e-3, 1e-3, 1.0, 0};
    std::vector<double> ref = {1.0, kInf, -kInf, kNaN};
    EXPECT_TRUE(compare_tensor("Y", {1.0, kInf, -kInf, kNaN}, ref, t).passed);
    EXPECT_FALSE(compare_tensor("Y", {kInf, kInf, -kInf, kNaN}, ref, t).passed);
    EXPECT_FALSE(compare_tensor("Y", {1.0, -kInf, -kInf, kNaN}, ref, t).passed);
}

TEST(Gates, AllZeroOutputFailsUnlessTheReferenceIsZero) {
    Tolerance t{10.0, 0, 1.0, 100.0};  // loose enough that zeros would be "within tolerance"
    std::vector<double> zeros(64, 0.0);
    TensorComparison c = compare_tensor("Y", zeros, ramp(64), t);
    EXPECT_FALSE(c.passed);
    EXPECT_TRUE(c.all_zero);
    EXPECT_TRUE(compare_tensor("Y", zeros, zeros, t).passed);
}

TEST(Gates, MissingOrMisSizedOutputFails) {
    Problem p = problem("fp32_strict", "f32");
    EXPECT_EQ(compare_outputs(p, {}, {{"Y", ramp(64)}}).status, EvalStatus::kIncorrect);
    EXPECT_EQ(compare_outputs(p, {{"Y", ramp(63)}}, {{"Y", ramp(64)}}).status,
              EvalStatus::kIncorrect);
}

std::vector<double> rounded(const std::vector<double>& v, DType d) {
    std::vector<double> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = round_to_dtype(v[i], d);
    return out;
}

std::vector<double> normal_values(int n) {
    Tensor t{"Y", {"N"}, {n}, DType::kF64, TensorRole::kOutput};
    return generate(t, Distribution::kNormal, 7);
}

TEST(Gates, Bf16ErrorProfileIsFlaggedUnderFp32Strict) {
    std::vector<double> ref = normal_values(4096);
    PrecisionProfile prof = precision_profile(PrecisionPolicy::kFp32Strict, DType::kF32,
                                              rounded(ref, DType::kBF16), ref);
    EXPECT_EQ(prof.looks_like, "bf16");
    EXPECT_GT(prof.median_rel_err, kProfileBf16);
    PrecisionProfile half = precision_profile(PrecisionPolicy::kFp32Strict, DType::kF32,
                                              rounded(ref, DType::kF16), ref);
    EXPECT_EQ(half.looks_like, "tf32/fp16") << half.median_rel_err;
    PrecisionProfile f32 = precision_profile(PrecisionPolicy::kFp32Strict, DType::kF32,
                                             rounded(ref, DType::kF32), ref);
    EXPECT_EQ(f32.looks_like, "");
}

TEST(Gates, ProfileRespectsPolicyAndOutputDtype) {
    std::vector<double> ref = normal_values(4096);
    std::vector<double> bf = rounded(ref, DType::kBF16);
    EXPECT_EQ(precision_profile(PrecisionPolicy::kBf16, DType::kF32, bf, ref).looks_like, "");
    EXPECT_EQ(precision_profile(PrecisionPolicy::kFp32Strict, DType::kBF16, bf, ref).looks_like,
              "");
    EXPECT_EQ(precision_profile(PrecisionPolicy::kTf32, DType::kF32, bf, ref).looks_like, "bf16");
    std::vector<double> half = rounded(ref, DType::kF16);
    EXPECT_EQ(precision_profile(PrecisionPolicy::kTf32, DType::kF32, half, ref).looks_like, "");
}

TEST(Gates, Bf16LookingOutputIsFlaggedGamingWithEvidence) {
    Problem p = problem("fp32_strict", "f32");
    std::vector<double> ref = normal_values(64);
    for (double& v : ref) v = std::fabs(v) + 0.5;
    Comparison c = compare_outputs(p, {{"Y", rounded(ref, DType::kBF16)}}, {{"Y", ref}});
    EXPECT_EQ(c.status, EvalStatus::kFlaggedGaming);
    EXPECT_NE(c.message.find("error profile looks like bf16 (median rel err"), std::string::npos)
        << c.message;
}

TEST(Gates, GarbageIsIncorrectNotAPrecisionFlag) {
    Problem p = problem("fp32_strict", "f32");
    std::vector<double> out = ramp(64);
    for (double& v : out) v *= 1.5;
    EXPECT_EQ(compare_outputs(p, {{"Y", out}}, {{"Y", ramp(64)}}).status, EvalStatus::kIncorrect);
}

TEST(Gates, OutputsIdentical) {
    TensorData a{{"Y", {1.0, kNaN}}}, b{{"Y", {1.0, kNaN}}}, c{{"Y", {1.0, 2.0}}};
    EXPECT_TRUE(outputs_identical(a, b));
    EXPECT_FALSE(outputs_identical(a, c));
    EXPECT_FALSE(outputs_identical(a, {}));
}

// Tensors past one comparison chunk (2^20 elements) are compared in parallel chunks: the result
// must equal one sweep's (the worst index is the FIRST of equal largest errors; the first
// non-finite element wins over any finite error; counts add up across chunks).
TEST(Gates, ChunkedComparisonEqualsOneSweep) {
    const int n = 3 * (1 << 20) + 12345;
    Tolerance t{1e-3, 0, 0.5, 1.0};
    std::vector<double> ref(n), out(n);
    for (int i = 0; i < n; ++i) ref[i] = out[i] = 1.0 + (i % 97) * 0.01;
    out[(1 << 20) + 5] += 0.25;        // equal largest errors in chunks 1 and 2:
    out[2 * (1 << 20) + 7] += 0.25;    // the first one is the worst
    out[100] += 0.1;                   // smaller, in chunk 0
    for (int i = 0; i < 10; ++i) out[(1 << 19) + i] += 0.002;  // outside atol, in chunk 0
    TensorComparison c = compare_tensor("Y", out, ref, t);
    EXPECT_EQ(c.count, n);
    EXPECT_EQ(c.ok_count, n - 13);
    EXPECT_EQ(c.worst_index, (1 << 20) + 5);
    EXPECT_NEAR(c.max_abs_err, 0.25, 1e-12);
    EXPECT_TRUE(c.passed) << c.failure;
    out[3 * (1 << 20) + 2] = kNaN;     // non-finite in the last chunk beats every finite error
    out[2 * (1 << 20) + 1] = kInf;     // ... and the first of them is named
    c = compare_tensor("Y", out, ref, t);
    EXPECT_EQ(c.nonfinite_count, 2);
    EXPECT_EQ(c.worst_index, 2 * (1 << 20) + 1);
    EXPECT_FALSE(c.passed);
}

TEST(Gates, AShortFractionIsNeverPrintedAsTheRequiredOne) {
    // Seen on the H200: "100% of elements within ..., 100% required" for 99.971%.
    Tolerance t{1e-4, 1e-4, 1.0, 0};
    std::vector<double> ref(10000, 0.364), out(10000, 0.364);
    for (int i = 0; i < 3; ++i) out[i * 1000] += 1e-3;
    TensorComparison c = compare_tensor("Y", out, ref, t);
    ASSERT_FALSE(c.passed);
    EXPECT_NE(c.failure.find("99.97% of elements within"), std::string::npos) << c.failure;
    EXPECT_NE(c.failure.find("(3 of 10000 outside)"), std::string::npos) << c.failure;
}

TEST(Gates, OutputsIdenticalAcrossChunks) {
    const int n = 2 * (1 << 20) + 3;
    std::vector<double> v(n, 1.5);
    v[n - 1] = kNaN;
    TensorData a{{"Y", v}}, b{{"Y", v}};
    EXPECT_TRUE(outputs_identical(a, b));
    b["Y"][(1 << 20) + 9] = 1.25;
    EXPECT_FALSE(outputs_identical(a, b));
}

TEST(Gates, ProfileOfALargeOutputSamplesTheMedianButSeesEveryOutlier) {
    Problem p = problem("fp32_strict", "f32");
    const int n = 9 * (1 << 20);
    std::vector<double> ref(n), out(n);
    for (int i = 0; i < n; ++i) {
        ref[i] = 1.0 + (i % 101) * 0.01;
        out[i] = ref[i] * (1 + 1e-3 * ((i % 2) ? 1 : -1));  // bf16-sized errors everywhere
    }
    PrecisionProfile prof = precision_profile(p.policy, DType::kF32, out, ref);
    EXPECT_EQ(prof.looks_like, "bf16");
    EXPECT_LE(prof.sample_count, int64_t{1} << 23);
    EXPECT_NEAR(prof.median_rel_err, 1e-3, 1e-6);
    out[n - 3] = ref[n - 3] * 2;  // one element far off, not on the sampling stride
    EXPECT_EQ(precision_profile(p.policy, DType::kF32, out, ref).looks_like, "");
}

// The conditioning recheck (eval/gates.h): an element whose reference moves under one rounding of
// the inputs gets that much more band, an element that is simply wrong does not.
TEST(Gates, ConditioningWidensOnlyTheBandsOfSensitiveElements) {
    Problem p = problem("fp32_strict", "f32");
    std::vector<double> ref = ramp(1000), out = ramp(1000);  // 1 of 1000 outside
    out[5] += 0.05;  // 0.05 outside a band of ~0.003
    Comparison c = compare_outputs(p, {{"Y", out}}, {{"Y", ref}});
    ASSERT_EQ(c.status, EvalStatus::kIncorrect);
    EXPECT_TRUE(failed_on_bands_only(c));
    TensorData sens{{"Y", std::vector<double>(1000, 0.0)}};
    sens["Y"][5] = 0.01;  // element 5 moves by 0.01 when its inputs round: 8 x 0.01 = 0.08
    Comparison again = compare_outputs(p, {{"Y", out}}, {{"Y", ref}}, &sens);
    EXPECT_TRUE(again.passed()) << again.message;
    EXPECT_TRUE(again.tensors[0].sensitivity_band);
    EXPECT_EQ(to_json(again, p.tolerance)["tensors"][0]["sensitivity_factor"], kSensitivityFactor);
    sens["Y"][5] = 0.001;  // not sensitive enough to forgive 0.05
    Comparison still = compare_outputs(p, {{"Y", out}}, {{"Y", ref}}, &sens);
    EXPECT_EQ(still.status, EvalStatus::kIncorrect);
    EXPECT_NE(still.message.find("change under input rounding"), std::string::npos)
        << still.message;
    sens["Y"][5] = 0.0;
    sens["Y"][6] = 1.0;  // another element's sensitivity does not cover element 5
    EXPECT_FALSE(compare_outputs(p, {{"Y", out}}, {{"Y", ref}}, &sens).passed());
}

TEST(Gates, NonFiniteOrAllZeroOutputsAreNeverRechecked) {
    Problem p = problem("fp32_strict", "f32");
    std::vector<double> out = ramp(64);
    out[3] = kNaN;
    EXPECT_FALSE(failed_on_bands_only(compare_outputs(p, {{"Y", out}}, {{"Y", ramp(64)}})));
    EXPECT_FALSE(failed_on_bands_only(
        compare_outputs(p, {{"Y", std::vector<double>(64, 0.0)}}, {{"Y", ramp(64)}})));
    EXPECT_FALSE(failed_on_bands_only(compare_outputs(p, {}, {{"Y", ramp(64)}})));
    EXPECT_FALSE(failed_on_bands_only(compare_outputs(p, {{"Y", ramp(64)}}, {{"Y", ramp(64)}})));
    std::vector<double> many = ramp(64);
    many[3] += 0.05;  // 1 of 64 outside: more than 1% - a bug, not conditioning
    EXPECT_FALSE(failed_on_bands_only(compare_outputs(p, {{"Y", many}}, {{"Y", ramp(64)}})));
}

TEST(Gates, PerturbedInputsMoveEachFloatElementByTheUnitRoundoff) {
    auto parsed = parse_problem(R"({"name": "p", "dims": {"N": 1000},
        "inputs": {"X": {"shape": ["N"], "dtype": "f32"},
                   "I": {"shape": ["N"], "dtype": "i64"}},
        "graph": [{"op": "relu", "inputs": ["X"], "output": "Y"}], "outputs": ["Y"],
        "precision": {"policy": "fp32_strict"}})", "<test>");
    ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
    const double u = unit_roundoff(PrecisionPolicy::kFp32Strict);
    EXPECT_EQ(u, std::ldexp(1.0, -24));
    EXPECT_EQ(unit_roundoff(PrecisionPolicy::kBf16), std::ldexp(1.0, -8));
    TensorData in{{"X", ramp(1000)}, {"I", std::vector<double>(1000, 7.0)}};
    TensorData a = perturbed_inputs(*parsed, in, u, 1), b = perturbed_inputs(*parsed, in, u, 2);
    EXPECT_EQ(a["I"], in["I"]);  // indices stay as drawn
    int up = 0, differ = 0;
    for (size_t i = 0; i < 1000; ++i) {
        const double rel = a["X"][i] / in["X"][i] - 1;
        EXPECT_NEAR(std::fabs(rel), u, 1e-6 * u) << i;  // double rounding of rel
        up += rel > 0;
        differ += (a["X"][i] != b["X"][i]);
    }
    EXPECT_GT(up, 400);  // signs from a hash: about half each way
    EXPECT_LT(up, 600);
    EXPECT_GT(differ, 400);  // another salt, other signs
    EXPECT_EQ(perturbed_inputs(*parsed, in, u, 1)["X"], a["X"]);  // deterministic
    TensorData s = sensitivity_of({{"Y", {1.0, 2.0, kInf}}},
                                  {{{"Y", {1.5, 2.0, kInf}}}, {{"Y", {0.75, 2.25, 1.0}}}});
    EXPECT_EQ(s["Y"], (std::vector<double>{0.5, 0.25, 0.0}));
}

}  // namespace
}  // namespace kforge::eval
