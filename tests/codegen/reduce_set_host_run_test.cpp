// Integration, no GPU: the numbers of reductions over a set of dims (kernels/reduce_set.cuh)
// against the fp64 interpreter. The planner seeds a problem whose chains of single-dim
// reductions (BatchNorm's batch statistics: mean over W, then H, then N; the variance's with its
// `sub; square` prologue) become one set reduction each; each kernel is lowered, and its
// per-thread part (reduce_set_thread, the real header) is compiled for the host with the
// generated prologue functor and run for every thread of every block of the lowered launch,
// with the launch's own parameters (the lowering's dim groups, run, slices and chunk); the
// threads' partials are combined as the block and the finish launch do. Each output must match
// interpret() to f32 accuracy.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "codegen/chain.h"
#include "codegen/lower.h"
#include "problem/interpret.h"
#include "problem/spec.h"
#include "planner/plan.h"
#include "sol/device.h"
#include "tests/codegen/host_run_problem.h"
#include "tests/codegen/host_run_shim.h"

namespace kforge::codegen {
namespace {

namespace fs = std::filesystem;

using hostrun::param;
using hostrun::spec;

double input_value(int64_t i) { return 2.0 * std::sin(0.37 * double(i) + 0.4) + 0.5; }

// Seeds `problem`, expects `kernels` kernels, each a set reduction whose chain is one store;
// runs them in order on the host and compares each stored tensor in `outputs` with interpret().
void expect_set_reductions_match(const Problem& problem, size_t kernels,
                                 const std::vector<std::string>& outputs) {
    auto prog = planner::seed_program(problem, dsl::device_limits(find_device("h200").value()));
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), kernels);
    auto table = build_tensor_table(*prog, problem);
    ASSERT_TRUE(table.ok()) << table.error().to_string();
    LowerContext ctx;
    ctx.problem = &problem;
    ctx.tensors = *table;
    ctx.sm_count = 132;

    std::map<std::string, std::vector<float>> host;  // every tensor a kernel reads or stores
    TensorValues inputs;
    for (const Tensor* in : problem.graph_inputs()) {
        std::vector<double>& d = inputs[in->name];
        std::vector<float>& f = host[in->name];
        for (int64_t i = 0; i < in->numel(); ++i) {
            f.push_back(float(input_value(i)));
            d.push_back(double(f.back()));
        }
    }
    auto ref = interpret(problem, inputs);
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();

