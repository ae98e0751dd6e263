// The GPU reference: a problem's graph evaluated on the device in fp64, op by op, exactly as the
// CPU interpreter (problem/interpret.h) defines each op, so that correctness_full can check a
// candidate at the problem's real full shape (the CPU interpreter is O(FLOPs) on one core).
//
// generate_reference_program() turns a problem (at its bound dims) into CUDA source: the fixed
// library of fp64 device functions (gpu_reference_library()) plus one extern "C" kernel per op
// with every shape, stride and attribute baked in as a literal, and the launch sequence. Every
// tensor of the graph (inputs, params, intermediates, outputs) lives in its own fp64 buffer;
// kernel parameters are only those buffers' pointers. Device-free: the source compiles with
// NVRTC on any machine (tests/reference/gpu_reference_source_test.cpp). CudaDevice::reference()
// compiles it (module cached per source and arch), runs it and copies the outputs back.
//
// Accumulation is fp64 throughout: the GEMM adds the products of each output in the
// interpreter's order (p = 0..K-1, fused multiply-adds); row reductions over long rows use fp64
// tree sums. Transcendentals are CUDA's double-precision functions (within 1-2 ulp of glibc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "problem/problem.h"

namespace kforge::eval {

// The name CudaDevice::reference() reports and evidence records ("reference_kind").
inline constexpr std::string_view kGpuReferenceKind = "gpu_fp64";
inline constexpr std::string_view kCpuReferenceKind = "cpu_fp64_interpreter";

struct ReferenceLaunch {
    std::string symbol;                // extern "C" kernel name
    unsigned grid[3]{1, 1, 1};
    unsigned block[3]{1, 1, 1};
    std::vector<std::string> tensors;  // its parameters, in order: fp64 buffers by tensor name
};

struct ReferenceProgram {
    std::string source;                    // library + one kernel per op
    std::vector<ReferenceLaunch> launches;  // in graph order
    int64_t buffer_bytes = 0;              // fp64 bytes of every tensor of the graph
};

// The fixed fp64 device library every reference source starts with.
std::string_view gpu_reference_library();

// The reference program of `problem` (parse_problem() output, at the dims to evaluate). An Error
// (where: the op's json_path) for a graph the generator cannot express, e.g. more than 2^31-1
// threads' worth of rows in one dimension of the grid.
Expected<ReferenceProgram> generate_reference_program(const Problem& problem);

}  // namespace kforge::eval
