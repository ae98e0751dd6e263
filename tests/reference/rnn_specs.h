// Small lstm / gru specs (problem/rnn.h) for the reference and interpreter tests: every operand
// named as PyTorch's state_dict names it (the gate rows as the product dim "4*H" / "3*H"), the
// output Y.
#pragma once

#include <string>

#include "problem/rnn.h"

namespace kforge::eval::testing {

// A spec "Y = kind(x, h0, [c0], weights...)" with dims T, B, I, H and the given attributes.
inline std::string rnn_spec_json(const std::string& name, const std::string& kind, int layers,
                                 bool bidirectional, bool batch_first, bool bias,
                                 const std::string& result, int T = 5, int B = 3, int I = 4,
                                 int H = 6) {
    const bool lstm = kind == "lstm";
    const int D = bidirectional ? 2 : 1, G = lstm ? 4 : 3;
    std::string inputs = std::string(R"({"x": {"shape": )") +
                         (batch_first ? R"(["B", "T", "I"])" : R"(["T", "B", "I"])") +
                         R"(, "dtype": "f32"}, "h0": {"shape": [)" + std::to_string(layers * D) +
                         R"(, "B", "H"], "dtype": "f32"})";
    std::string operands = R"(["x", "h0")";
    if (lstm) {
        inputs += R"(, "c0": {"shape": [)" + std::to_string(layers * D) +
                  R"(, "B", "H"], "dtype": "f32"})";
        operands += R"(, "c0")";
    }
    for (int l = 0; l < layers; ++l) {
        for (int d = 0; d < D; ++d) {
            for (int w = 0; w < (bias ? 4 : 2); ++w) {
                const std::string n = rnn_weight_name(l, d, w);
                // the gate rows as the product "4*H" (a derived dim: re-binding H resizes them)
                const std::string gates = "\"" + std::to_string(G) + "*H\"";
                const std::string in_dim = l == 0 ? "\"I\"" : D == 1 ? "\"H\"" : "\"2*H\"";
                const std::string shape = w == 0   ? "[" + gates + ", " + in_dim + "]"
                                          : w == 1 ? "[" + gates + ", \"H\"]"
                                                   : "[" + gates + "]";
                inputs += ", \"" + n + "\": {\"shape\": " + shape + ", \"dtype\": \"f32\", \"param\": true}";
                operands += ", \"" + n + "\"";
            }
        }
    }
    inputs += "}";
    operands += "]";
    std::string attrs = "\"num_layers\": " + std::to_string(layers);
    if (bidirectional) attrs += ", \"bidirectional\": true";
    if (batch_first) attrs += ", \"batch_first\": true";
    if (!bias) attrs += ", \"bias\": false";
    if (result != "output") attrs += ", \"result\": \"" + result + "\"";
    return R"({"name": ")" + name + R"(", "dims": {"T": )" + std::to_string(T) + R"(, "B": )" +
           std::to_string(B) + R"(, "I": )" + std::to_string(I) + R"(, "H": )" +
           std::to_string(H) + R"(}, "inputs": )" + inputs + R"(, "graph": [{"op": ")" + kind +
           R"(", "inputs": )" + operands + R"(, "output": "Y", )" + attrs +
           R"(}], "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";
}

}  // namespace kforge::eval::testing
