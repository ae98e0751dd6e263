// The index and mask ops' specs for the GPU reference's consistency tests (emulated on the CPU
// and on a real GPU): argmax / argmin over a leading dim and the last dim with keepdim,
// masked_fill with -inf under a broadcast mask, where with a broadcast condition, tril / triu
// with diagonal offsets on a batched matrix, masked_fill's structured masks, cross_entropy with i64 targets (drawn in [0, C) by
// problem/inputs.h's generate_input) and x times a bool mask.
#pragma once

#include <vector>

#include "reference_specs.h"

namespace kforge::eval::testing {

inline std::vector<NamedSpec> index_op_specs() {
    const std::string abc = R"({"A": 3, "B": 70, "C": 37})";
    const std::string x3 = R"({"X": {"shape": ["A", "B", "C"]}})";
    return {
        graph_spec("argmax_dim1", abc, x3, "argmax", R"(["X"])", R"("axis": 1)"),
        graph_spec("argmin_last_keepdim", abc, x3, "argmin", R"(["X"])",
                   R"("axis": -1, "keepdim": true)"),
        graph_spec("masked_fill_bcast", abc,
                   R"({"X": {"shape": ["A", "B", "C"]}, "m": {"shape": ["B", 1], "dtype": "bool"}})",
                   "masked_fill", R"(["X", "m"])", R"("value": "-inf")"),
        graph_spec("where_bcast", abc,
                   R"({"c": {"shape": ["A", 1, "C"], "dtype": "bool"},
                       "X": {"shape": ["A", "B", "C"]}, "Z": {"shape": ["C"]}})",
                   "where", R"(["c", "X", "Z"])"),
        graph_spec("tril_batched", abc, x3, "tril", R"(["X"])", R"("diagonal": -2)"),
        graph_spec("triu_batched", abc, x3, "triu", R"(["X"])", R"("diagonal": 3)"),
        // masked_fill's structured masks: causal (triu 1, -inf) and tril -2 with a number
        graph_spec("masked_fill_causal", abc, x3, "masked_fill", R"(["X"])",
                   R"("mask": "triu", "diagonal": 1, "value": "-inf")"),
        graph_spec("masked_fill_tril", abc, x3, "masked_fill", R"(["X"])",
                   R"("mask": "tril", "diagonal": -2, "value": 2.5)"),
        graph_spec("cross_entropy", R"({"N": 300, "C": 37})",
                   R"({"X": {"shape": ["N", "C"]}, "t": {"shape": ["N"], "dtype": "i64"}})",
                   "cross_entropy", R"(["X", "t"])"),
        graph_spec("mul_bool_mask", abc,
                   R"({"X": {"shape": ["A", "B", "C"]}, "m": {"shape": ["A", "B", "C"], "dtype": "bool"}})",
                   "mul", R"(["X", "m"])"),
    };
}

}  // namespace kforge::eval::testing
