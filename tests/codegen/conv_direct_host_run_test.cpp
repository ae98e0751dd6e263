// Integration, no GPU: the numbers of the direct convolution (`schedule direct`,
// kernels/conv_direct.cuh) against the fp64 interpreter. Each problem's program (a conv kernel
// with schedule direct and its chain) is checked, lowered, and the lowered source's geometry
// struct and chain functor are compiled for the host with the real header; its three phases
// (stage a channel step, accumulate it, store through the chain) run for every thread of every
// block of the lowered launch, the staged steps in the kernel's order with a barrier between
// phases. Each output must match interpret() to f32 accuracy. Shapes are odd (partial spatial,
// filter and channel tiles), with stride, padding, dilation, 1-D, 2-D and 3-D, and several
// channel steps in flight.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "codegen/chain.h"
#include "codegen/lower.h"
#include "compile/nvrtc_compile.h"
#include "compile/ptxas_report.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "problem/interpret.h"
#include "dsl/printer.h"
#include "planner/plan.h"
#include "problem/spec.h"
#include "sol/device.h"
#include "tests/codegen/conv_forms_fixtures.h"
#include "tests/codegen/host_run_problem.h"
#include "tests/codegen/host_run_shim.h"

namespace kforge::codegen {
namespace {

namespace fs = std::filesystem;

using hostrun::param;
using hostrun::spec;

double input_value(int64_t i, int salt) { return std::sin(0.37 * double(i) + 0.4 + salt) + 0.25; }


// Checks and lowers `program` (one direct conv kernel) for `problem`, runs it on the host and
// compares output `out` with interpret().
void expect_direct_matches(const Problem& problem, const std::string& program,
                           const std::string& out) {
    auto prog = dsl::parse_program(program, "direct.kf");
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    auto checked = dsl::check_program(*prog, problem,
                                      dsl::device_limits(find_device("h200").value()));
    ASSERT_TRUE(checked.ok()) << (checked.errors.empty() ? "" : checked.errors[0].to_string());
    auto table = build_tensor_table(*prog, problem);
    ASSERT_TRUE(table.ok()) << table.error().to_string();
    LowerContext ctx;
    ctx.problem = &problem;
    ctx.tensors = *table;
    const dsl::Kernel& k = prog->kernels.at(0);
    auto code = lower_conv2d(k, ctx);
    ASSERT_TRUE(code.ok()) << code.error().to_string();
    ASSERT_EQ(code->launches.size(), 1u);
    const KernelLaunch& l = code->launches[0];
    // the whole program's source compiles with NVRTC (no CUTLASS, no host code) for sm_90a,
    // without spills
    LowerOptions lo;
    lo.arch = "sm_90a";
    auto lowered = lower_program(*prog, problem, lo);
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    EXPECT_FALSE(lowered->uses_cutlass);
    auto rtc = compile::nvrtc_compile_cubin(lowered->cuda_source,
                                            compile::default_compile_options("sm_90a"));
    ASSERT_TRUE(rtc.ok()) << rtc.error().to_string() << "\n" << rtc.error().detail;
    for (const compile::KernelResources& kr : compile::parse_ptxas_report(rtc->log))
        EXPECT_FALSE(kr.spills()) << compile::format_ptxas_report({kr});

    std::map<std::string, std::vector<float>> host;
    TensorValues inputs;
    int salt = 0;
    for (const Tensor* in : problem.graph_inputs()) {
        std::vector<double>& d = inputs[in->name];
        std::vector<float>& f = host[in->name];
        for (int64_t i = 0; i < in->numel(); ++i) {
            f.push_back(float(input_value(i, salt)));
            d.push_back(double(f.back()));
        }
        ++salt;
    }
    auto ref = interpret(problem, inputs);
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();
    host[out].assign(ref->at(out).size(), 0.f);

    // the generated geometry struct and chain functor; the entry point is the GPU's
    const std::string& src = code->device_source;
    const size_t entry = src.find("extern \"C\" __global__");
    ASSERT_NE(entry, std::string::npos) << src;
    const std::string defs = hostrun::strip_includes(src.substr(0, entry));
    std::smatch m;
    ASSERT_TRUE(std::regex_search(src, m, std::regex(R"(namespace (kforge_conv_\w+) \{)"))) << src;
    const std::string geo = std::string(m[1]) + "::Geo";
    ASSERT_TRUE(std::regex_search(src, m, std::regex(R"(const (\w+) chain\{([^}]*)\};)"))) << src;
    const std::string chain_type = m[1];
    std::string chain_args = m[2];
    for (const auto& [name, values] : host)  // t_<tensor> -> the host vector
        chain_args = std::regex_replace(chain_args, std::regex("\\bt_" + name + "\\b"),
                                        name + ".data()");
    const std::string x = k.args[0].name, w = k.args[1].name;
    std::string sizes;
    for (const char* s : {"batch", "channels", "in_d", "in_h", "in_w", "filters", "out_d", "out_h",
                          "out_w"})
        sizes += "    const int64_t " + std::string(s) + " = " + std::to_string(param(l, s)) + ";\n";
    const std::string body =
        sizes +
        "    using L = kforge::ConvDirectLayout<" + geo + ">;\n"
        "    const kforge::ConvDirectSizes s{batch, channels, in_d, in_h, in_w, filters, out_d, "
        "out_h, out_w};\n"
        "    const " + chain_type + " chain{" + chain_args + "};\n"
        "    const auto copy = [](float* d, const float* p, bool ok) { *d = ok ? *p : 0.f; };\n"
        "    std::vector<float> smem(size_t(L::kStage) * " + geo + "::kStages);\n"
        "    using Acc = float[" + geo + "::kFK][" + geo + "::kFP];\n"
        "    std::vector<std::array<std::array<float, " + geo + "::kFP>, " + geo + "::kFK>> acc("
        + geo + "::kThreads);\n"
        "    const int64_t steps = (channels / " + geo + "::kGroups + " + geo + "::kTileC - 1) / " +
        geo + "::kTileC;\n"
        "    for (int64_t bz = 0; bz < " + std::to_string(l.grid[2]) + "; ++bz)\n"
        "    for (int64_t by = 0; by < " + std::to_string(l.grid[1]) + "; ++by)\n"
        "    for (int64_t bx = 0; bx < " + std::to_string(l.grid[0]) + "; ++bx) {\n"
        "        const auto b = kforge::conv_direct_block<" + geo + ">(s, bx, by, bz);\n"
        "        for (auto& a : acc) for (auto& r : a) r.fill(0.f);\n"
        "        for (int64_t i = 0; i < steps; ++i) {\n"
        "            float* st = smem.data() + (i % " + geo + "::kStages) * L::kStage;\n"
        "            std::fill(st, st + L::kStage, NAN);  // a slot the load misses shows\n"
        "            for (int t = 0; t < " + geo + "::kThreads; ++t)\n"
        "                kforge::conv_direct_load<" + geo + ">(" + x + ".data(), " + w +
        ".data(), st, s, b, i * " + geo + "::kTileC, t, copy);\n"
        "            for (int t = 0; t < " + geo + "::kThreads; ++t)\n"
        "                kforge::conv_direct_accumulate<" + geo + ">(st, t, "
        "reinterpret_cast<Acc&>(acc[t]));\n"
        "        }\n"
        "        for (int t = 0; t < " + geo + "::kThreads; ++t)\n"
        "            kforge::conv_direct_store<" + geo + ">(reinterpret_cast<const Acc&>(acc[t]), "
        "s, b, t, chain);\n"
        "    }\n";

    const fs::path dir = fs::temp_directory_path() /
                         ("kforge_conv_direct_host_" + problem.name + "_" + std::to_string(getpid()));
    fs::create_directories(dir);
    const std::string reads = hostrun::write_f32_inputs(dir, host, 1);
    const int out_arg = 1 + int(std::distance(host.begin(), host.find(out)));
    const std::string write =
        "    { FILE* f = std::fopen(argv[" + std::to_string(out_arg) + "], \"wb\");\n"
        "      if (!f || std::fwrite(" + out + ".data(), 4, " + out + ".size(), f) != " + out +
        ".size() || std::fclose(f)) return 3; }\n";
    const fs::path kernels_dir = fs::path(KFORGE_SOURCE_DIR) / "kernels";
    std::ofstream(dir / "run.cpp")
        << "#include <array>\n#include <algorithm>\n" << hostrun::kHostShim
        << "namespace kforge {\n"
           "template <int V, typename T> inline void load_vec(float (&o)[V], const T* p) {\n"
           "    for (int j = 0; j < V; ++j) o[j] = p[j];\n}\n}  // namespace kforge\n"
        << hostrun::strip_includes(hostrun::read_text(kernels_dir / "chain_ops.cuh"))
        << hostrun::strip_includes(hostrun::read_text(kernels_dir / "conv_direct.cuh")) << defs
        << "int main(int, char** argv) {\n" << reads << body << write << "    return 0;\n}\n";
    const hostrun::HostBuild build = hostrun::build_host_run(dir);
    ASSERT_EQ(build.status, 0) << build.log << "\n" << hostrun::read_text(dir / "run.cpp");
    std::string run = (dir / "run").string();
    for (const auto& entry_ : host) run += " " + (dir / (entry_.first + ".bin")).string();
    ASSERT_EQ(std::system(run.c_str()), 0) << hostrun::read_text(dir / "run.cpp");
    std::vector<float> y(host.at(out).size());
    std::ifstream(dir / (out + ".bin"), std::ios::binary)
        .read(reinterpret_cast<char*>(y.data()), std::streamsize(y.size() * sizeof(float)));
    const std::vector<double>& want = ref->at(out);
    int bad = 0;
    for (size_t i = 0; i < y.size(); ++i)
        if (!(std::abs(double(y[i]) - want[i]) <= 1e-5 * (1.0 + std::abs(want[i]))) && bad++ < 5)
            ADD_FAILURE() << problem.name << " " << out << "[" << i << "]: program " << y[i]
                          << ", interpreter " << want[i];
    EXPECT_EQ(bad, 0) << out;
    fs::remove_all(dir);
}

// A ResNet stem in miniature: 3 channels, 7x7, stride 2, padding 3; 10 filters (a partial
// filter tile of 16), 23 x 29 input (partial spatial tiles).
TEST(ConvDirectHostRun, StridedPaddedStemMatchesInterpreter) {
    const Problem p = spec(R"({"name": "stem", "dims": {"N": 2, "C": 3, "H": 23, "W": 29, "K": 10},
      "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
                 "w": {"shape": ["K", "C", 7, 7], "dtype": "f32", "param": true},
                 "b": {"shape": ["K"], "dtype": "f32", "param": true}},
      "graph": [{"op": "conv2d", "inputs": ["x", "w", "b"], "output": "h",
                 "stride": 2, "padding": 3, "out_dims": ["P", "Q"]},
                {"op": "relu", "inputs": ["h"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
    expect_direct_matches(p,
                          "program d for \"stem\"\n"
                          "kernel k0 = conv2d(x[N,C,H,W], w[K,C,7,7]) tile 64x16x16 stages 1 "
                          "schedule direct math f32_simt\n"
                          "    { add b[K]; relu; store y[N,K,P,Q] }\n",
                          "y");
}

// 11 channels in steps of 4 (three steps, two in flight), dilation 2, 3x3, 24 filters (three
// thread groups), a chain with a per-channel operand and a scalar.
TEST(ConvDirectHostRun, ChannelStepsInFlightMatchInterpreter) {
    const Problem p = spec(R"({"name": "steps", "dims": {"N": 3, "C": 11, "H": 13, "W": 37, "K": 24},
      "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
                 "w": {"shape": ["K", "C", 3, 3], "dtype": "f32", "param": true},
                 "b": {"shape": ["K"], "dtype": "f32", "param": true}},
      "graph": [{"op": "conv2d", "inputs": ["x", "w", "b"], "output": "h",
                 "padding": [1, 2], "dilation": 2, "out_dims": ["P", "Q"]},
                {"op": "scale", "inputs": ["h"], "value": 0.5, "output": "y"}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
    expect_direct_matches(p,
                          "program d for \"steps\"\n"
                          "kernel k0 = conv2d(x[N,C,H,W], w[K,C,3,3]) tile 128x24x4 stages 2 "
                          "schedule direct math f32_simt\n"
                          "    { add b[K]; mul 0.5; store y[N,K,P,Q] }\n",
                          "y");
}

// conv1d: stride 3, dilation 2, padding 2 (a 1-D tile of all M positions).
TEST(ConvDirectHostRun, Conv1dMatchesInterpreter) {
    const Problem p = spec(R"({"name": "c1", "dims": {"N": 2, "C": 5, "L": 301, "K": 8},
      "inputs": {"x": {"shape": ["N", "C", "L"], "dtype": "f32"},
                 "w": {"shape": ["K", "C", 5], "dtype": "f32", "param": true}},
      "graph": [{"op": "conv1d", "inputs": ["x", "w"], "output": "y",
                 "stride": 3, "padding": 2, "dilation": 2, "out_dims": ["Lo"]}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
    expect_direct_matches(p,
                          "program d for \"c1\"\n"
                          "kernel k0 = conv2d(x[N,C,L], w[K,C,5]) tile 128x8x16 stages 3 "
                          "schedule direct math f32_simt\n"
                          "    { store y[N,K,Lo] }\n",
                          "y");
}

// conv3d: 3 channels, a 3x3x2 filter, stride and dilation on different axes.
TEST(ConvDirectHostRun, Conv3dMatchesInterpreter) {
    const Problem p = spec(R"({"name": "c3", "dims": {"N": 2, "C": 3, "D": 6, "H": 9, "W": 10, "K": 5},
      "inputs": {"x": {"shape": ["N", "C", "D", "H", "W"], "dtype": "f32"},
                 "w": {"shape": ["K", "C", 3, 3, 2], "dtype": "f32", "param": true},
                 "b": {"shape": ["K"], "dtype": "f32", "param": true}},
      "graph": [{"op": "conv3d", "inputs": ["x", "w", "b"], "output": "h",
                 "stride": [1, 2, 1], "padding": [1, 1, 0], "dilation": [2, 1, 1],
                 "out_dims": ["Z", "P", "Q"]},
                {"op": "sigmoid", "inputs": ["h"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
    expect_direct_matches(p,
                          "program d for \"c3\"\n"
                          "kernel k0 = conv2d(x[N,C,D,H,W], w[K,C,3,3,2]) tile 128x8x16 stages 1 "
                          "schedule direct math f32_simt\n"
                          "    { add b[K]; sigmoid; store y[N,K,Z,P,Q] }\n",
                          "y");
}

// Groups: 2 groups of 6 channels and 16 filters (two filter tiles of 8 a group), and a
// transposed 3-D convolution of 2 groups, stride 2, output_padding (its weight [C, K/groups, ..]).
TEST(ConvDirectHostRun, GroupsMatchInterpreter) {
    const Problem p = spec(R"({"name": "g2", "dims": {"N": 2, "C": 12, "H": 11, "W": 14, "K": 32},
      "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
                 "w": {"shape": ["K", 6, 3, 3], "dtype": "f32", "param": true}},
      "graph": [{"op": "conv2d", "inputs": ["x", "w"], "output": "y", "groups": 2,
                 "stride": [1, 2], "padding": 1, "out_dims": ["P", "Q"]}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
    expect_direct_matches(p,
                          "program d for \"g2\"\n"
                          "kernel k0 = conv2d(x[N,C,H,W], w[K,6,3,3]) tile 128x8x4 stages 2 "
                          "schedule direct math f32_simt\n"
                          "    { store y[N,K,P,Q] }\n",
                          "y");
    const Problem t = spec(R"({"name": "gt3", "dims": {"N": 2, "C": 4, "D": 3, "H": 5, "W": 6},
      "inputs": {"x": {"shape": ["N", "C", "D", "H", "W"], "dtype": "f32"},
                 "w": {"shape": ["C", 8, 3, 3, 2], "dtype": "f32", "param": true}},
      "graph": [{"op": "conv_transpose3d", "inputs": ["x", "w"], "output": "y", "groups": 2,
                 "stride": 2, "padding": 1, "output_padding": [1, 0, 1],
                 "out_dims": ["Z", "P", "Q"]}],
      "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
    expect_direct_matches(t,
                          "program d for \"gt3\"\n"
                          "kernel k0 = conv2d(x[N,C,D,H,W], w[C,8,3,3,2]) tile 128x8x16 stages 1 "
                          "schedule direct math f32_simt\n"
                          "    { store y[N,16,Z,P,Q] }\n",
                          "y");
}

// Every form of the convolution forms suite (conv1d/2d/3d and the transposed ones: stride,
// padding, dilation, output_padding, asymmetric filters, groups) whose start program the
// planner puts on the direct convolution; the transposed ones run it over the zero-inserted
// input with the filter flipped.
TEST(ConvDirectHostRun, EveryDirectFormOfTheFormsSuite) {
    int direct = 0, transposed = 0, grouped = 0;
    for (const conv_forms::FormCase& f : conv_forms::cases()) {
        const Problem p = spec(conv_forms::form_json(f));
        auto seed = planner::seed_program(p, dsl::device_limits(find_device("h200").value()));
        ASSERT_TRUE(seed.ok()) << f.name << ": " << seed.error().to_string();
        if (seed->kernels.at(0).gemm.schedule != dsl::Schedule::kDirect) continue;
        SCOPED_TRACE(f.name);
        expect_direct_matches(p, dsl::print_canonical(*seed), "y");
        ++direct;
        transposed += f.op.find("transpose") != std::string::npos;
        grouped += f.groups > 1;
    }
    EXPECT_GE(direct, 9);
    EXPECT_GE(transposed, 5);
    EXPECT_EQ(grouped, 2);
}

}  // namespace
}  // namespace kforge::codegen
