// The GPU reference's generated kernels run on the CPU (device-free): the source of every op spec
// and of every suite problem at a small shape is compiled by the host compiler against a CUDA
// emulation (data/cuda_host_shim.h: blocks in turn, threads as coroutines switched at barriers
// and shuffles), launched as CudaDevice::reference() launches it, and compared with the fp64
// interpreter. It checks the generated indexing, broadcasting, tiling and block reductions here;
// tests/reference/gpu_reference_gpu_test.cpp checks the same on a real GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "problem/inputs.h"
#include "reference/gpu_reference.h"
#include "index_specs.h"
#include "reference_specs.h"

namespace kforge::eval {
namespace {

namespace fs = std::filesystem;

struct Case {
    std::string name;
    Problem problem;
    ReferenceProgram program;
};

std::vector<Case> cases() {
    std::vector<Case> out;
    std::vector<testing::NamedSpec> specs = testing::every_op_specs();
    for (const auto& spec : testing::index_op_specs()) specs.push_back(spec);
    for (const auto& spec : specs) {
        auto p = parse_problem(spec.json, spec.name);
        EXPECT_TRUE(p.ok()) << spec.name;
        if (p) out.push_back({spec.name, *p, {}});
    }
    for (const std::string& file : testing::suite_problem_files()) {
        auto p = load_problem(file);
        EXPECT_TRUE(p.ok()) << file;
        if (!p) continue;
        auto small = testing::interpretable_shape(*p);
        EXPECT_TRUE(small.ok()) << file;
        if (small) out.push_back({p->name, *small, {}});
    }
    for (Case& c : out) {
        auto program = generate_reference_program(c.problem);
        EXPECT_TRUE(program.ok()) << c.name;
        if (program) c.program = *program;
    }
    return out;
}

// One host translation unit: the shim, the library once, each case's kernels renamed
// c<i>_ref_op<j>, an entry per kernel that unpacks its pointer arguments, and kf_run().
std::string host_source(const std::vector<Case>& all) {
    std::string library(gpu_reference_library());
    std::string src = "#include \"cuda_host_shim.h\"\n" + library;
    std::string table;
    for (size_t i = 0; i < all.size(); ++i) {
        std::string prefix = "c" + std::to_string(i) + "_";
        std::string kernels = all[i].program.source.substr(library.size());
        for (size_t at = 0; (at = kernels.find(" ref_op", at)) != std::string::npos;) {
            kernels.insert(at + 1, prefix);
            at += prefix.size() + 7;
        }
        src += kernels;
        for (const ReferenceLaunch& l : all[i].program.launches) {
            std::string name = prefix + l.symbol;
            src += "static void " + name + "_entry(double** a) { " + name + "(";
            for (size_t k = 0; k < l.tensors.size(); ++k)
                src += (k ? ", a[" : "a[") + std::to_string(k) + "]";
            src += "); }\n";
            table += "    {\"" + name + "\", " + name + "_entry},\n";
        }
    }
    src += "struct KfEntry { const char* name; void (*fn)(double**); };\n"
           "static const KfEntry kf_entries[] = {\n" + table + "};\n"
           "extern \"C\" int kf_run(const char* name, double** args, const unsigned* grid,\n"
           "                        unsigned threads) {\n"
           "    for (const KfEntry& e : kf_entries)\n"
           "        if (std::strcmp(e.name, name) == 0)\n"
           "            return kf_emu_launch(e.fn, args, grid, threads) ? 0 : 2;\n"
           "    return 1;\n"
           "}\n";
    return src;
}

using RunFn = int (*)(const char*, double**, const unsigned*, unsigned);

::testing::AssertionResult agree(const std::string& what, const std::vector<double>& g,
                                 const std::vector<double>& c) {
    if (g.size() != c.size()) return ::testing::AssertionFailure() << what << ": sizes differ";
    double scale = 0;
    for (double x : c)
        if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));
    for (size_t i = 0; i < c.size(); ++i) {
        bool ok = std::isnan(c[i])   ? std::isnan(g[i])
                  : std::isinf(c[i]) ? g[i] == c[i]
                                     : std::fabs(g[i] - c[i]) <=
                                           1e-9 * std::fabs(c[i]) + 1e-11 * scale;
        if (!ok)
            return ::testing::AssertionFailure() << what << ": element " << i << " emulated "
                                                 << g[i] << " interpreter " << c[i];
    }
    return ::testing::AssertionSuccess();
}

TEST(GpuReferenceEmulated, GeneratedKernelsMatchTheInterpreter) {
    std::vector<Case> all = cases();
    ASSERT_GT(all.size(), 70u);
    fs::path dir = fs::temp_directory_path() / ("kforge-refemu-" + std::to_string(getpid()));
    fs::create_directories(dir);
    {
        std::ofstream out(dir / "kernels.cpp");
        out << host_source(all);
    }
    std::string cmd = "c++ -std=c++17 -O1 -w -shared -fPIC -I" +
                      std::string(KFORGE_TEST_DATA_DIR) + "/data -o " +
                      (dir / "kernels.so").string() + " " + (dir / "kernels.cpp").string() +
                      " > " + (dir / "log.txt").string() + " 2>&1";
    if (std::system(cmd.c_str()) != 0) {
        std::ifstream log(dir / "log.txt");
        std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
        FAIL() << cmd << "\n" << text.substr(0, 6000);
    }
    void* lib = dlopen((dir / "kernels.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib, nullptr) << dlerror();
    auto run = reinterpret_cast<RunFn>(dlsym(lib, "kf_run"));
    ASSERT_NE(run, nullptr);
    for (size_t i = 0; i < all.size(); ++i) {
        const Case& c = all[i];
        for (Distribution d : {Distribution::kNormal, Distribution::kHeavyTailed}) {
            std::map<std::string, std::vector<double>> buffers;
            for (const Tensor& t : c.problem.tensors)
                buffers[t.name].assign(static_cast<size_t>(t.numel()), std::nan(""));
            TensorValues inputs;
            for (const Tensor* t : c.problem.graph_inputs())
                buffers[t->name] = inputs[t->name] = generate_input(c.problem, *t, d, 11);
            for (const ReferenceLaunch& l : c.program.launches) {
                std::vector<double*> args;
                for (const std::string& name : l.tensors) args.push_back(buffers[name].data());
                std::string name = "c" + std::to_string(i) + "_" + l.symbol;
                ASSERT_EQ(run(name.c_str(), args.data(), l.grid, l.block[0]), 0)
                    << c.name << " " << l.symbol << " (1: missing, 2: deadlock)";
            }
            auto expected = interpret(c.problem, inputs);
            ASSERT_TRUE(expected.ok()) << c.name;
            for (const auto& [name, values] : *expected)
                EXPECT_TRUE(agree(c.name + " " + name + " (" + std::string(to_string(d)) + ")",
                                  buffers[name], values));
        }
    }
    dlclose(lib);
    std::error_code ec;
    fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace kforge::eval