    std::string defs, body;
    int id = 0;
    for (const dsl::Kernel& k : prog->kernels) {
        ASSERT_EQ(k.kind, dsl::KernelKind::kRowwise) << k.name;
        ASSERT_TRUE(dsl::over_is_set(k)) << k.name << " over " << k.over;
        ASSERT_EQ(k.chain.size(), 1u) << k.name;
        const std::string out = k.chain[0].tensor->name;
        auto code = lower_rowwise(k, ctx);
        ASSERT_TRUE(code.ok()) << code.error().to_string();
        const KernelLaunch& l = code->launches.at(0);
        std::smatch m;
        const std::string& src = code->device_source;
        ASSERT_TRUE(std::regex_search(src, m, std::regex(R"(reduce_set<(\d+), (\d+), (\d+), (\d+), ([\w:]+)>)")))
            << src;
        const std::string threads = m[1], vec = m[2], nk = m[3], nr = m[4], mode = m[5];
        const std::string x = k.args[0].name;
        const TensorInfo& xi = table->at(x);
        std::string pre_type = "kforge::RowNoPrologue", pre_init;
        if (!k.pre.empty()) {
            ChainSpace space{k.args[0].dims, xi.shape};
            const std::string type = "Pre" + std::to_string(id);
            auto pre = emit_chain(type, k.pre, space, std::nullopt, ctx, false);
            ASSERT_TRUE(pre.ok()) << pre.error().to_string();
            defs += pre->definition;
            pre_type = type;
            for (const ChainParam& p : pre->params)
                pre_init += (pre_init.empty() ? "" : ", ") + p.name + ".data()";
        }
        const auto arr = [&](const std::string& name, const std::string& n) {
            std::string s = "        const int64_t " + name + "[" + n + "] = {";
            for (int i = 0; i < std::stoi(n); ++i)
                s += (i ? ", " : "") + std::to_string(param(l, name + std::to_string(i)));
            return s + "};\n";
        };
        const int64_t outs = param(l, "outputs");
        const bool mean = mode.find("kMean") != std::string::npos;
        int64_t out_numel = 1;
        for (int64_t e : table->at(out).shape) out_numel *= e;
        host[out].assign(size_t(out_numel), 0.f);
        body += "    {\n" + arr("kext", nk) + arr("kstr", nk) + arr("rext", nr) + arr("rstr", nr) +
                "        const " + pre_type + " pre{" + pre_init + "};\n"
                "        using Op = kforge::ReduceTraits<" + mode + ">::Op;\n"
                "        for (int64_t o = 0; o < " + std::to_string(outs) + "; ++o) {\n"
                "            float a = kforge::ReduceTraits<" + mode + ">::kInit;\n"
                "            for (int64_t s = 0; s < " + std::to_string(l.grid[1]) + "; ++s)\n"
                "                for (int t = 0; t < " + threads + "; ++t)\n"
                "                    a = Op{}(a, kforge::reduce_set_thread<" + threads + ", " + vec +
                ", " + nk + ", " + nr + ", " + mode + ">(" + x + ".data(), kext, kstr, rext, rstr, " +
                std::to_string(param(l, "run")) + ", " + std::to_string(param(l, "total")) + ", " +
                std::to_string(param(l, "chunk")) + ", o, s, t, pre));\n" +
                (mean ? "            a /= float(" + std::to_string(param(l, "total")) + ");\n" : "") +
                "            " + out + "[o] = a;\n        }\n    }\n";
        ++id;
    }

    const fs::path dir = fs::temp_directory_path() /
                         ("kforge_reduce_set_host_" + problem.name + "_" + std::to_string(getpid()));
    fs::create_directories(dir);
    const std::string reads = hostrun::write_f32_inputs(dir, host, 1);
    std::string writes;
    int arg = 1;
    for (const auto& [name, values] : host) {
        writes += "    { FILE* f = std::fopen(argv[" + std::to_string(arg) + "], \"wb\");\n"
                  "      if (!f || std::fwrite(" + name + ".data(), 4, " + name + ".size(), f) != " +
                  name + ".size() || std::fclose(f)) return 3; }\n";
        ++arg;
    }
    const fs::path kernels_dir = fs::path(KFORGE_SOURCE_DIR) / "kernels";
    const std::string shim = std::string(hostrun::kHostShim) +
                             "namespace kforge {\n"
                             "template <int V, typename T> inline void load_vec(float (&o)[V], const T* p) {\n"
                             "    for (int j = 0; j < V; ++j) o[j] = p[j];\n}\n"
                             "struct OpSum { float operator()(float a, float b) const { return a + b; } };\n"
                             "struct OpMax { float operator()(float a, float b) const { return max_nan(a, b); } };\n"
                             "struct OpMin { float operator()(float a, float b) const { return min_nan(a, b); } };\n"
                             "}  // namespace kforge\n"
                             "struct KfDim3 { unsigned x = 0, y = 0, z = 0; };\n"
                             "static KfDim3 blockIdx, threadIdx, gridDim;\n"
                             "#define __shared__ static\n"
                             "inline void __syncthreads() {}\n"
                             "inline float __shfl_xor_sync(unsigned, float v, int) { return v; }\n";
    std::ofstream(dir / "run.cpp")
        << shim << hostrun::strip_includes(hostrun::read_text(kernels_dir / "chain_ops.cuh"))
        << hostrun::strip_includes(hostrun::read_text(kernels_dir / "reduce_ops.cuh"))
        << hostrun::strip_includes(hostrun::read_text(kernels_dir / "reduce_set.cuh")) << defs
        << "int main(int, char** argv) {\n" << reads << body << writes << "    return 0;\n}\n";
    const hostrun::HostBuild build = hostrun::build_host_run(dir);
    ASSERT_EQ(build.status, 0) << build.log << "\n" << hostrun::read_text(dir / "run.cpp");
    std::string run = (dir / "run").string();
    for (const auto& entry : host) run += " " + (dir / (entry.first + ".bin")).string();
    ASSERT_EQ(std::system(run.c_str()), 0) << hostrun::read_text(dir / "run.cpp");
    for (const std::string& out : outputs) {
        std::vector<float> y(host.at(out).size());
        std::ifstream(dir / (out + ".bin"), std::ios::binary)
            .read(reinterpret_cast<char*>(y.data()), std::streamsize(y.size() * sizeof(float)));
        const std::vector<double>& want = ref->at(out);
        ASSERT_EQ(want.size(), y.size()) << out;
        int bad = 0;
        for (size_t i = 0; i < y.size(); ++i) {
            if (std::abs(double(y[i]) - want[i]) > 1e-5 * (1.0 + std::abs(want[i])) && bad++ < 5)
                ADD_FAILURE() << problem.name << " " << out << "[" << i << "]: program " << y[i]
                              << ", interpreter " << want[i];
        }
        EXPECT_EQ(bad, 0) << out;
    }
    fs::remove_all(dir);
}

