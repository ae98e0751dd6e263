// Test helpers for running generated chain functors on the host (the let-value, row prologue
// and pool host-run tests): kernels/common.cuh's helpers that a chain functor calls, as scalar
// host code (f32 tensors), a file reader, and the build of a test's run.cpp.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace kforge::codegen::hostrun {

inline std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Compiles DIR/run.cpp to DIR/run with the host C++ compiler (KFORGE_HOST_CXX, defined by each
// host-run test target): the compiler's exit status (-1 when it could not start) and output.
struct HostBuild {
    int status = -1;
    std::string log;
};
inline HostBuild build_host_run(const std::filesystem::path& dir) {
    const std::string cc = std::string(KFORGE_HOST_CXX) + " -std=c++17 -O1 -o " +
                           (dir / "run").string() + " " + (dir / "run.cpp").string() + " 2>&1";
    HostBuild b;
    FILE* p = popen(cc.c_str(), "r");
    char buf[512];
    while (p && fgets(buf, sizeof buf, p)) b.log += buf;
    b.status = p ? pclose(p) : -1;
    return b;
}

// Writes each f32 tensor of `tensors` to DIR/<name>.bin and returns the run.cpp lines that read
// them, in the map's order, from argv[first], argv[first + 1], .. into std::vector<float> <name>
// (the program returns 2 where one cannot be read).
inline std::string write_f32_inputs(const std::filesystem::path& dir,
                                    const std::map<std::string, std::vector<float>>& tensors,
                                    int first) {
    std::string reads;
    int arg = first;
    for (const auto& [name, values] : tensors) {
        std::ofstream(dir / (name + ".bin"), std::ios::binary)
            .write(reinterpret_cast<const char*>(values.data()),
                   std::streamsize(values.size() * sizeof(float)));
        reads += "    std::vector<float> " + name + "(" + std::to_string(values.size()) + ");\n"
                 "    { FILE* f = std::fopen(argv[" + std::to_string(arg++) + "], \"rb\");\n"
                 "      if (!f || std::fread(" + name + ".data(), 4, " + name + ".size(), f) != " +
                 name + ".size()) return 2; std::fclose(f); }\n";
    }
    return reads;
}

// kernels/common.cuh's helpers that a chain functor calls, as scalar host code (f32 tensors).
inline constexpr const char* kHostShim = R"(#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>
#define __device__
#define __forceinline__ inline
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
namespace kforge {
inline float to_f32(float v) { return v; }
template <typename T> inline float round_to(float v) { return v; }
template <int V, typename T> inline bool is_aligned(const T*) { return true; }
template <int V, bool CONTIG, typename T, class Off>
inline void load_bcast(float (&o)[V], const T* p, int64_t i, Off off) {
    for (int j = 0; j < V; ++j) o[j] = p[off(i + j)];
}
template <int V, typename T> inline void store_vec(T* p, const float (&v)[V]) {
    for (int j = 0; j < V; ++j) p[j] = v[j];
}
inline float max_nan(float a, float b) { return (a > b || a != a) ? a : b; }
inline float min_nan(float a, float b) { return (a < b || a != a) ? a : b; }
}  // namespace kforge
)";

// A header or generated source without its #include lines and #pragma once (the host-run
// translation unit pastes them in order).
inline std::string strip_includes(const std::string& s) {
    return std::regex_replace(s, std::regex(R"(#include "[^"]*"\n|#pragma once\n)"), "");
}

// kernels/common.cuh's load_vec and the CUDA built-ins a one-launch kernel (map, copy) uses,
// for a host loop over every block and thread.
inline constexpr const char* kGridShim = R"(#include <algorithm>
#include <cstring>
#include <map>
#include <string>
namespace kforge {
template <int V, typename T> inline void load_vec(float (&o)[V], const T* p) {
    for (int j = 0; j < V; ++j) o[j] = p[j];
}
}  // namespace kforge
struct KfDim3 { unsigned x = 0, y = 0, z = 0; };
static KfDim3 blockIdx, threadIdx, gridDim;
#define __global__
#define __launch_bounds__(n)
)";

// The host loop that runs one launch of a one-dimensional grid: every block, every thread,
// calling `symbol(args)` (the map, copy and memory-plan host-run tests).
inline std::string grid_loop(unsigned grid, unsigned block, const std::string& symbol,
                             const std::string& args) {
    return "    gridDim.x = " + std::to_string(grid) + ";\n"
           "    for (unsigned b = 0; b < gridDim.x; ++b)\n"
           "        for (unsigned th = 0; th < " + std::to_string(block) + "; ++th) {\n"
           "            blockIdx.x = b; threadIdx.x = th;\n"
           "            " + symbol + "(" + args + ");\n        }\n";
}

}  // namespace kforge::codegen::hostrun
