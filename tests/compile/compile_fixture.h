// Shared by the compile tests (compile_test.cpp, cache_test.cpp): a tiny kernel, a fresh
// per-process temporary folder, and compile options for sm_90a with a cache in a given folder.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "compile/compile.h"

namespace kforge::compile::testing {

inline constexpr const char* kKernel = R"(
extern "C" __global__ void kforge_scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
)";

// <tmp>/kforge_<suite>_<name>_<pid>, emptied.
inline std::filesystem::path fresh_dir(const std::string& suite, const std::string& name) {
    std::filesystem::path d = std::filesystem::temp_directory_path() /
                              ("kforge_" + suite + "_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

// sm_90a, a 300 s timeout, the cache in `cache`.
inline CompileOptions options_in(const std::filesystem::path& cache) {
    CompileOptions o = default_compile_options("sm_90a");
    o.cache_dir = cache.string();
    o.timeout_s = 300;
    return o;
}

}  // namespace kforge::compile::testing
