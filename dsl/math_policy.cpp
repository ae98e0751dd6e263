// The math-auto rule (dsl/math_policy.h).
#include "dsl/math_policy.h"

namespace kforge::dsl {

ResolvedMath resolve_math(PrecisionPolicy policy, DType a, DType b, MathMode math) {
    if (a != b) return {math, MathRefusal::kOperandsDiffer};
    const bool half = a == DType::kBF16 || a == DType::kF16;
    if (!half && a != DType::kF32) return {math, MathRefusal::kOperandDtype};
    if (math == MathMode::kAuto) {
        if (a == DType::kBF16) return {MathMode::kBf16};
        if (a == DType::kF16) return {MathMode::kF16};
        return {policy == PrecisionPolicy::kFp32Strict ? MathMode::kTf32x3 : MathMode::kTf32};
    }
    if ((math == MathMode::kBf16 && a != DType::kBF16) ||
        (math == MathMode::kF16 && a != DType::kF16))
        return {math, MathRefusal::kNeedsItsDtype};
    if (half && (math == MathMode::kTf32 || math == MathMode::kTf32x3 ||
                 math == MathMode::kF32Simt))
        return {math, MathRefusal::kNotForHalf};
    return {math};
}

ResolvedMath resolve_math(PrecisionPolicy policy, DType operand, MathMode math) {
    return resolve_math(policy, operand, operand, math);
}

std::vector<MathMode> allowed_f32_math(PrecisionPolicy policy) {
    std::vector<MathMode> m{MathMode::kF32Simt, MathMode::kTf32x3};
    if (policy != PrecisionPolicy::kFp32Strict) m.push_back(MathMode::kTf32);
    if (policy == PrecisionPolicy::kBf16) m.push_back(MathMode::kBf16);
    if (policy == PrecisionPolicy::kFp16) m.push_back(MathMode::kF16);
    return m;
}

}  // namespace kforge::dsl
