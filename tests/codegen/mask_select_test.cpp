// Integration, no GPU: masked_fill and where whose mask is a bool input of the problem (a data
// tensor, not a structured tril / triu mask). The planner seeds one map kernel
// (`masked_fill M[..] c`, where as `let t; load B[..]; masked_fill C[..] t`); its chain, as
// codegen emits it, is run on the host over every element (bool tensors read as 0 / 1, the
// functor's text and kernels/chain_ops.cuh with the host shim of host_run_shim.h) against the fp64
// interpreter, and the lowered seed compiles for sm_90a with NVRTC. The checker refuses a mask
// that is not bool.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "codegen/chain.h"
#include "codegen/lower.h"
#include "compile/nvrtc_compile.h"
#include "compile/compile.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "planner/plan.h"
#include "problem/interpret.h"
#include "problem/spec.h"
#include "sol/device.h"
#include "tests/codegen/host_run_shim.h"

namespace kforge::codegen {
namespace {

namespace fs = std::filesystem;

// x [R, C] f32 masked by M [R, C] bool, then relu and a scale (one map kernel).
constexpr const char* kMaskedFillSpec = R"({"name": "mf", "dims": {"R": 8, "C": 64},
    "inputs": {"x": {"shape": ["R", "C"], "dtype": "f32"}, "M": {"shape": ["R", "C"], "dtype": "bool"}},
    "graph": [{"op": "masked_fill", "inputs": ["x", "M"], "value": -1.5, "output": "f"},
              {"op": "relu", "inputs": ["f"], "output": "r"},
              {"op": "scale", "inputs": ["r"], "value": 2.0, "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";

// masked_fill whose X broadcasts ([C]) into the mask's [R, C]: the map runs over the mask.
constexpr const char* kMaskedFillBroadcastXSpec = R"({"name": "mfb", "dims": {"R": 8, "C": 64},
    "inputs": {"x": {"shape": ["C"], "dtype": "f32"}, "M": {"shape": ["R", "C"], "dtype": "bool"}},
    "graph": [{"op": "masked_fill", "inputs": ["x", "M"], "value": "-inf", "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";

// where(C [1, C] bool, a [R, C], b [R, C]) + 1.
constexpr const char* kWhereSpec = R"({"name": "wh", "dims": {"R": 8, "C": 64},
    "inputs": {"c": {"shape": [1, "C"], "dtype": "bool"}, "a": {"shape": ["R", "C"], "dtype": "f32"},
               "b": {"shape": ["R", "C"], "dtype": "f32"}},
    "graph": [{"op": "where", "inputs": ["c", "a", "b"], "output": "w"},
              {"op": "add_scalar", "inputs": ["w"], "value": 1.0, "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";

// where(c [R, C], a [C], b [R, C]): A broadcasts, the map runs over B and loads A.
constexpr const char* kWhereBroadcastASpec = R"({"name": "whb", "dims": {"R": 8, "C": 64},
    "inputs": {"c": {"shape": ["R", "C"], "dtype": "bool"}, "a": {"shape": ["C"], "dtype": "f32"},
               "b": {"shape": ["R", "C"], "dtype": "f32"}},
    "graph": [{"op": "where", "inputs": ["c", "a", "b"], "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";

Problem parse(const char* spec) {
    auto p = parse_problem(spec, "p.json");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

// Deterministic inputs: floats from a sine, bools from a pattern with both values.
TensorValues make_inputs(const Problem& p) {
    TensorValues in;
    for (const Tensor* t : p.graph_inputs()) {
        std::vector<double> v(size_t(t->numel()));
        for (size_t i = 0; i < v.size(); ++i)
            v[i] = t->dtype == DType::kBool ? double((i * 7 + i / 3) % 3 == 0)
                                            : 3.0 * std::sin(0.37 * double(i) + double(t->name[0]));
        in[t->name] = v;
    }
    return in;
}

dsl::Program seed(const Problem& p) {
    auto prog = planner::seed_program(p, dsl::device_limits(find_device("h200").value()));
    EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
    return prog.ok() ? *prog : dsl::Program{};
}

// The seed's one map kernel run on the host; returns output Y.
std::vector<float> run_on_host(const Problem& problem, const dsl::Program& prog,
                               const TensorValues& in, std::string& functor) {
    EXPECT_EQ(prog.kernels.size(), 1u) << dsl::print_canonical(prog);
    if (prog.kernels.size() != 1) return {};
    const dsl::Kernel& k = prog.kernels[0];
    EXPECT_EQ(k.kind, dsl::KernelKind::kMap);
    auto table = build_tensor_table(prog, problem);
    EXPECT_TRUE(table.ok());
    if (!table.ok()) return {};
    LowerContext ctx;
    ctx.problem = &problem;
    ctx.tensors = *table;
    const TensorInfo& y = table->at("Y");
    ChainSpace space{y.dim_names, y.shape};
    auto chain = emit_chain("Chain", k.chain, space, k.args[0], ctx);
    EXPECT_TRUE(chain.ok()) << (chain.ok() ? "" : chain.error().to_string());
    if (!chain.ok()) return {};
    functor = chain->definition;
    std::string ops = hostrun::read_text(fs::path(KFORGE_SOURCE_DIR) / "kernels" / "chain_ops.cuh");
    ops = hostrun::strip_includes(ops);
    // each input as an initialized vector of its dtype; the functor's pointers in params order
    std::ostringstream main_src;
    main_src << "int main(int, char** argv) {\n";
    for (const Tensor* t : problem.graph_inputs()) {
        main_src << "    std::vector<" << (t->dtype == DType::kBool ? "bool_t" : "float") << "> "
                 << "in_" << t->name << "{";
        for (double d : in.at(t->name)) main_src << (t->dtype == DType::kBool ? (d != 0 ? "1" : "0") : std::to_string(float(d)) + "f") << ",";
        main_src << "};\n";
    }
    const int64_t n = space.numel();
    main_src << "    std::vector<float> y(" << n << ", NAN);\n    Chain chain{";
    for (size_t i = 0; i < chain->params.size(); ++i) {
        const ChainParam& p = chain->params[i];
        main_src << (i ? ", " : "")
                 << (p.written ? std::string("y.data()")
                               : p.dtype == DType::kBool
                                     ? "reinterpret_cast<const bool*>(in_" + p.name + ".data())"
                                     : "in_" + p.name + ".data()");
    }
    main_src << "};\n    constexpr int V = 4;\n"
             << "    for (int64_t i = 0; i < " << n << "; i += V) {\n"
             << "        float s[Chain::kSlots][V];\n"
             << "        chain.load<V>(s, i);\n        chain.apply<V>(s, i);\n    }\n"
             << "    FILE* o = std::fopen(argv[1], \"wb\");\n"
             << "    return o && std::fwrite(y.data(), sizeof(float), " << n
             << ", o) == size_t(" << n << ") && !std::fclose(o) ? 0 : 3;\n}\n";
    const fs::path dir = fs::temp_directory_path() /
                         ("kforge_mask_host_" + problem.name + "_" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "run.cpp") << hostrun::kHostShim
                                   << "using bool_t = unsigned char;  // one byte, as bool\n"
                                   << ops << chain->definition << main_src.str();
    const hostrun::HostBuild build = hostrun::build_host_run(dir);
    EXPECT_EQ(build.status, 0) << build.log << "\n" << hostrun::read_text(dir / "run.cpp");
    const std::string run = (dir / "run").string() + " " + (dir / "y.bin").string();
    EXPECT_EQ(std::system(run.c_str()), 0);
    std::vector<float> result(static_cast<size_t>(n));
    std::ifstream yin(dir / "y.bin", std::ios::binary);
    yin.read(reinterpret_cast<char*>(result.data()), std::streamsize(result.size() * sizeof(float)));
    fs::remove_all(dir);
    return result;
}

void expect_seed_matches_interpreter(const char* spec, const std::string& chain_has) {
    const Problem problem = parse(spec);
    const dsl::Program prog = seed(problem);
    ASSERT_FALSE(prog.kernels.empty());
    const std::string text = dsl::print_canonical(prog);
    EXPECT_NE(text.find(chain_has), std::string::npos) << text;
    // the canonical text parses back to the same program
    auto again = dsl::parse_program(text, "seed.kf");
    ASSERT_TRUE(again.ok()) << again.error().to_string();
    EXPECT_EQ(dsl::print_canonical(*again), text);
    const TensorValues in = make_inputs(problem);
    auto ref = interpret(problem, in);
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();
    std::string functor;
    const std::vector<float> y = run_on_host(problem, prog, in, functor);
    const std::vector<double>& want = ref->at("Y");
    ASSERT_EQ(y.size(), want.size());
    int bad = 0;
    for (size_t i = 0; i < y.size(); ++i) {
        const bool same = (std::isinf(want[i]) && double(y[i]) == want[i]) ||
                          std::abs(double(y[i]) - want[i]) <= 1e-6 + 1e-6 * std::abs(want[i]);
        if (!same && bad++ < 5)
            ADD_FAILURE() << problem.name << " element " << i << ": program " << y[i]
                          << ", interpreter " << want[i] << "\n" << functor;
    }
    EXPECT_EQ(bad, 0);
    // and the lowered seed compiles for sm_90a (NVRTC, as the compile driver builds a map)
    auto lowered = lower_program(prog, problem, LowerOptions{});
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    auto rtc = compile::nvrtc_compile_cubin(lowered->cuda_source,
                                            compile::default_compile_options("sm_90a"));
    ASSERT_TRUE(rtc.ok()) << rtc.error().to_string() << "\n" << lowered->cuda_source;
}

TEST(MaskSelect, MaskedFillByABoolInputIsOneMapKernel) {
    expect_seed_matches_interpreter(kMaskedFillSpec, "masked_fill M[R,C] -1.5; relu; mul 2");
}

TEST(MaskSelect, MaskedFillWithABroadcastXRunsOverTheMask) {
    expect_seed_matches_interpreter(kMaskedFillBroadcastXSpec, "load x[C]; masked_fill M[R,C] -inf");
}

TEST(MaskSelect, WhereLoadsTheOtherBranch) {
    expect_seed_matches_interpreter(kWhereSpec, "let w0; load b[R,C]; masked_fill c[1,C] w0; add 1");
}

TEST(MaskSelect, WhereWithABroadcastBranch) {
    expect_seed_matches_interpreter(kWhereBroadcastASpec, "load a[C]; let w0; load b[R,C]; masked_fill c[R,C] w0");
}

std::vector<std::string> check_errors(const char* spec, const std::string& program) {
    const Problem problem = parse(spec);
    auto parsed = dsl::parse_program(program, "t.kf");
    EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().to_string());
    if (!parsed.ok()) return {};
    auto r = dsl::check_program(*parsed, problem, dsl::device_limits(find_device("h200").value()),
                                dsl::CheckOptions{"t.kf", program});
    std::vector<std::string> out;
    for (const auto& e : r.errors) out.push_back(e.to_string());
    return out;
}

TEST(MaskSelect, CheckerRefusesAFloatMask) {
    // the where spec's `a` is f32: it cannot be the mask
    const auto errors = check_errors(kWhereSpec, R"(program p for "wh"
kernel k0 = map(b[R,C]) { masked_fill a[R,C] 0; add 1; store Y[R,C] })");
    ASSERT_FALSE(errors.empty());
    EXPECT_NE(errors[0].find("the mask a is f32; it must be a bool tensor"), std::string::npos)
        << errors[0];
}

TEST(MaskSelect, CheckerRefusesTheWrongSelect) {
    // masked_fill c[..] a-value on a's map is where(c, a, a), not where(c, a, b)
    const auto errors = check_errors(kWhereSpec, R"(program p for "wh"
kernel k0 = map(a[R,C]) { let t; masked_fill c[1,C] t; add 1; store Y[R,C] })");
    EXPECT_FALSE(errors.empty());
}

TEST(MaskSelect, ParserWantsAMaskThenAnOperand) {
    auto p = dsl::parse_program(R"(program p for "wh"
kernel k0 = map(a[R,C]) { masked_fill 1.5; store Y[R,C] })", "t.kf");
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().to_string().find("masked_fill: a bool mask tensor"), std::string::npos)
        << p.error().to_string();
}

}  // namespace
}  // namespace kforge::codegen
