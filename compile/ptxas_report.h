// Parser of the ptxas resource report (`-Xptxas -v`, or NVRTC's `--ptxas-options=-v` log):
// registers, shared memory, spills and stack per entry function. Pure; tested on captured text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::compile {

struct KernelResources {
    std::string name;        // entry function symbol
    std::string arch;        // "sm_90a"
    int registers = 0;
    int barriers = 0;
    int64_t smem_bytes = 0;  // static shared memory (dynamic smem is a launch parameter)
    int64_t cmem_bytes = 0;  // cmem[0]: kernel parameters
    int64_t stack_bytes = 0;
    int64_t spill_stores_bytes = 0;
    int64_t spill_loads_bytes = 0;

    bool spills() const { return spill_stores_bytes > 0 || spill_loads_bytes > 0; }
};

// Every entry function ("Compiling entry function 'x'") in `log`, in order. Lines it does not
// know are ignored; device (non-entry) functions are not reported.
std::vector<KernelResources> parse_ptxas_report(std::string_view log);

// One line per kernel: "kforge_k0 sm_90a: 168 registers, 0 B smem, 0 B stack, no spills".
std::string format_ptxas_report(const std::vector<KernelResources>& kernels);

}  // namespace kforge::compile
