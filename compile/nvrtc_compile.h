// NVRTC path of the compile driver, for plain kernels (kforge's own templates, no host code, no
// CUTLASS): source -> cubin in-process, with the ptxas report in the log.
#pragma once

#include <string>
#include <string_view>

#include "common/expected.h"
#include "compile/compile.h"

namespace kforge::compile {

struct NvrtcOutput {
    std::string cubin;  // bytes
    std::string log;    // NVRTC program log (includes ptxas -v info)
};

// An Error (with NVRTC's log in `detail`) when NVRTC cannot compile the source; the caller
// falls back to nvcc, which decides whether the source is really broken.
Expected<NvrtcOutput> nvrtc_compile_cubin(std::string_view source, const CompileOptions& options);

}  // namespace kforge::compile
