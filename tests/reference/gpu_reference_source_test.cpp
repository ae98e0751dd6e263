// The GPU reference's generated source (reference/gpu_reference.h), device-free: it compiles with
// NVRTC (which needs no GPU) for every suite problem at its full shape and for a spec of every
// op of the op set; launches follow the graph and respect the grid limits; literals are exact.
#include <gtest/gtest.h>

#include <set>

#include "compile/nvrtc_compile.h"
#include "reference/gpu_reference.h"
#include "index_specs.h"
#include "reference_specs.h"

namespace kforge::eval {
namespace {

using testing::every_op_specs;
using testing::suite_problem_files;

// Compiles the reference source of `p` for `arch`; the NVRTC log on failure.
::testing::AssertionResult compiles(const Problem& p, const std::string& arch = "sm_90") {
    auto program = generate_reference_program(p);
    if (!program)
        return ::testing::AssertionFailure() << p.name << ": " << program.error().to_string();
    compile::CompileOptions options;
    options.arch = arch;
    auto built = compile::nvrtc_compile_cubin(program->source, options);
    if (!built)
        return ::testing::AssertionFailure() << p.name << ": " << built.error().to_string();
    if (built->cubin.empty()) return ::testing::AssertionFailure() << p.name << ": empty cubin";
    return ::testing::AssertionSuccess();
}

void expect_launches_follow_the_graph(const Problem& p) {
    auto program = generate_reference_program(p);
    ASSERT_TRUE(program.ok()) << program.error().to_string();
    ASSERT_EQ(program->launches.size(), p.ops.size()) << p.name;
    int64_t bytes = 0;
    for (const Tensor& t : p.tensors) bytes += t.numel() * 8;
    EXPECT_EQ(program->buffer_bytes, bytes);
    for (size_t i = 0; i < p.ops.size(); ++i) {
        const ReferenceLaunch& l = program->launches[i];
        std::vector<std::string> expected = p.ops[i].inputs;
        expected.push_back(p.ops[i].output);
        EXPECT_EQ(l.tensors, expected) << p.name << " op " << i;
        EXPECT_NE(program->source.find("void __launch_bounds__(256) " + l.symbol + "("),
                  std::string::npos);
        EXPECT_EQ(l.block[0], 256u);
        EXPECT_GE(l.grid[0], 1u);
        EXPECT_GE(l.grid[1], 1u);
        EXPECT_GE(l.grid[2], 1u);
        EXPECT_LE(l.grid[1], 65535u);
        EXPECT_LE(l.grid[2], 65535u);
    }
}

// every_op_specs() and the index and mask ops' (index_specs.h)
std::vector<testing::NamedSpec> all_op_specs() {
    std::vector<testing::NamedSpec> specs = every_op_specs();
    for (const auto& spec : testing::index_op_specs()) specs.push_back(spec);
    return specs;
}

TEST(GpuReferenceSource, TheOpSpecsCoverEveryOp) {
    std::set<std::string> covered;
    for (const auto& spec : all_op_specs()) {
        auto p = parse_problem(spec.json, spec.name);
        ASSERT_TRUE(p.ok()) << spec.name << ": " << p.error().to_string();
        for (const Op& op : p->ops) covered.insert(std::string(to_string(op.kind)));
    }
    for (std::string_view name : all_op_names())
        EXPECT_TRUE(covered.count(std::string(name))) << "no reference spec covers op " << name;
}

TEST(GpuReferenceSource, EveryOpCompilesWithNvrtc) {
    for (const auto& spec : all_op_specs()) {
        auto p = parse_problem(spec.json, spec.name);
        ASSERT_TRUE(p.ok()) << spec.name << ": " << p.error().to_string();
        EXPECT_TRUE(compiles(*p)) << spec.name;
        expect_launches_follow_the_graph(*p);
    }
}

TEST(GpuReferenceSource, EverySuiteProblemCompilesWithNvrtcAtItsFullShape) {
    std::vector<std::string> files = suite_problem_files();
    ASSERT_GE(files.size(), 30u);
    for (const std::string& file : files) {
        auto p = load_problem(file);
        ASSERT_TRUE(p.ok()) << file << ": " << p.error().to_string();
        EXPECT_TRUE(compiles(*p)) << file;
        expect_launches_follow_the_graph(*p);
    }
}

// The GPU test (gpu_reference_gpu_test.cpp) interprets every suite problem at such a shape.
TEST(GpuReferenceSource, EverySuiteProblemHasAnInterpretableShape) {
    for (const std::string& file : suite_problem_files()) {
        auto p = load_problem(file);
        ASSERT_TRUE(p.ok()) << file;
        auto small = testing::interpretable_shape(*p);
        EXPECT_TRUE(small.ok()) << file << ": " << small.error().to_string();
    }
}

TEST(GpuReferenceSource, CompilesForAmpereToo) {
    auto p = parse_problem(every_op_specs().back().json, "chain");
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE(compiles(*p, "sm_80"));
}

TEST(GpuReferenceSource, AttributesAreBakedInExactly) {
    auto scale = parse_problem(testing::unary_spec("s", "scale", R"("value": 0.1)").json, "s");
    ASSERT_TRUE(scale.ok());
    auto program = generate_reference_program(*scale);
    ASSERT_TRUE(program.ok());
    EXPECT_NE(program->source.find("v * (0x1.999999999999ap-4)"), std::string::npos)
        << program->source.substr(gpu_reference_library().size());
    // a clamp without max keeps the interpreter's attribute, whatever it is, bit for bit
    auto clamp = parse_problem(testing::unary_spec("c", "clamp", R"("min": -0.1)").json, "c");
    ASSERT_TRUE(clamp.ok());
    program = generate_reference_program(*clamp);
    ASSERT_TRUE(program.ok());
    EXPECT_NE(program->source.find("ref_clamp(v, (-0x1.999999999999ap-4), "), std::string::npos);
}

TEST(GpuReferenceSource, LongContiguousRowsTakeABlockAndShortStridedRowsAThread) {
    auto rows = [](const std::string& name) {
        for (const auto& s : every_op_specs())
            if (s.name == name) {
                auto p = parse_problem(s.json, name);
                EXPECT_TRUE(p.ok());
                auto program = generate_reference_program(*p);
                EXPECT_TRUE(program.ok());
                return program->source.substr(gpu_reference_library().size());
            }
        ADD_FAILURE() << name;
        return std::string();
    };
    EXPECT_NE(rows("sum_last").find("ref_reduce_row_block<REF_SUM>"), std::string::npos);
    EXPECT_NE(rows("sum_first").find("ref_reduce_row_serial<REF_SUM>"), std::string::npos);
    EXPECT_NE(rows("softmax_long_strided").find("ref_reduce_row_block<REF_SOFTMAX>"),
              std::string::npos);
}

}  // namespace
}  // namespace kforge::eval
