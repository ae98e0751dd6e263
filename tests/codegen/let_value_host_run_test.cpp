// Integration, no GPU: the numbers of a generated chain with named values against the fp64
// interpreter. The simulated device runs the problem, not the program (the checker proves they
// agree symbolically); this test runs the program: the map chain that codegen emits for the
// planner's one-kernel seed (the real functor text and kernels/chain_ops.cuh, with the memory
// helpers of kernels/common.cuh replaced by scalar host loops) is compiled for the host with the
// C++ compiler and run over every element; each output must match interpret() to f32 accuracy.
#include <gtest/gtest.h>

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

// Seeds `spec_json`, checks it is one map kernel, runs its chain on the host over `x` and returns
// the stored output `out`.
std::vector<float> run_seeded_map(const Problem& problem, const std::vector<float>& x,
                                  const std::string& out, std::string& program_text) {
    auto prog = planner::seed_program(problem, dsl::device_limits(find_device("h200").value()));
    EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
    if (!prog.ok()) return {};
    EXPECT_EQ(prog->kernels.size(), 1u);
    const dsl::Kernel& k = prog->kernels[0];
    EXPECT_EQ(k.kind, dsl::KernelKind::kMap);
    auto table = build_tensor_table(*prog, problem);
    EXPECT_TRUE(table.ok());
    if (!table.ok()) return {};
    LowerContext ctx;
    ctx.problem = &problem;
    ctx.tensors = *table;
    const TensorInfo& y = table->at(out);
    ChainSpace space{y.dim_names, y.shape};
    auto chain = emit_chain("Chain", k.chain, space, k.args[0], ctx);
    EXPECT_TRUE(chain.ok()) << (chain.ok() ? "" : chain.error().to_string());
    if (!chain.ok()) return {};
    for (const ChainParam& p : chain->params)
        EXPECT_TRUE(p.name == k.args[0].name || p.name == out) << "unexpected tensor " << p.name;
    program_text = chain->definition;

    std::string ops = read_text(fs::path(KFORGE_SOURCE_DIR) / "kernels" / "chain_ops.cuh");
    ops.replace(ops.find("#include \"kernels/common.cuh\""), 29, "");
    ops.replace(ops.find("#pragma once"), 12, "");
    // The functor's pointers in ChainCode::params order: the input, then the output.
    std::string init;
    for (const ChainParam& p : chain->params)
        init += std::string(init.empty() ? "" : ", ") + (p.written ? "y.data()" : "x.data()");
    const std::string main_src =
        "int main(int, char** argv) {\n"
        "    const int64_t n = " + std::to_string(space.numel()) + ";\n"
        "    std::vector<float> x(n), y(n, NAN);\n"
        "    FILE* in = std::fopen(argv[1], \"rb\");\n"
        "    if (!in || std::fread(x.data(), sizeof(float), n, in) != size_t(n)) return 2;\n"
        "    std::fclose(in);\n"
        "    Chain chain{" + init + "};\n"
        "    constexpr int V = 4;\n"
        "    for (int64_t i = 0; i < n; i += V) {\n"
        "        float s[Chain::kSlots][V];\n"
        "        chain.load<V>(s, i);\n"
        "        chain.apply<V>(s, i);\n"
        "    }\n"
        "    FILE* o = std::fopen(argv[2], \"wb\");\n"
        "    return o && std::fwrite(y.data(), sizeof(float), n, o) == size_t(n) && !std::fclose(o) ? 0 : 3;\n"
        "}\n";
    const fs::path dir = fs::temp_directory_path() /
                         ("kforge_let_host_" + problem.name + "_" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "run.cpp") << kHostShim << ops << chain->definition << main_src;
    {
        std::ofstream xin(dir / "x.bin", std::ios::binary);
        xin.write(reinterpret_cast<const char*>(x.data()), std::streamsize(x.size() * sizeof(float)));
    }
    const hostrun::HostBuild build = hostrun::build_host_run(dir);
    EXPECT_EQ(build.status, 0) << build.log << "\n" << read_text(dir / "run.cpp");
    const std::string run = (dir / "run").string() + " " + (dir / "x.bin").string() + " " +
                            (dir / "y.bin").string();
    EXPECT_EQ(std::system(run.c_str()), 0);
    std::vector<float> result(x.size());
    std::ifstream yin(dir / "y.bin", std::ios::binary);
    yin.read(reinterpret_cast<char*>(result.data()), std::streamsize(result.size() * sizeof(float)));
    fs::remove_all(dir);
    return result;
}

Problem bench_spec(const std::string& name) {
    std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/bench/kernels/letval/" + name + ".json");
    std::stringstream text;
    text << in.rdbuf();
    auto p = parse_problem(text.str(), name);
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    auto small = rebind_dims(*p, {{"R", 16}, {"C", 64}});
    EXPECT_TRUE(small.ok());
    return *small;
}

void expect_matches_interpreter(const std::string& name) {
    Problem problem = bench_spec(name);
    const int64_t n = 16 * 64;
    std::vector<float> x(n);
    std::vector<double> xd(n);
    for (int64_t i = 0; i < n; ++i) x[i] = float(4.0 * std::sin(0.37 * double(i)) - 0.5), xd[i] = x[i];
    auto ref = interpret(problem, {{"X", xd}});
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();
    std::string functor;
    std::vector<float> y = run_seeded_map(problem, x, "Y", functor);
    ASSERT_EQ(y.size(), size_t(n));
    EXPECT_NE(functor.find("float n_v0[V];"), std::string::npos) << "no named value:\n" << functor;
    const std::vector<double>& want = ref->at("Y");
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (std::abs(double(y[i]) - want[i]) > 1e-6 + 1e-5 * std::abs(want[i]) && bad++ < 5) {
            ADD_FAILURE() << name << " element " << i << " (x = " << x[i] << "): program " << y[i]
                          << ", interpreter " << want[i] << "\n" << functor;
        }
    }
    EXPECT_EQ(bad, 0);
}

TEST(LetValueHostRun, SeededSoftsignMatchesTheInterpreter) { expect_matches_interpreter("softsign_f32"); }
TEST(LetValueHostRun, SeededEluMatchesTheInterpreter) { expect_matches_interpreter("elu_f32"); }

}  // namespace
}  // namespace kforge::codegen
