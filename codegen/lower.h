// The program-level lowering driver: a checked dsl::Program -> one CUDA translation unit holding
// every kernel, plus the launch plan. Run after parse_program() and check_program(). The passes,
// in order (each can be dumped through LowerOptions::dump):
//   1. "tensors":  the tensor table (problem tensors + program intermediates)
//   2. "kernel <name>": lower_gemm / lower_rowwise / lower_map per kernel, in program order
//   3. "source":   the translation unit (one shared prelude, device code, host param builders)
//   4. "plan":     the launch plan JSON (buffers merged, launches in order)
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "codegen/kernel_lowering.h"
#include "codegen/launch_plan.h"
#include "common/expected.h"
#include "dsl/ast.h"
#include "problem/problem.h"

namespace kforge::codegen {

struct LowerOptions {
    std::string arch = "sm_90a";
    int sm_count = 132;
    std::string program_hash;          // copied into the plan (dsl content hash)
    std::string source_file = "kernels.cu";
    std::string host_library = "kernels_host.so";  // plan.host_library when there is host code
    // The problem at the shape the kernels' compile-time configuration is derived for, when
    // lowering at another (smaller) one: the evaluator's correctness shapes then run the source
    // the full shape is timed with (one compile serves every shape). Row kernels keep the full
    // shape's vector width and row holding where those also serve the smaller rows (the
    // templates guard every column), a direct convolution its spatial tile; other kernels take
    // nothing from it. Null: the problem.
    const Problem* config_problem = nullptr;
    // Called after each pass with its name and a readable form of its result.
    std::function<void(std::string_view pass, std::string_view text)> dump;
};

struct Lowered {
    std::string cuda_source;  // one .cu translation unit with every kernel of the program
    LaunchPlan plan;
    bool has_host_code = false;  // param builders present: build the host library
    bool uses_cutlass = false;   // needs the CUTLASS include dirs (nvcc only, never NVRTC)
};

// Builds the LowerContext tensor table: every tensor the program names. Problem inputs, params
// and outputs keep their dtype; a tensor stored by the program and not a problem input/output
// is an intermediate with the dtype of the chain's last `cast` before its first store (else
// f32) and the shape of the dims written at that store.
Expected<std::map<std::string, TensorInfo>> build_tensor_table(const dsl::Program& program,
                                                               const Problem& problem);

Expected<Lowered> lower_program(const dsl::Program& program, const Problem& problem,
                                const LowerOptions& options);

}  // namespace kforge::codegen
