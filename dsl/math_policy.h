// What a gemm's or conv2d's `math` knob means, stated once: `math auto` resolved under the
// problem's precision policy for the operands' dtype, and which explicit modes those operands can
// feed. The lowerings (codegen/gemm_spec.cpp, lower_conv.cpp), the operand staging
// (codegen/gemm_stage.cpp), the checker (dsl/check_legality.cpp), the simulated device's time
// model (perfmodel/sim_model.cpp) and the planner's knobs all call resolve_math.
#pragma once

#include <vector>

#include "dsl/ast.h"
#include "problem/problem.h"

namespace kforge::dsl {

// Why a math mode cannot run on the operands.
enum class MathRefusal {
    kNone,
    kOperandsDiffer,  // A and B have different dtypes
    kOperandDtype,    // the operands are not f32, bf16 or f16
    kNeedsItsDtype,   // math bf16 / f16 on operands stored in another dtype (never converted)
    kNotForHalf,      // math f32_simt / tf32 / tf32x3 on bf16 / f16 operands
};

struct ResolvedMath {
    // The mode that runs: never kAuto when ok(); on a refusal, the mode as written.
    MathMode math = MathMode::kAuto;
    MathRefusal refusal = MathRefusal::kNone;
    bool ok() const { return refusal == MathRefusal::kNone; }
};

// `math` on operands of dtypes `a` and `b` under `policy`. Auto is bf16 on bf16 operands, f16 on
// f16, and on f32 tf32x3 under fp32_strict (fp32-accurate on tensor cores), else tf32. An
// explicit mode is kept when the operands can feed it (whether the policy allows it is the
// checker's allowed_f32_math).
ResolvedMath resolve_math(PrecisionPolicy policy, DType a, DType b,
                          MathMode math = MathMode::kAuto);
// Both operands of dtype `operand` (a conv2d's x and w, a gemm known to have one dtype).
ResolvedMath resolve_math(PrecisionPolicy policy, DType operand, MathMode math = MathMode::kAuto);

// The math modes a precision policy allows written out on f32 operands (the checker's rule).
std::vector<MathMode> allowed_f32_math(PrecisionPolicy policy);

}  // namespace kforge::dsl
