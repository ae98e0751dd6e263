// Generators of inputs that reuse every value twice (issue 31, item 1): a problem spec whose ops
// each read the previous value twice (T0 = add(X, X), T1 = add(T0, T0), ...) and a program whose
// chain binds and reuses the value (`let a0; add a0; let a1; add a1; ...`). Written out as trees
// they double in size with every level, so a checker that copies subtrees needs 2^n time and
// memory; the checker's tests, the problem's tests and the eval CLI's tests share them.
#pragma once

#include <algorithm>
#include <string>

namespace kforge::test {

// A spec "doubling" over X[M,N] (f32 unless `dtype`) with `levels` ops `op(prev, prev)` (add,
// mul, div, maximum, ...); the last writes Y, the output.
inline std::string doubling_spec(int levels, const std::string& op = "add",
                                 const std::string& policy = "fp32_strict",
                                 const std::string& dtype = "f32") {
    std::string graph;
    std::string prev = "X";
    for (int i = 0; i < levels; ++i) {
        const std::string out = i + 1 == levels ? "Y" : "T" + std::to_string(i);
        graph += std::string(i ? ", " : "") + R"({"op": ")" + op + R"(", "inputs": [")" + prev +
                 R"(", ")" + prev + R"("], "output": ")" + out + R"("})";
        prev = out;
    }
    return R"({"name": "doubling", "dims": {"M": 64, "N": 64},
    "inputs": {"X": {"shape": ["M", "N"], "dtype": ")" + dtype + R"("}},
    "graph": [)" + graph + R"(], "outputs": ["Y"], "precision": {"policy": ")" + policy + R"("}})";
}

// A program for "doubling": `pairs` pairs `let aI; <stmt> aI;` (stmt: add, mul, div, max, ...)
// in map kernels of at most `per_kernel` pairs each, chained through intermediates S0, S1, ...;
// the last kernel stores Y. One kernel per line, the first on line 2.
inline std::string doubling_program(int pairs, int per_kernel = 100,
                                    const std::string& stmt = "add") {
    std::string text = "program p for \"doubling\"\n";
    std::string src = "X";
    int done = 0;
    for (int k = 0; done < pairs || k == 0; ++k) {
        const int n = std::min(per_kernel, pairs - done);
        const std::string dst = done + n == pairs ? "Y" : "S" + std::to_string(k);
        text += "kernel k" + std::to_string(k) + " = map(" + src + "[M,N]) {";
        for (int i = done; i < done + n; ++i)
            text += " let a" + std::to_string(i) + "; " + stmt + " a" + std::to_string(i) + ";";
        text += " store " + dst + "[M,N] }\n";
        done += n;
        src = dst;
    }
    return text;
}

}  // namespace kforge::test
