// Integration, no GPU: programs whose intermediates share one arena (codegen/memory_plan.h) still
// compute what the fp64 interpreter does. The real generated source of each program (map and
// copy kernels, f32) is compiled for the host with kernels/map.cuh, copy.cuh and chain_ops.cuh
// (kernels/common.cuh's helpers replaced by scalar host code) and run launch by launch with every
// plan buffer at its arena offset, poisoned with NaN just before the launch that first writes it,
// as the CUDA device's correctness run does. A plan that aliases a kernel's input and output is
// caught the same way (its outputs come out NaN).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "codegen/lower.h"
#include "codegen/memory_plan.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "planner/plan.h"
#include "problem/interpret.h"
#include "problem/spec.h"
#include "sol/device.h"
#include "tests/codegen/host_run_shim.h"
#include "tests/codegen/memory_plan_fixtures.h"

namespace kforge::codegen {
namespace {

namespace fs = std::filesystem;

struct ArenaRun {
    Problem problem;
    LaunchPlan plan;
    std::map<std::string, std::vector<double>> inputs;
    std::map<std::string, std::vector<float>> outputs;
};

// Lowers `text` (empty: the planner's seed) for `json`, lets `edit` change the plan's offsets,
// then runs the generated kernels on the host over one arena.
void run_on_arena(const std::string& json, const std::string& text, ArenaRun& r,
                  const std::function<void(LaunchPlan&)>& edit = {}) {
    auto problem = parse_problem(json, "memplan.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    r.problem = *problem;
    const dsl::DeviceLimits limits = dsl::device_limits(find_device("h200").value());
    auto prog = text.empty() ? planner::seed_program(*problem, limits) : dsl::parse_program(text, "p.kf");
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    const dsl::CheckResult checked = dsl::check_program(*prog, *problem, limits);
    ASSERT_TRUE(checked.ok()) << checked.errors.front().to_string();
    auto low = lower_program(*prog, *problem, {});
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    r.plan = low->plan;
    if (edit) edit(r.plan);
    const std::vector<BufferLifetime> life = buffer_lifetimes(r.plan);

    const fs::path dir = fs::temp_directory_path() / ("kforge_memplan_host_" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::string main_src = "int main(int, char** argv) {\n    std::map<std::string, float*> t;\n"
                           "    std::vector<float> arena(" +
                           std::to_string(r.plan.memory.arena_bytes / 4 + 1) + ", NAN);\n";
    for (const Tensor& x : problem->tensors) {
        if (x.role == TensorRole::kIntermediate) continue;
        main_src += "    std::vector<float> io_" + x.name + "(" + std::to_string(x.numel()) +
                    ", NAN); t[\"" + x.name + "\"] = io_" + x.name + ".data();\n";
    }
    for (const BufferDecl& b : r.plan.buffers)
        main_src += "    t[\"" + b.name + "\"] = arena.data() + " + std::to_string(b.offset / 4) + ";\n";
    for (const Tensor* x : problem->graph_inputs()) {
        std::vector<float> xs;
        for (int64_t i = 0; i < x->numel(); ++i) {
            xs.push_back(float(1.5 * std::sin(0.37 * double(i) + double(x->name.size())) - 0.2));
            r.inputs[x->name].push_back(double(xs.back()));
        }
        std::ofstream(dir / (x->name + ".bin"), std::ios::binary)
            .write(reinterpret_cast<const char*>(xs.data()), std::streamsize(xs.size() * 4));
        main_src += "    { FILE* f = std::fopen((std::string(argv[1]) + \"/" + x->name +
                    ".bin\").c_str(), \"rb\");\n      if (!f || std::fread(t[\"" + x->name +
                    "\"], 4, " + std::to_string(x->numel()) + ", f) != " +
                    std::to_string(x->numel()) + ") return 2; std::fclose(f); }\n";
    }
    for (size_t k = 0; k < r.plan.kernels.size(); ++k) {
        const KernelLaunch& l = r.plan.kernels[k];
        for (size_t i = 0; i < r.plan.buffers.size(); ++i)  // poisoned at its first write
            if (life[i].first_launch == k)
                main_src += "    std::fill_n(t[\"" + r.plan.buffers[i].name + "\"], " +
                            std::to_string(buffer_bytes(r.plan.buffers[i]) / 4) + ", NAN);\n";
        std::string args;
        for (const KernelParam& p : l.params) {
            args += args.empty() ? "" : ", ";
            args += p.kind == ParamKind::kInt64 ? std::to_string(p.int_value) + "LL"
                                                : "t[\"" + p.name + "\"]";
        }
        main_src += hostrun::grid_loop(l.grid[0], l.block[0], l.symbol, args);
    }
    for (const std::string& out : problem->outputs)
        main_src += "    { FILE* o = std::fopen((std::string(argv[1]) + \"/" + out +
                    ".out\").c_str(), \"wb\"); if (!o) return 3;\n      std::fwrite(t[\"" + out +
                    "\"], 4, " + std::to_string(problem->find_tensor(out)->numel()) +
                    ", o); std::fclose(o); }\n";
    main_src += "    return 0;\n}\n";
    const fs::path kernels = fs::path(KFORGE_SOURCE_DIR) / "kernels";
    std::ofstream(dir / "run.cpp")
        << hostrun::kHostShim << hostrun::kGridShim
        << hostrun::strip_includes(hostrun::read_text(kernels / "chain_ops.cuh"))
        << hostrun::strip_includes(hostrun::read_text(kernels / "map.cuh"))
        << hostrun::strip_includes(hostrun::read_text(kernels / "copy.cuh"))
        << hostrun::strip_includes(low->cuda_source) << main_src;
    const hostrun::HostBuild build = hostrun::build_host_run(dir);
    ASSERT_EQ(build.status, 0) << build.log;
    const std::string run = (dir / "run").string() + " " + dir.string();
    ASSERT_EQ(std::system(run.c_str()), 0) << hostrun::read_text(dir / "run.cpp");
    for (const std::string& out : problem->outputs) {
        std::vector<float>& got = r.outputs[out];
        got.resize(static_cast<size_t>(problem->find_tensor(out)->numel()));
        std::ifstream(dir / (out + ".out"), std::ios::binary)
            .read(reinterpret_cast<char*>(got.data()), std::streamsize(got.size() * 4));
    }
    fs::remove_all(dir);
}

// Mismatches against the interpreter (NaN counts as one).
int mismatches(const ArenaRun& r) {
    auto ref = interpret(r.problem, r.inputs);
    EXPECT_TRUE(ref.ok()) << ref.error().to_string();
    if (!ref.ok()) return -1;
    int bad = 0;
    for (const auto& [name, got] : r.outputs) {
        const std::vector<double>& want = ref->at(name);
        for (size_t i = 0; i < got.size(); ++i)
            if (!(std::abs(double(got[i]) - want[i]) <= 1e-5 * (1.0 + std::abs(want[i])))) ++bad;
    }
    return bad;
}

TEST(MemoryPlanHostRun, FiveMapKernelsInAnArenaOfTwoMatchTheInterpreter) {
    ArenaRun r;
    ASSERT_NO_FATAL_FAILURE(run_on_arena(memplan::kChain5Problem, memplan::kChain5Program, r));
    EXPECT_EQ(r.plan.memory.arena_bytes, 2 * 4 * 1024 * 4);  // a, c share; b, d share
    EXPECT_EQ(mismatches(r), 0);
}

TEST(MemoryPlanHostRun, CopyAndMapKernelsOfUnequalSizesShareTheArena) {
    // the planner's seed: relu, cat, permute, slice and tanh as map and copy kernels whose
    // intermediates differ in size
    ArenaRun r;
    ASSERT_NO_FATAL_FAILURE(run_on_arena(R"({"name": "catnet", "dims": {"N": 2, "C1": 3, "C2": 5, "H": 6, "W": 8},
      "inputs": {"a": {"shape": ["N","C1","H","W"], "dtype": "f32"},
                 "b": {"shape": ["N","C2","H","W"], "dtype": "f32"}},
      "graph": [{"op": "relu", "inputs": ["b"], "output": "rb"},
                {"op": "cat", "inputs": ["a", "rb"], "output": "y0", "axis": 1},
                {"op": "permute", "inputs": ["y0"], "output": "p", "dims": [0, 2, 3, 1]},
                {"op": "slice", "inputs": ["p"], "output": "s", "axis": 1, "start": 1, "end": 5, "step": 2},
                {"op": "tanh", "inputs": ["s"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})", "", r));
    ASSERT_GE(r.plan.kernels.size(), 3u);
    EXPECT_LT(r.plan.memory.arena_bytes, r.plan.memory.unshared_bytes);  // something is shared
    EXPECT_TRUE(check_memory_plan(r.plan).ok());
    EXPECT_EQ(mismatches(r), 0);
}

TEST(MemoryPlanHostRun, AliasingAKernelsInputAndOutputIsCaughtByThePoison) {
    // the negative control: b placed over a (k1 reads a and writes b) - b's poisoning before
    // k1 wipes a, so the outputs are NaN; the memory plan never produces this layout
    ArenaRun r;
    ASSERT_NO_FATAL_FAILURE(run_on_arena(memplan::kChain5Problem, memplan::kChain5Program, r,
                                         [](LaunchPlan& p) {
                                             int64_t a = -1;
                                             for (BufferDecl& b : p.buffers) {
                                                 if (b.name == "a") a = b.offset;
                                                 if (b.name == "b") b.offset = a;
                                             }
                                         }));
    EXPECT_FALSE(check_memory_plan(r.plan).ok());
    EXPECT_EQ(mismatches(r), 4 * 1024);
}

}  // namespace
}  // namespace kforge::codegen
