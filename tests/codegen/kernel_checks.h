// Checks the one-kernel-kind codegen tests share (copy, pool, rnn): a lowered program compiles
// with NVRTC for sm_90a, and a program passes every gate of the full tier on a device.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "compile/compile.h"
#include "compile/nvrtc_compile.h"
#include "device/device.h"
#include "dsl/printer.h"
#include "eval/evaluate.h"

namespace kforge::codegen::testing {

// NVRTC compiles `cuda_source` for sm_90a; the compiler's message and the source when not.
inline void expect_nvrtc_compiles(const std::string& cuda_source) {
    auto cubin =
        compile::nvrtc_compile_cubin(cuda_source, compile::default_compile_options("sm_90a"));
    EXPECT_TRUE(cubin.ok()) << (cubin.ok() ? "" : cubin.error().to_string()) << "\n" << cuda_source;
}

// `program` evaluated at the full tier on `device` passes every gate; the report for more checks.
inline eval::EvalReport expect_full_tier_passes(eval::Device& device, const Problem& problem,
                                                const dsl::Program& program) {
    eval::EvalRequest r;
    r.problem = problem;
    r.program_text = dsl::print_canonical(program);
    r.tier = EvalTier::kFull;
    eval::EvalReport rep = eval::evaluate(device, r);
    EXPECT_EQ(rep.status, EvalStatus::kPassed) << eval::to_json(rep).dump(2);
    return rep;
}

}  // namespace kforge::codegen::testing
