// Integration, no GPU: the numbers of a row reduction with an element-wise prologue against the
// fp64 interpreter. The planner's one-kernel seed (a matvec's `rowwise sum(A[M,K]) pre { mul B }`,
// an mse-style `rowwise mean(P) pre { sub T; square; mul w; div s }`) is lowered; its prologue
// functor (the real generated text and kernels/chain_ops.cuh, the memory helpers of
// kernels/common.cuh replaced by scalar host loops) is compiled for the host and run the way
// kernels/reduce_row.cuh runs it: load_operands + apply on each vector of the row at its linear
// index, then an f32 sum (divided by the row length for mean). Each row's result must match
// interpret() to f32 accuracy.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/chain.h"
#include "codegen/lower.h"
#include "problem/interpret.h"
#include "problem/spec.h"
#include "planner/plan.h"
#include "sol/device.h"
#include "tests/codegen/host_run_shim.h"

namespace kforge::codegen {
namespace {

namespace fs = std::filesystem;

using hostrun::kHostShim;
using hostrun::read_text;

Problem spec(const std::string& json) {
    auto p = parse_problem(json, "spec");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

double input_value(size_t tensor, int64_t i) {
    return 2.0 * std::sin(0.37 * double(i) + 1.3 * double(tensor)) + 0.25 * double(tensor);
}

// Seeds `problem` (one rowwise kernel with a prologue), runs it on the host and compares the
// row results with the interpreter's `out`.
void expect_seed_matches_interpreter(const Problem& problem, const std::string& out, bool mean) {
    auto prog = planner::seed_program(problem, dsl::device_limits(find_device("h200").value()));
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 1u);
    const dsl::Kernel& k = prog->kernels[0];
    ASSERT_EQ(k.kind, dsl::KernelKind::kRowwise);
    ASSERT_FALSE(k.pre.empty());
    auto table = build_tensor_table(*prog, problem);
    ASSERT_TRUE(table.ok());
    LowerContext ctx;
    ctx.problem = &problem;
    ctx.tensors = *table;
    const TensorInfo& x = table->at(k.args[0].name);
    ChainSpace space{k.args[0].dims, x.shape};
    auto pre = emit_chain("Pre", k.pre, space, std::nullopt, ctx, false);
    ASSERT_TRUE(pre.ok()) << pre.error().to_string();
    const int64_t n = x.shape.back(), rows = space.numel() / n;

    // Inputs: every graph input, by name; fp64 copies for the interpreter.
    TensorValues inputs;
    std::map<std::string, std::vector<float>> host;
    size_t t = 0;
    for (const Tensor* in : problem.graph_inputs()) {
        std::vector<double>& d = inputs[in->name];
        std::vector<float>& f = host[in->name];
        for (int64_t i = 0; i < in->numel(); ++i) {
            f.push_back(float(input_value(t, i)));
            d.push_back(double(f.back()));
        }
        ++t;
    }
    auto ref = interpret(problem, inputs);
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();

    const fs::path dir = fs::temp_directory_path() /
                         ("kforge_row_prologue_host_" + problem.name + "_" + std::to_string(getpid()));
    fs::create_directories(dir);
    const std::string reads = hostrun::write_f32_inputs(dir, host, 1);
    std::string init;
    const int arg = 1 + int(host.size());
    for (const ChainParam& p : pre->params) init += (init.empty() ? "" : ", ") + p.name + ".data()";
    std::string ops = read_text(fs::path(KFORGE_SOURCE_DIR) / "kernels" / "chain_ops.cuh");
    ops.replace(ops.find("#include \"kernels/common.cuh\""), 29, "");
    ops.replace(ops.find("#pragma once"), 12, "");
    const std::string main_src =
        "int main(int, char** argv) {\n" + reads +
        "    const Pre pre{" + init + "};\n"
        "    constexpr int V = 4;\n"
        "    const int64_t rows = " + std::to_string(rows) + ", n = " + std::to_string(n) + ";\n"
        "    std::vector<float> y(rows);\n"
        "    for (int64_t r = 0; r < rows; ++r) {\n"
        "        float acc = 0.f;\n"
        "        for (int64_t c = 0; c < n; c += V) {\n"
        "            float s[Pre::kSlots][V];\n"
        "            for (int j = 0; j < V; ++j) s[0][j] = " + k.args[0].name + "[r * n + c + j];\n"
        "            pre.load_operands<V>(s, r * n + c);\n"
        "            pre.apply<V>(s, r * n + c);\n"
        "            for (int j = 0; j < V; ++j) acc += s[0][j];\n"
        "        }\n"
        "        y[r] = " + (mean ? "acc / float(n)" : "acc") + ";\n"
        "    }\n"
        "    FILE* o = std::fopen(argv[" + std::to_string(arg) + "], \"wb\");\n"
        "    return o && std::fwrite(y.data(), 4, y.size(), o) == y.size() && !std::fclose(o) ? 0 : 3;\n"
        "}\n";
    std::ofstream(dir / "run.cpp") << kHostShim << ops << pre->definition << main_src;
    const hostrun::HostBuild build = hostrun::build_host_run(dir);
    ASSERT_EQ(build.status, 0) << build.log << "\n" << read_text(dir / "run.cpp");
    std::string run = (dir / "run").string();
    for (const auto& [name, values] : host) run += " " + (dir / (name + ".bin")).string();
    run += " " + (dir / "y.bin").string();
    ASSERT_EQ(std::system(run.c_str()), 0) << read_text(dir / "run.cpp");
    std::vector<float> y(static_cast<size_t>(rows));
    std::ifstream(dir / "y.bin", std::ios::binary)
        .read(reinterpret_cast<char*>(y.data()), std::streamsize(y.size() * sizeof(float)));
    fs::remove_all(dir);

    const std::vector<double>& want = ref->at(out);
    ASSERT_EQ(want.size(), y.size());
    int bad = 0;
    for (size_t r = 0; r < y.size(); ++r) {
        const double tol = 1e-5 * (1.0 + std::abs(want[r])) * std::sqrt(double(n));
        if (std::abs(double(y[r]) - want[r]) > tol && bad++ < 5) {
            ADD_FAILURE() << problem.name << " row " << r << ": program " << y[r]
                          << ", interpreter " << want[r] << "\n" << pre->definition;
        }
    }
    EXPECT_EQ(bad, 0);
}

TEST(RowPrologueHostRun, SeededMatvecMatchesTheInterpreter) {
    expect_seed_matches_interpreter(spec(R"({"name": "matvec", "dims": {"M": 24, "K": 512, "N": 1},
        "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"}, "B": {"shape": ["K", "N"], "dtype": "f32"}},
        "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C"}],
        "outputs": ["C"], "precision": {"policy": "fp32_strict"}})"), "C", false);
}

