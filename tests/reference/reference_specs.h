// Problems for the GPU reference tests: every suite problem (problems/*.json) and one small
// spec per op of the op set (covering every OpKind, broadcasting, transposes, batch broadcast,
// optional operands, both row-reduction paths of reference/gpu_reference_source.cpp and tiles that
// do not divide the dims).
#pragma once

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "problem/interpret.h"
#include "problem/spec.h"
#include "problem/work.h"
#include "rnn_specs.h"

namespace kforge::eval::testing {

struct NamedSpec {
    std::string name;
    std::string json;
};

// A spec whose inputs are f32 unless `inputs` gives a dtype.
inline std::string op_spec(const std::string& name, const std::string& dims,
                           const std::string& inputs, const std::string& graph) {
    nlohmann::ordered_json in = nlohmann::ordered_json::parse(inputs);
    for (auto& [tensor, decl] : in.items())
        if (!decl.contains("dtype")) decl["dtype"] = "f32";
    return R"({"name": ")" + name + R"(", "dims": )" + dims + R"(, "inputs": )" + in.dump() +
           R"(, "graph": )" + graph +
           R"(, "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";
}

// One op "Y = op(X)" on X [R, C] (R = 7, C = 45) with `attrs` (a JSON fragment or "").
inline NamedSpec unary_spec(const std::string& name, const std::string& op,
                            const std::string& attrs = "") {
    return {name, op_spec(name, R"({"R": 7, "C": 45})", R"({"X": {"shape": ["R", "C"]}})",
                          R"([{"op": ")" + op + R"(", "inputs": ["X"], "output": "Y")" +
                              (attrs.empty() ? "" : ", " + attrs) + "}]")};
}

inline NamedSpec graph_spec(const std::string& name, const std::string& dims,
                            const std::string& inputs, const std::string& op,
                            const std::string& operands, const std::string& attrs = "") {
    return {name, op_spec(name, dims, inputs,
                          R"([{"op": ")" + op + R"(", "inputs": )" + operands +
                              R"(, "output": "Y")" + (attrs.empty() ? "" : ", " + attrs) + "}]")};
}

inline std::vector<NamedSpec> every_op_specs() {
    const std::string mnk = R"({"M": 70, "N": 33, "K": 19, "P": 2, "Q": 3})";
    const std::string rc = R"({"R": 5, "C": 40})";
    const std::string abc = R"({"A": 3, "B": 6, "C": 37})";
    std::vector<NamedSpec> s = {
        graph_spec("matmul", mnk, R"({"A": {"shape": ["M", "K"]}, "B": {"shape": ["K", "N"]}})",
                   "matmul", R"(["A", "B"])"),
        graph_spec("matmul_tt", mnk,
                   R"({"A": {"shape": ["K", "M"]}, "B": {"shape": ["N", "K"]}})", "matmul",
                   R"(["A", "B"])", R"("transpose_a": true, "transpose_b": true)"),
        graph_spec("matmul_batch_broadcast", mnk,
                   R"({"A": {"shape": ["P", "Q", "M", "K"]}, "B": {"shape": ["Q", "K", "N"]}})",
                   "matmul", R"(["A", "B"])"),
        graph_spec("matmul_batch_ta", mnk,
                   R"({"A": {"shape": ["Q", "K", "M"]}, "B": {"shape": ["P", 1, "K", "N"]}})",
                   "matmul", R"(["A", "B"])", R"("transpose_a": true)"),
        graph_spec("linear_bias", mnk,
                   R"({"X": {"shape": ["P", "M", "K"]}, "W": {"shape": ["N", "K"]},
                       "b": {"shape": ["N"]}})",
                   "linear", R"(["X", "W", "b"])"),
        graph_spec("linear", mnk, R"({"X": {"shape": ["M", "K"]}, "W": {"shape": ["N", "K"]}})",
                   "linear", R"(["X", "W"])"),
        graph_spec("add_row_broadcast", rc,
                   R"({"A": {"shape": ["R", "C"]}, "B": {"shape": ["C"]}})", "add",
                   R"(["A", "B"])"),
        graph_spec("sub_outer", rc, R"({"A": {"shape": ["R", 1]}, "B": {"shape": [1, "C"]}})",
                   "sub", R"(["A", "B"])"),
        graph_spec("mul", rc, R"({"A": {"shape": ["R", "C"]}, "B": {"shape": ["R", "C"]}})", "mul",
                   R"(["A", "B"])"),
        graph_spec("div_col_broadcast", abc,
                   R"({"X": {"shape": ["A", "B", "C"]}, "D": {"shape": ["B", 1]}})", "div",
                   R"(["X", "D"])"),
        unary_spec("scale", "scale", R"("value": 0.37)"),
        unary_spec("add_scalar", "add_scalar", R"("value": -1.25)"),
        unary_spec("min_scalar", "min_scalar", R"("value": 0.2)"),
        unary_spec("max_scalar", "max_scalar", R"("value": -0.3)"),
        unary_spec("relu", "relu"),
        unary_spec("leaky_relu", "leaky_relu", R"("negative_slope": 0.2)"),
        unary_spec("gelu_erf", "gelu"),
        unary_spec("gelu_tanh", "gelu", R"("approximate": "tanh")"),
        unary_spec("silu", "silu"),
        unary_spec("sigmoid", "sigmoid"),
        unary_spec("tanh", "tanh"),
        unary_spec("mish", "mish"),
        unary_spec("hardtanh", "hardtanh", R"("min": -0.5, "max": 0.7)"),
        unary_spec("clamp_min_only", "clamp", R"("min": -0.1)"),
        unary_spec("softplus", "softplus", R"("beta": 2, "threshold": 3)"),
        unary_spec("exp", "exp"),
        unary_spec("log", "log"),
        unary_spec("dropout", "dropout", R"("p": 0.1)"),
        unary_spec("neg", "neg"),
        unary_spec("abs", "abs"),
        unary_spec("sqrt", "sqrt"),
        unary_spec("rsqrt", "rsqrt"),
        unary_spec("square", "square"),
        unary_spec("erf", "erf"),
        unary_spec("log1p", "log1p"),
        unary_spec("expm1", "expm1"),
        unary_spec("sin", "sin"),
        unary_spec("cos", "cos"),
        unary_spec("sign", "sign"),
        unary_spec("reciprocal", "reciprocal"),
        graph_spec("maximum_row_broadcast", rc,
                   R"({"A": {"shape": ["R", "C"]}, "B": {"shape": ["C"]}})", "maximum",
                   R"(["A", "B"])"),
        graph_spec("minimum_outer", rc, R"({"A": {"shape": ["R", 1]}, "B": {"shape": [1, "C"]}})",
                   "minimum", R"(["A", "B"])"),
        graph_spec("sum_last", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "sum", R"(["X"])"),
        graph_spec("sum_first", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "sum", R"(["X"])",
                   R"("axis": 0)"),
        graph_spec("mean_middle_keepdim", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "mean",
                   R"(["X"])", R"("axis": 1, "keepdim": true)"),
        graph_spec("max_last", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "max", R"(["X"])"),
        graph_spec("min_middle", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "min", R"(["X"])",
                   R"("axis": -2)"),
        // prod: a block per contiguous row (C = 37) and a thread per strided row (over B)
        graph_spec("prod_last", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "prod", R"(["X"])"),
        graph_spec("prod_middle_keepdim", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "prod",
                   R"(["X"])", R"("axis": 1, "keepdim": true)"),
        graph_spec("softmax_last", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "softmax",
                   R"(["X"])"),
        graph_spec("softmax_first", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "softmax",
                   R"(["X"])", R"("axis": 0)"),
        graph_spec("log_softmax_middle", abc, R"({"X": {"shape": ["A", "B", "C"]}})",
                   "log_softmax", R"(["X"])", R"("axis": 1)"),
        graph_spec("logsumexp_keepdim", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "logsumexp",
                   R"(["X"])", R"("keepdim": true)"),
        // few long rows: one block per row, strided (inner = 5) and contiguous
        graph_spec("softmax_long_strided", R"({"A": 3, "L": 600, "I": 5})",
                   R"({"X": {"shape": ["A", "L", "I"]}})", "softmax", R"(["X"])",
                   R"("axis": 1)"),
        graph_spec("max_long_strided", R"({"A": 3, "L": 600, "I": 5})",
                   R"({"X": {"shape": ["A", "L", "I"]}})", "max", R"(["X"])", R"("axis": 1)"),
        graph_spec("sum_long_rows", R"({"R": 3, "C": 5000})", R"({"X": {"shape": ["R", "C"]}})",
                   "sum", R"(["X"])"),
        graph_spec("layer_norm_affine_2d", abc,
                   R"({"X": {"shape": ["A", "B", "C"]}, "w": {"shape": ["B", "C"]},
                       "b": {"shape": ["B", "C"]}})",
                   "layer_norm", R"(["X", "w", "b"])", R"("normalized_shape": ["B", "C"])"),
        graph_spec("layer_norm_plain", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "layer_norm",
                   R"(["X"])", R"("eps": 0.001)"),
        graph_spec("rms_norm_weight", abc,
                   R"({"X": {"shape": ["A", "B", "C"]}, "w": {"shape": ["C"]}})", "rms_norm",
                   R"(["X", "w"])"),
        graph_spec("rms_norm_plain", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "rms_norm",
                   R"(["X"])"),
        graph_spec("l1_normalize_last", abc, R"({"X": {"shape": ["A", "B", "C"]}})",
                   "l1_normalize", R"(["X"])"),
        graph_spec("l2_normalize_eps", abc, R"({"X": {"shape": ["A", "B", "C"]}})",
                   "l2_normalize", R"(["X"])", R"("eps": 1e-12)"),
        graph_spec("l2_normalize_middle", abc, R"({"X": {"shape": ["A", "B", "C"]}})",
                   "l2_normalize", R"(["X"])", R"("axis": 1)"),
        graph_spec("l1_normalize_long_strided", R"({"A": 3, "L": 600, "I": 5})",
                   R"({"X": {"shape": ["A", "L", "I"]}})", "l1_normalize", R"(["X"])",
                   R"("axis": 1, "eps": 0.5)"),
        graph_spec("cumsum_last", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "cumsum",
                   R"(["X"])"),
        graph_spec("cumsum_reverse_exclusive_middle", abc,
                   R"({"X": {"shape": ["A", "B", "C"]}})", "cumsum", R"(["X"])",
                   R"("axis": 1, "reverse": true, "exclusive": true)"),
        graph_spec("cumprod_reverse", abc, R"({"X": {"shape": ["A", "B", "C"]}})", "cumprod",
                   R"(["X"])", R"("reverse": true)"),
        graph_spec("cumprod_exclusive_leading", abc, R"({"X": {"shape": ["A", "B", "C"]}})",
                   "cumprod", R"(["X"])", R"("axis": 0, "exclusive": true)"),
        graph_spec("group_norm_affine", R"({"N": 2, "C": 8, "H": 5, "W": 7})",
                   R"({"X": {"shape": ["N", "C", "H", "W"]}, "w": {"shape": ["C"]},
                       "b": {"shape": ["C"]}})",
                   "group_norm", R"(["X", "w", "b"])", R"("num_groups": 4)"),
        graph_spec("group_norm_plain", R"({"N": 3, "C": 6, "L": 11})",
                   R"({"X": {"shape": ["N", "C", "L"]}})", "group_norm", R"(["X"])",
                   R"("num_groups": 2, "eps": 0.01)"),
        graph_spec("conv2d_bias_same", R"({"N": 2, "C": 3, "H": 9, "W": 11, "K": 5})",
                   R"({"X": {"shape": ["N", "C", "H", "W"]}, "w": {"shape": ["K", "C", 3, 3]},
                       "b": {"shape": ["K"]}})",
                   "conv2d", R"(["X", "w", "b"])", R"("padding": 1)"),
        graph_spec("conv2d_grouped_strided_dilated", R"({"N": 2, "C": 4, "H": 10, "W": 13, "K": 6})",
                   R"({"X": {"shape": ["N", "C", "H", "W"]}, "w": {"shape": ["K", 2, 3, 2]}})",
                   "conv2d", R"(["X", "w"])",
                   R"("groups": 2, "stride": [2, 3], "padding": [1, 2], "dilation": [1, 3])"),
        graph_spec("conv1d_depthwise_strided", R"({"N": 2, "C": 4, "L": 17})",
                   R"({"X": {"shape": ["N", "C", "L"]}, "w": {"shape": ["C", 1, 3]},
                       "b": {"shape": ["C"]}})",
                   "conv1d", R"(["X", "w", "b"])", R"("groups": 4, "stride": 2, "padding": 1)"),
        graph_spec("conv3d_grouped_dilated", R"({"N": 1, "C": 4, "D": 5, "H": 6, "W": 7, "K": 6})",
                   R"({"X": {"shape": ["N", "C", "D", "H", "W"]}, "w": {"shape": ["K", 2, 2, 3, 2]}})",
                   "conv3d", R"(["X", "w"])",
                   R"("groups": 2, "stride": [1, 2, 1], "padding": [1, 0, 1], "dilation": [2, 1, 2])"),
        graph_spec("conv_transpose1d_output_padding", R"({"N": 2, "C": 3, "L": 6, "K": 2})",
                   R"({"X": {"shape": ["N", "C", "L"]}, "w": {"shape": ["C", "K", 3]},
                       "b": {"shape": ["K"]}})",
                   "conv_transpose1d", R"(["X", "w", "b"])",
                   R"("stride": 3, "padding": 1, "output_padding": 2)"),
        graph_spec("conv_transpose2d_grouped_dilated", R"({"N": 2, "C": 4, "H": 5, "W": 4})",
                   R"({"X": {"shape": ["N", "C", "H", "W"]}, "w": {"shape": ["C", 3, 3, 2]}})",
                   "conv_transpose2d", R"(["X", "w"])",
                   R"("groups": 2, "stride": [2, 1], "padding": [1, 0], "dilation": [1, 2], "output_padding": [1, 1])"),
        graph_spec("conv_transpose3d_strided", R"({"N": 1, "C": 2, "D": 3, "K": 3})",
                   R"({"X": {"shape": ["N", "C", "D", "D", "D"]}, "w": {"shape": ["C", "K", 3, 3, 3]},
                       "b": {"shape": ["K"]}})",
                   "conv_transpose3d", R"(["X", "w", "b"])", R"("stride": 2, "padding": 1)"),
    };
    // The shape ops (problem/shape_ops.h): views, permutes, strided and negative slices, cat of
    // three pieces on a middle axis, pad on two axes with a value.
    const std::string xabc = R"({"X": {"shape": ["A", "B", "C"]}})";
    for (NamedSpec spec : {
             graph_spec("reshape_product", abc, xabc, "reshape", R"(["X"])", R"("shape": ["A*B", "C"])"),
             graph_spec("expand_new_and_unit_dims", abc, R"({"X": {"shape": ["B", 1]}})", "expand",
                        R"(["X"])", R"("shape": ["A", -1, "C"])"),
             graph_spec("permute_rotate", abc, xabc, "permute", R"(["X"])", R"("dims": [2, 0, 1])"),
             graph_spec("slice_strided_negative", abc, xabc, "slice", R"(["X"])",
                        R"("axis": -1, "start": 3, "end": -2, "step": 4)"),
             graph_spec("cat_middle", abc,
                        R"({"X": {"shape": ["A", "B", "C"]}, "Z": {"shape": ["A", 2, "C"]}})", "cat",
                        R"(["X", "Z", "X"])", R"("axis": 1)"),
             graph_spec("pad_two_axes", abc, xabc, "pad", R"(["X"])",
                        R"("pads": [[0, 0], [2, 1], [1, 3]], "value": -1.5)"),
         })
        s.push_back(spec);
    // Pooling (problem/pool.h): 1-3 spatial axes, padding, dilation, ceil_mode's last window,
    // the avg_pool divisors, adaptive windows that overlap.
    for (NamedSpec spec : {
             graph_spec("max_pool1d_dilated_ceil", R"({"N": 2, "C": 3, "L": 17})",
                        R"({"X": {"shape": ["N", "C", "L"]}})", "max_pool", R"(["X"])",
                        R"("kernel_size": 4, "stride": 3, "padding": 2, "dilation": 2, "ceil_mode": true)"),
             graph_spec("avg_pool2d_ceil_no_pad_count", R"({"N": 2, "C": 3, "H": 9, "W": 11})",
                        R"({"X": {"shape": ["N", "C", "H", "W"]}})", "avg_pool", R"(["X"])",
                        R"("kernel_size": [3, 2], "stride": 2, "padding": 1, "ceil_mode": true, "count_include_pad": false)"),
             graph_spec("avg_pool3d_divisor", R"({"N": 1, "C": 2, "D": 5, "H": 6, "W": 7})",
                        R"({"X": {"shape": ["N", "C", "D", "H", "W"]}})", "avg_pool", R"(["X"])",
                        R"("kernel_size": 3, "stride": [1, 2, 2], "padding": 1, "divisor_override": 5)"),
             graph_spec("adaptive_max_pool2d_overlap", R"({"N": 2, "C": 3, "H": 9, "W": 4})",
                        R"({"X": {"shape": ["N", "C", "H", "W"]}})", "adaptive_max_pool", R"(["X"])",
                        R"("output_size": [4, 6])"),
             graph_spec("adaptive_avg_pool3d_global", R"({"N": 2, "C": 3, "D": 4, "H": 5, "W": 6})",
                        R"({"X": {"shape": ["N", "C", "D", "H", "W"]}})", "adaptive_avg_pool", R"(["X"])",
                        R"("output_size": 1)"),
         })
        s.push_back(spec);
    // Recurrent layers (problem/rnn.h, rnn_specs.h): layers, both directions, batch_first, no
    // bias, each result.
    s.push_back({"lstm_2layer_output", rnn_spec_json("lstm_2layer_output", "lstm", 2, false, false, true, "output")});
    s.push_back({"lstm_bidir_cn_nobias", rnn_spec_json("lstm_bidir_cn_nobias", "lstm", 2, true, true, false, "c_n")});
    s.push_back({"gru_bidir_batch_first_hn", rnn_spec_json("gru_bidir_batch_first_hn", "gru", 2, true, true, true, "h_n")});
    s.push_back({"gru_bidir_output", rnn_spec_json("gru_bidir_output", "gru", 1, true, false, true, "output")});
    // A chain through intermediates (each tensor its own fp64 buffer).
    s.push_back({"chain", op_spec("chain", mnk,
                                  R"({"X": {"shape": ["M", "K"]}, "W": {"shape": ["N", "K"]},
                                      "b": {"shape": ["N"]}})",
                                  R"([{"op": "linear", "inputs": ["X", "W", "b"], "output": "H"},
                                      {"op": "gelu", "inputs": ["H"], "output": "G"},
                                      {"op": "mul", "inputs": ["G", "H"], "output": "Z"},
                                      {"op": "log_softmax", "inputs": ["Z"], "output": "Y"}])")});
    return s;
}

