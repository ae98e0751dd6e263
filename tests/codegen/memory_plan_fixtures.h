// A chain of five map kernels (x -> a -> b -> c -> d -> y, one element-wise op each) whose four
// intermediates fit an arena of two: the memory plan's unit and host-run tests.
#pragma once

namespace kforge::codegen::memplan {

inline constexpr const char* kChain5Problem = R"({"name": "chain5", "dims": {"R": 4, "C": 1024},
  "inputs": {"x": {"shape": ["R","C"], "dtype": "f32"}},
  "graph": [{"op": "relu", "inputs": ["x"], "output": "a"},
            {"op": "sigmoid", "inputs": ["a"], "output": "b"},
            {"op": "tanh", "inputs": ["b"], "output": "c"},
            {"op": "abs", "inputs": ["c"], "output": "d"},
            {"op": "sigmoid", "inputs": ["d"], "output": "y"}],
  "outputs": ["y"], "precision": {"policy": "fp32_strict"}})";

inline constexpr const char* kChain5Program = R"(program chain5 for "chain5"
kernel k0 = map(x[R,C]) { relu; store a[R,C] }
kernel k1 = map(a[R,C]) { sigmoid; store b[R,C] }
kernel k2 = map(b[R,C]) { tanh; store c[R,C] }
kernel k3 = map(c[R,C]) { abs; store d[R,C] }
kernel k4 = map(d[R,C]) { sigmoid; store y[R,C] }
)";

}  // namespace kforge::codegen::memplan
