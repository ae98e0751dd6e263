// Small spec texts for the problem stage's tests.
#pragma once

#include <string>

#include "problem/spec.h"

namespace kforge::test {

inline std::string make_spec(const std::string& dims, const std::string& inputs,
                             const std::string& graph, const std::string& outputs = R"(["Y"])",
                             const std::string& precision = R"({"policy": "fp32_strict"})") {
    return R"({"name": "t", "dims": )" + dims + R"(, "inputs": )" + inputs + R"(, "graph": )" +
           graph + R"(, "outputs": )" + outputs + R"(, "precision": )" + precision + "}";
}

// One op "Y = op(inputs...)" with attributes `attrs` (a JSON fragment such as `"axis": 0`).
inline Expected<Problem> one_op(const std::string& dims, const std::string& inputs,
                                const std::string& op, const std::string& operands,
                                const std::string& attrs = "") {
    std::string graph = R"([{"op": ")" + op + R"(", "inputs": )" + operands +
                        R"(, "output": "Y")" + (attrs.empty() ? "" : ", " + attrs) + "}]";
    return parse_problem(make_spec(dims, inputs, graph), "test");
}

}  // namespace kforge::test
