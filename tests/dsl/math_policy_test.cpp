// The math-auto rule (dsl/math_policy.h) over every (policy, operand dtype) pair and every math
// mode the code handles.
#include <gtest/gtest.h>

#include "dsl/math_policy.h"

namespace kforge::dsl {
namespace {

const PrecisionPolicy kPolicies[] = {PrecisionPolicy::kFp32Strict, PrecisionPolicy::kTf32,
                                     PrecisionPolicy::kBf16, PrecisionPolicy::kFp16};
const DType kDtypes[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI32,
                         DType::kI64};
const MathMode kModes[] = {MathMode::kAuto, MathMode::kF32Simt, MathMode::kTf32,
                           MathMode::kTf32x3, MathMode::kBf16, MathMode::kF16};

// What `math auto` means: the table the lowerings, the checker, the staging, the simulated
// device and the planner all read.
TEST(ResolveMath, AutoUnderEveryPolicyAndOperandDtype) {
    for (PrecisionPolicy p : kPolicies) {
        SCOPED_TRACE(std::string(to_string(p)));
        EXPECT_EQ(resolve_math(p, DType::kF32).math,
                  p == PrecisionPolicy::kFp32Strict ? MathMode::kTf32x3 : MathMode::kTf32);
        EXPECT_EQ(resolve_math(p, DType::kBF16).math, MathMode::kBf16);
        EXPECT_EQ(resolve_math(p, DType::kF16).math, MathMode::kF16);
        for (DType d : {DType::kF32, DType::kBF16, DType::kF16})
            EXPECT_TRUE(resolve_math(p, d).ok());
        for (DType d : {DType::kF64, DType::kI32, DType::kI64}) {
            ResolvedMath r = resolve_math(p, d);
            EXPECT_EQ(r.refusal, MathRefusal::kOperandDtype) << to_string(d);
            EXPECT_EQ(r.math, MathMode::kAuto);  // as written
        }
    }
}

// An explicit mode runs when the operands can feed it, whatever the policy (whether the policy
// allows it is allowed_f32_math's question); otherwise the refusal says why and the mode stays.
TEST(ResolveMath, ExplicitModesOnEveryOperandDtype) {
    for (PrecisionPolicy p : kPolicies)
        for (DType d : kDtypes)
            for (MathMode m : kModes) {
                if (m == MathMode::kAuto) continue;
                SCOPED_TRACE(std::string(to_string(p)) + " " + std::string(to_string(d)) + " " +
                             std::string(to_string(m)));
                ResolvedMath r = resolve_math(p, d, m);
                EXPECT_EQ(r.math, m);
                const bool half = d == DType::kBF16 || d == DType::kF16;
                MathRefusal want = MathRefusal::kNone;
                if (!half && d != DType::kF32)
                    want = MathRefusal::kOperandDtype;
                else if ((m == MathMode::kBf16 && d != DType::kBF16) ||
                         (m == MathMode::kF16 && d != DType::kF16))
                    want = MathRefusal::kNeedsItsDtype;
                else if (half && m != MathMode::kBf16 && m != MathMode::kF16)
                    want = MathRefusal::kNotForHalf;  // f32_simt, tf32, tf32x3 on 16-bit
                EXPECT_EQ(r.refusal, want);
            }
}

TEST(ResolveMath, OperandsOfTwoDtypesAreRefused) {
    ResolvedMath r = resolve_math(PrecisionPolicy::kTf32, DType::kF32, DType::kBF16);
    EXPECT_EQ(r.refusal, MathRefusal::kOperandsDiffer);
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(resolve_math(PrecisionPolicy::kBf16, DType::kBF16, DType::kBF16).math,
              MathMode::kBf16);
}

TEST(ResolveMath, ThePolicyAllowsTheseOnF32) {
    using V = std::vector<MathMode>;
    EXPECT_EQ(allowed_f32_math(PrecisionPolicy::kFp32Strict),
              (V{MathMode::kF32Simt, MathMode::kTf32x3}));
    EXPECT_EQ(allowed_f32_math(PrecisionPolicy::kTf32),
              (V{MathMode::kF32Simt, MathMode::kTf32x3, MathMode::kTf32}));
    EXPECT_EQ(allowed_f32_math(PrecisionPolicy::kBf16),
              (V{MathMode::kF32Simt, MathMode::kTf32x3, MathMode::kTf32, MathMode::kBf16}));
    EXPECT_EQ(allowed_f32_math(PrecisionPolicy::kFp16),
              (V{MathMode::kF32Simt, MathMode::kTf32x3, MathMode::kTf32, MathMode::kF16}));
    // what auto means on f32 is always allowed
    for (PrecisionPolicy p : kPolicies) {
        V a = allowed_f32_math(p);
        EXPECT_NE(std::find(a.begin(), a.end(), resolve_math(p, DType::kF32).math), a.end());
    }
}

}  // namespace
}  // namespace kforge::dsl
