// Problems of the grouped, depthwise and transposed convolution tests (conv_forms_test.cpp on
// the CPU, conv_gpu_test.cpp on a GPU): y = relu(conv(x, w) + b) for one convolution form.
#pragma once

#include <string>
#include <vector>

namespace kforge::codegen::conv_forms {

struct FormCase {
    std::string name;
    std::string op;                 // conv1d, conv2d, conv_transpose2d, ...
    int64_t c = 0, k = 0;           // input channels, output channels
    std::vector<int64_t> spatial;   // x's spatial sizes
    std::vector<int64_t> taps;      // the filter's spatial sizes
    std::string attrs;              // ", \"stride\": 2, ..." (JSON members of the op)
    int64_t groups = 1;
    bool bias = true;               // y = relu(conv(x, w) + b), else relu(conv(x, w))
};

inline std::string list(const std::vector<std::string>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s + "]";
}

// The problem of `f` with batch `n` and x's spatial sizes times `scale`, in dtype / policy.
inline std::string form_json(const FormCase& f, int64_t n = 2, int64_t scale = 1,
                             const std::string& dtype = "f32",
                             const std::string& policy = "fp32_strict") {
    const bool transpose = f.op.find("transpose") != std::string::npos;
    std::vector<std::string> x = {"\"N\"", "\"C\""}, w, out;
    for (int64_t s : f.spatial) x.push_back(std::to_string(s * scale));
    if (transpose) {
        w = {"\"C\"", f.groups == 1 ? "\"K\"" : std::to_string(f.k / f.groups)};
    } else {
        w = {"\"K\"", std::to_string(f.c / f.groups)};
    }
    for (int64_t t : f.taps) w.push_back(std::to_string(t));
    const char* names[] = {"Z", "P", "Q"};
    for (size_t i = 0; i < f.spatial.size(); ++i)
        out.push_back(std::string("\"") + names[3 - f.spatial.size() + i] + "\"");
    return R"({"name": ")" + f.name + R"(", "dims": {"N": )" + std::to_string(n) +
           R"(, "C": )" + std::to_string(f.c) + R"(, "K": )" + std::to_string(f.k) + R"(},
      "inputs": {"x": {"shape": )" + list(x) + R"(, "dtype": ")" + dtype + R"("},
                 "w": {"shape": )" + list(w) + R"(, "dtype": ")" + dtype + R"(", "param": true})" +
           (f.bias ? R"(,
                 "b": {"shape": ["K"], "dtype": ")" + dtype + R"(", "param": true})" : "") + R"(},
      "graph": [{"op": ")" + f.op + R"(", "inputs": )" +
           (f.bias ? R"(["x", "w", "b"])" : R"(["x", "w"])") + R"(, "output": "h", "groups": )" +
           std::to_string(f.groups) + f.attrs + R"(, "out_dims": )" + list(out) + R"(},
                {"op": "relu", "inputs": ["h"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": ")" + policy + R"("}})";
}

// One case per form and attribute mix (channel counts that need padding or odd access widths,
// asymmetric filters, stride with padding, dilation, output_padding).
inline std::vector<FormCase> cases() {
    return {
        {"depthwise2d", "conv2d", 32, 32, {20, 18}, {3, 3}, R"(, "padding": 1)", 32},
        {"depthwise2d_strided", "conv2d", 16, 16, {21, 19}, {5, 3},
         R"(, "stride": 2, "padding": [2, 1], "dilation": [1, 2])", 16},
        {"depthwise2d_padded", "conv2d", 8, 8, {24, 20}, {3, 1}, "", 8},
        {"depthwise1d", "conv1d", 16, 16, {45}, {5}, R"(, "stride": 2, "padding": 2)", 16},
        {"grouped2d_multiple", "conv2d", 8, 16, {13, 11}, {3, 3}, R"(, "padding": 1)", 4},
        {"grouped2d_single", "conv2d", 64, 128, {9, 10}, {3, 3}, R"(, "stride": 2)", 2},
        {"transpose2d_strided", "conv_transpose2d", 6, 5, {9, 7}, {3, 3},
         R"(, "stride": 2, "padding": 1, "output_padding": 1)"},
        {"transpose2d_dilated", "conv_transpose2d", 6, 5, {8, 9}, {3, 5},
         R"(, "padding": [1, 2], "dilation": [2, 1])"},
        {"transpose1d", "conv_transpose1d", 4, 6, {33}, {3},
         R"(, "stride": 3, "padding": 1, "output_padding": 2)"},
        // stride with dilation: x staged with zeros inserted, a unit-stride dgrad
        {"transpose2d_strided_dilated", "conv_transpose2d", 4, 6, {7, 6}, {3, 3},
         R"(, "stride": [2, 3], "padding": 1, "dilation": 2, "output_padding": 1)"},
        {"transpose1d_strided_dilated", "conv_transpose1d", 8, 4, {50}, {3},
         R"(, "stride": 2, "padding": 1, "dilation": 2)"},
        // groups: one dense dgrad on a block-diagonal filter (KernelBench's grouped transposed
        // convolutions have no bias)
        {"transpose2d_grouped", "conv_transpose2d", 8, 12, {6, 7}, {3, 3},
         R"(, "stride": 2, "padding": 1, "output_padding": 1)", 4, false},
        {"transpose3d_grouped", "conv_transpose3d", 8, 8, {3, 4, 5}, {3, 3, 3},
         R"(, "stride": 2, "padding": 1, "output_padding": [1, 0, 1])", 4, false},
        {"transpose3d_strided", "conv_transpose3d", 4, 6, {5, 6, 7}, {3, 3, 3},
         R"(, "stride": 2, "padding": 1, "output_padding": [1, 0, 1])"},
        {"transpose3d_dilated", "conv_transpose3d", 4, 6, {4, 5, 6}, {3, 2, 3},
         R"(, "padding": 1, "dilation": 2)"},
        // groups of whole tiles of 8 filters on f32: the direct convolution (the 3-D one has no
        // CUTLASS form)
        {"grouped3d_direct", "conv3d", 6, 16, {4, 5, 6}, {3, 3, 3}, R"(, "padding": 1)", 2},
        {"grouped2d_direct", "conv2d", 12, 24, {9, 10}, {3, 3}, R"(, "stride": 2)", 3},
    };
}

}  // namespace kforge::codegen::conv_forms