// Every problems/*.json, sorted by file name.
inline std::vector<std::string> suite_problem_files() {
    std::vector<std::string> files;
    for (const auto& e :
         std::filesystem::directory_iterator(std::string(KFORGE_SOURCE_DIR) + "/problems"))
        if (e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

// `problem` with its dims shrunk (each to the largest multiple of its largest power-of-two
// divisor not above a cap, as eval's small_shape) until the CPU interpreter's cost is small.
inline Expected<Problem> interpretable_shape(const Problem& problem) {
    std::string last = "no cap fits";
    for (int64_t cap : {64, 32, 16, 8, 4}) {
        std::map<std::string, int64_t> dims;
        for (const auto& [name, value] : problem.dims) {
            if (problem.derived_dims.count(name)) continue;  // follows the dims it derives from
            int64_t v = value;
            if (v > cap) {
                int64_t unit = std::min<int64_t>(v & -v, cap);
                v = std::max(unit, cap / unit * unit);
            }
            dims[name] = v;
        }
        auto p = rebind_dims(problem, dims);
        if (!p) {
            last = p.error().to_string();
            continue;
        }
        auto w = count_work(*p);
        int64_t elements = 0;
        for (const Tensor& t : p->tensors) elements += t.numel();
        if (w.ok() && w->flops() <= 3e8 && elements <= (int64_t{4} << 20)) return p;
    }
    return make_error(problem.name, last);
}

}  // namespace kforge::eval::testing
