// Test helpers for running generated chain functors on the host (the let-value and row
// prologue host-run tests): kernels/common.cuh's helpers that a chain functor calls, as scalar
// host code (f32 tensors), and a file reader.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kforge::codegen::hostrun {

inline std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
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

}  // namespace kforge::codegen::hostrun
