// Integration, no GPU: the numbers of copy kernels (kernels/copy.cuh, codegen/lower_copy.cpp)
// against the fp64 interpreter. Each problem's seed program (map and copy kernels, f32) is
// lowered; the real generated source with kernels/copy.cuh, kernels/map.cuh and
// kernels/chain_ops.cuh is compiled for the host (kernels/common.cuh's helpers replaced by
// scalar host code) and every launch of the plan run in order for every block and thread, then
// each output compared with interpret(): a cat of three inputs along channels after a relu, a
// permute and a strided slice; a cat along the last axis whose vectors cross the inputs'
// boundary; pad and a merging reshape; a splitting reshape and a negative-start slice.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "planner/plan.h"
#include "problem/interpret.h"
#include "problem/spec.h"
#include "sol/device.h"
#include "tests/codegen/host_run_shim.h"

namespace kforge::codegen {
namespace {

namespace fs = std::filesystem;

using hostrun::strip_includes;

// `text`: the program to run; empty: the problem's seed.
void expect_program_matches(const std::string& json, const std::string& text = "") {
    auto problem = parse_problem(json, "copy.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    const dsl::DeviceLimits limits = dsl::device_limits(find_device("h200").value());
    auto prog = text.empty() ? planner::seed_program(*problem, limits) : dsl::parse_program(text, "p.kf");
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    if (!text.empty()) {
        const dsl::CheckResult checked = dsl::check_program(*prog, *problem, limits);
        ASSERT_TRUE(checked.ok()) << checked.errors.front().to_string();
    }
    bool has_copy = false;
    for (const auto& k : prog->kernels) has_copy = has_copy || k.kind == dsl::KernelKind::kCopy;
    ASSERT_TRUE(has_copy) << "the seed has no copy kernel";
    auto low = lower_program(*prog, *problem, {});
    ASSERT_TRUE(low.ok()) << low.error().to_string();

    // every tensor a launch names, with its element count (problem tensors and buffers)
    std::map<std::string, int64_t> sizes;
    for (const Tensor& t : problem->tensors) sizes[t.name] = t.numel();
    for (const BufferDecl& b : low->plan.buffers) {
        int64_t n = 1;
        for (int64_t e : b.shape) n *= e;
        sizes[b.name] = n;
    }
    std::map<std::string, std::vector<double>> inputs;
    std::string main_src = "int main(int, char** argv) {\n    std::map<std::string, std::vector<float>> t;\n";
    for (const auto& [name, n] : sizes)
        main_src += "    t[\"" + name + "\"].assign(" + std::to_string(n) + ", -12345.f);\n";
    const fs::path dir = fs::temp_directory_path() / ("kforge_copy_host_" + std::to_string(getpid()));
    fs::create_directories(dir);
    for (const Tensor* x : problem->graph_inputs()) {
        std::vector<float> xs;
        std::vector<double>& xd = inputs[x->name];
        for (int64_t i = 0; i < x->numel(); ++i) {
            xs.push_back(float(1.5 * std::sin(0.37 * double(i) + double(x->name.size())) + 0.01 * double(i)));
            xd.push_back(double(xs.back()));
        }
        std::ofstream(dir / (x->name + ".bin"), std::ios::binary)
            .write(reinterpret_cast<const char*>(xs.data()), std::streamsize(xs.size() * 4));
        main_src += "    { FILE* f = std::fopen((std::string(argv[1]) + \"/" + x->name +
                    ".bin\").c_str(), \"rb\");\n"
                    "      if (!f || std::fread(t[\"" + x->name + "\"].data(), 4, " +
                    std::to_string(x->numel()) + ", f) != " + std::to_string(x->numel()) +
                    ") return 2; std::fclose(f); }\n";
    }
    for (const KernelLaunch& l : low->plan.kernels) {
        std::string args;
        for (const KernelParam& p : l.params) {
            args += args.empty() ? "" : ", ";
            args += p.kind == ParamKind::kInt64 ? std::to_string(p.int_value) + "LL"
                                                : "t[\"" + p.name + "\"].data()";
        }
        main_src += hostrun::grid_loop(l.grid[0], l.block[0], l.symbol, args);
    }
    for (const std::string& out : problem->outputs)
        main_src += "    { FILE* o = std::fopen((std::string(argv[1]) + \"/" + out +
                    ".out\").c_str(), \"wb\"); if (!o) return 3;\n"
                    "      std::fwrite(t[\"" + out + "\"].data(), 4, t[\"" + out +
                    "\"].size(), o); std::fclose(o); }\n";
    main_src += "    return 0;\n}\n";
    const fs::path kernels = fs::path(KFORGE_SOURCE_DIR) / "kernels";
    std::ofstream(dir / "run.cpp")
        << hostrun::kHostShim << hostrun::kGridShim
        << strip_includes(hostrun::read_text(kernels / "chain_ops.cuh"))
        << strip_includes(hostrun::read_text(kernels / "map.cuh"))
        << strip_includes(hostrun::read_text(kernels / "copy.cuh"))
        << strip_includes(low->cuda_source) << main_src;
    const hostrun::HostBuild build = hostrun::build_host_run(dir);
    ASSERT_EQ(build.status, 0) << build.log << "\n" << hostrun::read_text(dir / "run.cpp");
    const std::string run = (dir / "run").string() + " " + dir.string();
    ASSERT_EQ(std::system(run.c_str()), 0) << hostrun::read_text(dir / "run.cpp");

    auto ref = interpret(*problem, inputs);
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();
    for (const std::string& out : problem->outputs) {
        std::vector<float> got(static_cast<size_t>(problem->find_tensor(out)->numel()));
        std::ifstream(dir / (out + ".out"), std::ios::binary)
            .read(reinterpret_cast<char*>(got.data()), std::streamsize(got.size() * 4));
        const std::vector<double>& want = ref->at(out);
        ASSERT_EQ(want.size(), got.size());
        int bad = 0;
        for (size_t i = 0; i < got.size(); ++i) {
            if (std::abs(double(got[i]) - want[i]) > 1e-5 * (1.0 + std::abs(want[i])) && bad++ < 5)
                ADD_FAILURE() << out << "[" << i << "]: kernel " << got[i] << ", interpreter "
                              << want[i];
        }
        EXPECT_EQ(bad, 0) << out;
    }
    fs::remove_all(dir);
}

TEST(CopyHostRun, CatPermuteSliceMatchTheInterpreter) {
    expect_program_matches(R"({"name": "cat3", "dims": {"N": 2, "C1": 3, "C2": 5, "C3": 4, "H": 6, "W": 8},
      "inputs": {"a": {"shape": ["N","C1","H","W"], "dtype": "f32"},
                 "b": {"shape": ["N","C2","H","W"], "dtype": "f32"},
                 "c": {"shape": ["N","C3","H","W"], "dtype": "f32"}},
      "graph": [{"op": "relu", "inputs": ["b"], "output": "rb"},
                {"op": "cat", "inputs": ["a", "rb", "c"], "output": "y0", "axis": 1},
                {"op": "permute", "inputs": ["y0"], "output": "p", "dims": [0, 2, 3, 1]},
                {"op": "slice", "inputs": ["p"], "output": "s", "axis": 1, "start": 1, "end": 5, "step": 2},
                {"op": "tanh", "inputs": ["s"], "output": "y"}],
      "outputs": ["y", "y0"], "precision": {"policy": "fp32_strict"}})");
}

TEST(CopyHostRun, CatAlongTheLastAxisCrossesVectors) {
    expect_program_matches(R"({"name": "catlast", "dims": {"B": 3, "L1": 5, "L2": 7},
      "inputs": {"a": {"shape": ["B","L1"], "dtype": "f32"}, "b": {"shape": ["B","L2"], "dtype": "f32"}},
      "graph": [{"op": "cat", "inputs": ["a", "b"], "output": "y", "axis": 1}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

TEST(CopyHostRun, PadAndMergingReshapeMatchTheInterpreter) {
    expect_program_matches(R"({"name": "padexp", "dims": {"B": 2, "C": 3, "L": 5},
      "inputs": {"x": {"shape": ["B","C","L"], "dtype": "f32"}},
      "graph": [{"op": "pad", "inputs": ["x"], "output": "p", "pads": [[0, 0], [1, 2], [3, 0]], "value": 0.5},
                {"op": "reshape", "inputs": ["x"], "output": "f", "shape": ["B", "C*L"]},
                {"op": "sigmoid", "inputs": ["f"], "output": "g"}],
      "outputs": ["p", "g"], "precision": {"policy": "fp32_strict"}})");
}

TEST(CopyHostRun, SplittingReshapeAndNegativeSliceMatchTheInterpreter) {
    expect_program_matches(R"({"name": "split", "dims": {"B": 2, "G": 3, "D": 4, "L": 10},
      "inputs": {"x": {"shape": ["B", 12], "dtype": "f32"}, "z": {"shape": ["B","L"], "dtype": "f32"}},
      "graph": [{"op": "reshape", "inputs": ["x"], "output": "r", "shape": ["B", "G", "D"]},
                {"op": "permute", "inputs": ["r"], "output": "t", "dims": [0, 2, 1]},
                {"op": "reshape", "inputs": ["t"], "output": "y", "shape": ["B", 12]},
                {"op": "slice", "inputs": ["z"], "output": "s", "axis": 1, "start": -8, "step": 3}],
      "outputs": ["y", "s"], "precision": {"policy": "fp32_strict"}})");
}

TEST(CopyHostRun, SlicesReadThroughByTheirCopies) {
    // attention's head split: q, k, v sliced out of one projection, viewed as heads and
    // transposed - each permute reads qkv at the slice's offset through the view; a cat of two
    // stepped slices and a pad of a slice read their input the same way (no slice kernels)
    expect_program_matches(R"({"name": "heads", "dims": {"B": 2, "T": 5, "H": 3, "D": 4, "E": 36, "W": 9},
      "inputs": {"qkv": {"shape": ["B","T","E"], "dtype": "f32"}, "x": {"shape": ["B","W"], "dtype": "f32"}},
      "graph": [{"op": "slice", "inputs": ["qkv"], "output": "q", "axis": 2, "start": 0, "end": 12},
                {"op": "slice", "inputs": ["qkv"], "output": "k", "axis": 2, "start": 12, "end": 24},
                {"op": "slice", "inputs": ["qkv"], "output": "v", "axis": 2, "start": 24},
                {"op": "reshape", "inputs": ["q"], "output": "qh", "shape": ["B", "T", "H", "D"]},
                {"op": "reshape", "inputs": ["k"], "output": "kh", "shape": ["B", "T", "H", "D"]},
                {"op": "reshape", "inputs": ["v"], "output": "vh", "shape": ["B", "T", "H", "D"]},
                {"op": "permute", "inputs": ["qh"], "output": "qt", "dims": [0, 2, 1, 3]},
                {"op": "permute", "inputs": ["kh"], "output": "kt", "dims": [0, 2, 3, 1]},
                {"op": "permute", "inputs": ["vh"], "output": "vt", "dims": [2, 0, 1, 3]},
                {"op": "slice", "inputs": ["x"], "output": "xe", "axis": 1, "start": 0, "step": 2},
                {"op": "slice", "inputs": ["x"], "output": "xo", "axis": 1, "start": 1, "step": 2},
                {"op": "cat", "inputs": ["xo", "xe"], "output": "c", "axis": 1},
                {"op": "pad", "inputs": ["xo"], "output": "p", "pads": [[1, 0], [2, 1]], "value": -1}],
      "outputs": ["qt", "kt", "vt", "c", "p"], "precision": {"policy": "fp32_strict"}})");
}

TEST(CopyHostRun, ClassTokenExpandReadThroughByTheCat) {
    // a ViT's class token: cls [1, 1, D] broadcast to [B, 1, D] and put before the patches; the
    // cat reads cls through the expand (stride 0 over B), no kernel of its own
    expect_program_matches(R"({"name": "cls", "dims": {"B": 3, "L": 5, "D": 8},
      "inputs": {"cls": {"shape": [1, 1, "D"], "dtype": "f32"}, "x": {"shape": ["B","L","D"], "dtype": "f32"}},
      "graph": [{"op": "expand", "inputs": ["cls"], "output": "e", "shape": ["B", -1, -1]},
                {"op": "cat", "inputs": ["e", "x"], "output": "y", "axis": 1}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

TEST(CopyHostRun, PermutesByDimNamesMatchTheInterpreter) {
    // the planner's transposes around a row op over a middle dim: permutes that compute no
    // problem op, read and stored by dim names
    expect_program_matches(R"({"name": "tr", "dims": {"N": 2, "C": 3, "D": 4, "L": 8},
      "inputs": {"x": {"shape": ["N","C","D","L"], "dtype": "f32"}},
      "graph": [{"op": "relu", "inputs": ["x"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})",
                           R"(program tr for "tr"
kernel k0 = copy permute(x[N,C,D,L]) { store xt[N,L,D,C] }
kernel k1 = copy permute(xt[N,L,D,C]) vec 2 { relu; store y[N,C,D,L] }
)");
}

TEST(CopyHostRun, AnExpandOfTheProgramsOwnBroadcastsByDimNames) {
    // a binary op whose output spans dims neither operand has: the planner's copy expand of one
    // operand (stride 0 over F), the op and what follows in its chain
    expect_program_matches(R"({"name": "mutual", "dims": {"B": 3, "F": 5, "K": 8},
      "inputs": {"s": {"shape": ["B", 1, "K"], "dtype": "f32"}, "c": {"shape": [1, "F", "K"], "dtype": "f32"},
                 "t": {"shape": ["B", "F", "K"], "dtype": "f32"}},
      "graph": [{"op": "mul", "inputs": ["s", "c"], "output": "m"},
                {"op": "sub", "inputs": ["t", "m"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

TEST(CopyHostRun, ARenameIsReadUnderItsNewNames) {
    // pairwise differences x[..., :, None] - x[..., None, :] and an outer product of one input
    // with itself: the second axis renamed (L_1, T_1) by a reshape that no kernel computes -
    // the kernels read x's buffer under the new names (planner/plan_view.cpp fold_rename)
    expect_program_matches(R"({"name": "pairdiff", "dims": {"B": 3, "L": 12, "L_1": 12},
      "inputs": {"x": {"shape": ["B","L"], "dtype": "f32"}},
      "graph": [{"op": "reshape", "inputs": ["x"], "output": "xi", "shape": ["B", "L", 1]},
                {"op": "reshape", "inputs": ["x"], "output": "xj", "shape": ["B", 1, "L_1"]},
                {"op": "sub", "inputs": ["xi", "xj"], "output": "d"},
                {"op": "exp", "inputs": ["d"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
    expect_program_matches(R"({"name": "outer", "dims": {"B": 2, "T": 9, "T_1": 9},
      "inputs": {"x": {"shape": ["B","T"], "dtype": "f32"}, "w": {"shape": ["B","T","T_1"], "dtype": "f32"}},
      "graph": [{"op": "reshape", "inputs": ["x"], "output": "xr", "shape": ["B", "T_1"]},
                {"op": "reshape", "inputs": ["x"], "output": "xi", "shape": ["B", "T", 1]},
                {"op": "reshape", "inputs": ["xr"], "output": "xj", "shape": ["B", 1, "T_1"]},
                {"op": "mul", "inputs": ["xi", "xj"], "output": "m"},
                {"op": "add", "inputs": ["m", "w"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

TEST(CopyHostRun, SlicesOfOneTensorStoredReshapedKeepTheirOwnRanges) {
    // a fused projection split three ways, each part reshaped into heads: the planner folds each
    // reshape into its slice's store, and each copy kernel must still gather its own range
    expect_program_matches(R"({"name": "qkv", "dims": {"B": 2, "L": 3, "D": 8, "T": 24},
      "inputs": {"x": {"shape": ["B", "L", "T"], "dtype": "f32"}},
      "graph": [{"op": "slice", "inputs": ["x"], "output": "q", "axis": 2, "start": 0, "end": 8, "out_names": ["", "", "D"]},
                {"op": "slice", "inputs": ["x"], "output": "k", "axis": 2, "start": 8, "end": 16, "out_names": ["", "", "D"]},
                {"op": "slice", "inputs": ["x"], "output": "v", "axis": 2, "start": 16, "end": 24, "out_names": ["", "", "D"]},
                {"op": "reshape", "inputs": ["q"], "output": "qh", "shape": ["B", "L", 2, 4]},
                {"op": "reshape", "inputs": ["k"], "output": "kh", "shape": ["B", "L", 2, 4]},
                {"op": "reshape", "inputs": ["v"], "output": "vh", "shape": ["B", "L", 2, 4]}],
      "outputs": ["qh", "kh", "vh"], "precision": {"policy": "fp32_strict"}})");
}

TEST(CopyHostRun, APermuteStoredThroughTwoReshapesMatchesTheInterpreter) {
    // a window merge (Swin): the permute's value reshaped twice before a residual add; the
    // planner folds both reshapes into the copy's store, the checker reads reshape(reshape(v))
    // as one reshape of v
    expect_program_matches(R"({"name": "win", "dims": {"B": 2, "H": 4, "W": 6, "D": 8, "S": 24},
      "inputs": {"x": {"shape": ["B", "H", "W", "D"], "dtype": "f32"}, "r": {"shape": ["B", "S", "D"], "dtype": "f32"}},
      "graph": [{"op": "permute", "inputs": ["x"], "output": "p", "dims": [0, 2, 1, 3]},
                {"op": "reshape", "inputs": ["p"], "output": "v1", "shape": ["B", 12, 2, "D"]},
                {"op": "reshape", "inputs": ["v1"], "output": "v2", "shape": ["B", "S", "D"]},
                {"op": "add", "inputs": ["r", "v2"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

}  // namespace
}  // namespace kforge::codegen