TEST(RowPrologueHostRun, SeededMseRowsWithBroadcastsMatchTheInterpreter) {
    expect_seed_matches_interpreter(spec(R"({"name": "mse_rows", "dims": {"R": 16, "C": 256},
        "inputs": {"P": {"shape": ["R", "C"], "dtype": "f32"}, "T": {"shape": ["R", "C"], "dtype": "f32"},
                   "w": {"shape": ["C"], "dtype": "f32"}, "s": {"shape": ["R", 1], "dtype": "f32"}},
        "graph": [{"op": "sub", "inputs": ["P", "T"], "output": "D"},
                  {"op": "square", "inputs": ["D"], "output": "S"},
                  {"op": "mul", "inputs": ["S", "w"], "output": "Q"},
                  {"op": "div", "inputs": ["Q", "s"], "output": "U"},
                  {"op": "mean", "inputs": ["U"], "output": "Y", "axis": -1}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})"), "Y", true);
}

// The smooth L1 loss's branches as one region with named values, folded into the row mean.
TEST(RowPrologueHostRun, SeededHuberRowsWithNamedValuesMatchTheInterpreter) {
    expect_seed_matches_interpreter(spec(R"({"name": "huber_rows", "dims": {"R": 16, "C": 256},
        "inputs": {"P": {"shape": ["R", "C"], "dtype": "f32"}, "T": {"shape": ["R", "C"], "dtype": "f32"}},
        "graph": [{"op": "sub", "inputs": ["P", "T"], "output": "D"},
                  {"op": "abs", "inputs": ["D"], "output": "A"},
                  {"op": "min_scalar", "inputs": ["A"], "output": "M", "value": 1.0},
                  {"op": "square", "inputs": ["M"], "output": "Q"},
                  {"op": "scale", "inputs": ["Q"], "output": "Q2", "value": 0.5},
                  {"op": "sub", "inputs": ["A", "M"], "output": "L"},
                  {"op": "add", "inputs": ["Q2", "L"], "output": "H"},
                  {"op": "mean", "inputs": ["H"], "output": "Y", "axis": 1}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})"), "Y", true);
}

}  // namespace
}  // namespace kforge::codegen