// BatchNorm (training mode) as KernelBench's files import it: the mean and the biased variance
// over N, H, W, each a chain of three single-dim means, keepdim; 9 x 11 images of 3 x 5 (odd:
// the scalar path), then 56 x 56 (vectors of 4, several slices).
std::string bn_stats(int64_t n, int64_t c, int64_t h, int64_t w) {
    return R"({"name": "bn_stats_)" + std::to_string(h) + R"(", "dims": {"N": )" +
           std::to_string(n) + R"(, "C": )" + std::to_string(c) + R"(, "H": )" +
           std::to_string(h) + R"(, "W": )" + std::to_string(w) + R"(},
        "inputs": {"X": {"shape": ["N", "C", "H", "W"], "dtype": "f32"}},
        "graph": [{"op": "mean", "inputs": ["X"], "axis": 3, "keepdim": true, "output": "m3"},
                  {"op": "mean", "inputs": ["m3"], "axis": 2, "keepdim": true, "output": "m2"},
                  {"op": "mean", "inputs": ["m2"], "axis": 0, "keepdim": true, "output": "M"},
                  {"op": "sub", "inputs": ["X", "M"], "output": "D"},
                  {"op": "square", "inputs": ["D"], "output": "S"},
                  {"op": "mean", "inputs": ["S"], "axis": 3, "keepdim": true, "output": "v3"},
                  {"op": "mean", "inputs": ["v3"], "axis": 2, "keepdim": true, "output": "v2"},
                  {"op": "mean", "inputs": ["v2"], "axis": 0, "keepdim": true, "output": "V"}],
        "outputs": ["M", "V"], "precision": {"policy": "fp32_strict"}})";
}

TEST(ReduceSetHostRun, BatchNormStatisticsMatchTheInterpreter) {
    expect_set_reductions_match(spec(bn_stats(3, 5, 9, 11)), 2, {"M", "V"});
    expect_set_reductions_match(spec(bn_stats(4, 6, 56, 56)), 2, {"M", "V"});
}

// max over the last dim, then over dim 1 of what is left (no keepdim): kept A and C alternate
// with reduced B and the run D (two kept groups, one outer reduced group).
TEST(ReduceSetHostRun, AlternatingGroupsMatchTheInterpreter) {
    expect_set_reductions_match(spec(R"({"name": "max_set", "dims": {"A": 4, "B": 6, "C": 5, "D": 8},
        "inputs": {"X": {"shape": ["A", "B", "C", "D"], "dtype": "f32"}},
        "graph": [{"op": "max", "inputs": ["X"], "axis": 3, "output": "P"},
                  {"op": "max", "inputs": ["P"], "axis": 1, "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})"), 1, {"Y"});
}

}  // namespace
}  // namespace kforge::codegen
