// The sm90 gemm epilogue of the problem suite's fused programs (problems/*.kf): activations
// lower to kernels/act_approx.cuh (no libdevice erff, no IEEE division with its CALL slow path
// in the epilogue), and a fused program differs from its plain-store twin
// (bench/kernels/epilogue_cost/make_plain.py) only in the EVT: same schedule, epilogue tile,
// stages and mainloop, so the fused kernel's extra time is the chain's own work (issue 4).
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "problem/spec.h"

namespace kforge::codegen {
namespace {

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string suite_dir() { return std::string(KFORGE_TEST_DATA_DIR) + "/../../problems/"; }

// Parses, checks (h200 limits) and lowers `program_text` for the problem at `problem_path`.
Expected<Lowered> lower_text(const std::string& problem_path, const std::string& program_text) {
    auto problem = load_problem(problem_path);
    if (!problem) return problem.error();
    auto program = dsl::parse_program(program_text, "t.kf");
    if (!program) return program.error();
    auto checked = dsl::check_program(*program, *problem, dsl::DeviceLimits{});
    if (!checked.ok()) return checked.errors.front();
    return lower_program(*program, *problem, LowerOptions{});
}

Expected<Lowered> lower_suite(const std::string& stem) {
    return lower_text(suite_dir() + stem + ".json", read_text(suite_dir() + stem + ".kf"));
}

TEST(GemmEpilogueAct, GeluErfUsesTheSfuForm) {
    auto out = lower_suite("linear_bias_gelu_erf_fp16");
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    const std::string& s = out->cuda_source;
    EXPECT_TRUE(has(s, "#include \"kernels/act_approx.cuh\"")) << s;
    EXPECT_TRUE(has(s, "return kforge::act_gelu_erf_as28(x);")) << s;
    EXPECT_FALSE(has(s, "thread::GELU,")) << s;  // CUTLASS's GELU: libdevice erff
    EXPECT_FALSE(has(s, "erff")) << s;
}

TEST(GemmEpilogueAct, GeluTanhKeepsCutlassTaylorForm) {
    auto out = lower_suite("linear_bias_gelu_tanh_bf16");
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    EXPECT_TRUE(has(out->cuda_source, "thread::GELU_taylor")) << out->cuda_source;
}

TEST(GemmEpilogueAct, SigmoidAndSiluHaveNoDivision) {
    auto sig = lower_suite("linear_bias_sigmoid_f32");
    ASSERT_TRUE(sig.ok()) << sig.error().to_string();
    EXPECT_TRUE(has(sig->cuda_source, "return kforge::act_sigmoid_ex2_rcp(x);")) << sig->cuda_source;
    EXPECT_FALSE(has(sig->cuda_source, "expf(")) << sig->cuda_source;
    auto swiglu = lower_suite("swiglu_bf16");
    ASSERT_TRUE(swiglu.ok()) << swiglu.error().to_string();
    EXPECT_TRUE(has(swiglu->cuda_source, "return kforge::act_silu_ex2_rcp(x);"))
        << swiglu->cuda_source;
    EXPECT_FALSE(has(swiglu->cuda_source, "thread::SiLu")) << swiglu->cuda_source;
}

// The kernel's types with the EVT taken out: lower_gemm emits the EVT definitions between
// `using TileScheduler` and `using CollectiveEpilogue`.
std::string types_without_evt(const std::string& source) {
    const size_t begin = source.find("namespace kforge_gemm_k0 {");
    const size_t evt = source.find("\n", source.find("using TileScheduler", begin));
    const size_t epi = source.find("using CollectiveEpilogue", begin);
    const size_t end = source.find("}  // namespace kforge_gemm_k0");
    if (begin == std::string::npos || evt == std::string::npos || epi == std::string::npos ||
        end == std::string::npos || !(begin < evt && evt < epi && epi < end)) {
        ADD_FAILURE() << "unexpected layout of the gemm types:\n" << source;
        return "";
    }
    return source.substr(begin, evt - begin) + source.substr(epi, end - epi);
}

TEST(GemmEpilogueAct, FusedAndPlainTwinShareEveryKnobButTheEvt) {
    for (const char* stem : {"linear_bias_gelu_erf_fp16", "linear_bias_sigmoid_f32"}) {
        auto fused = lower_suite(stem);
        ASSERT_TRUE(fused.ok()) << stem << ": " << fused.error().to_string();
        // The twin as make_plain.py writes it: the matmul alone, same knobs, cast + store.
        const std::string kf = read_text(suite_dir() + stem + ".kf");
        const size_t open = kf.find('{');
        ASSERT_NE(open, std::string::npos);
        const bool half = has(kf, "cast f16");
        std::string twin_kf = kf.substr(0, open) + (half ? "{ cast f16; store Y[M,N] }\n"
                                                        : "{ store Y[M,N] }\n");
        // problem: drop b and the epilogue ops, Y = X @ W^T
        const std::string dtype = half ? "f16" : "f32";
        const std::string plain_json =
            std::string(R"({"name": ")") + stem + R"(", "dims": )" +
            (half ? R"({"M": 8192, "N": 12288, "K": 3072})" : R"({"M": 4096, "N": 4096, "K": 2048})") +
            R"(, "inputs": {"X": {"shape": ["M", "K"], "dtype": ")" + dtype +
            R"("}, "W": {"shape": ["N", "K"], "dtype": ")" + dtype +
            R"(", "param": true}}, "graph": [{"op": "matmul", "inputs": ["X", "W"], "output": "Y",
            "transpose_b": true}], "outputs": ["Y"], "precision": {"policy": ")" +
            (half ? "fp16" : "fp32_strict") + R"("}})";
        const std::string path = ::testing::TempDir() + "/" + stem + "_plain.json";
        std::ofstream(path) << plain_json;
        auto plain = lower_text(path, twin_kf);
        ASSERT_TRUE(plain.ok()) << stem << ": " << plain.error().to_string();
        const std::string f = types_without_evt(fused->cuda_source);
        const std::string p = types_without_evt(plain->cuda_source);
        EXPECT_TRUE(has(f, "using CollectiveEpilogue")) << f;
        EXPECT_EQ(f, p) << stem;
    }
}

}  // namespace
}  // namespace kforge::codegen
