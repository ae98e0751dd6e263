// The sm90 tf32 lowering of an N-major B as Y^T = B^T A^T (codegen/gemm_transpose.h): operand
// roles, layouts and strides, the problem shape the builder hands CUTLASS, tile/cluster/raster
// following the output's dims, broadcasts exchanging row and column roles, and what stays
// unswapped. Text only: the CUTLASS compile is bench/kernels/tf32_check.sh's job on a GPU.
#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "tests/codegen/gemm_fixtures.h"

namespace kforge::codegen {
namespace {

using namespace gemm_testing;
using K = dsl::ChainOpKind;

// The transposed lowering is reached only with staging of MN-major tf32 operands off (the
// default stages them K-major: codegen/gemm_stage.h, tests/codegen/gemm_stage_test.cpp).
LowerOptions transposed_lowering() {
    LowerOptions o;
    o.tf32_stage_mn_major = false;
    return o;
}

Lowered lower_ok(const dsl::Program& program, const Problem& problem) {
    auto out = lower_program(program, problem, transposed_lowering());
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
    return out.ok() ? *out : Lowered{};
}

void expect_has(const std::string& source, const std::string& text) {
    EXPECT_NE(source.find(text), std::string::npos) << "missing: " << text;
}

void expect_lacks(const std::string& source, const std::string& text) {
    EXPECT_EQ(source.find(text), std::string::npos) << "unexpected: " << text;
}

TEST(GemmTranspose, NMajorBSwapsOperandsAndStoresColumnMajor) {
    Lowered out = lower_ok(program_tf32_nn({}), problem_tf32_nn_bias());
    const std::string& s = out.cuda_source;
    // The kernel's A is B^T (M-major: ColumnMajor), its B is A^T (K-major: ColumnMajor).
    expect_has(s, "using ElementA = float;\nusing LayoutA = cutlass::layout::ColumnMajor;\n");
    expect_has(s, "using ElementB = float;\nusing LayoutB = cutlass::layout::ColumnMajor;\n");
    expect_has(s, "using LayoutC = cutlass::layout::ColumnMajor;\n"
                  "using LayoutD = cutlass::layout::ColumnMajor;\n");
    expect_has(s, "// computed as Y^T = B^T A^T");
    expect_has(s, "problem shape (N, M, K)");
    // Tile 128x256 and cluster 2x1 of Y are 256x128 and 1x2 of Y^T; along_n is along its M.
    expect_has(s, "using TileShape = Shape<_256, _128, _32>;\n");
    expect_has(s, "using ClusterShape = Shape<_1, _2, _1>;\n");
    expect_has(s, "args.scheduler.raster_order = Raster::AlongM;\n");
    // Dims are sorted K, M, N: the kernel's M is the problem's N and vice versa.
    expect_has(s, "        K = in->dims[0];\n        N = in->dims[1];\n        M = in->dims[2];\n");
    expect_has(s, "{int(M), int(N), int(K), int(L)}");
    // Packed strides over the kernel's extents; tensors[0] is B, tensors[1] is A.
    expect_has(s, "make_cute_packed_stride(StrideA{}, cute::make_shape(int(M), int(K), int(L)))");
    expect_has(s, "make_cute_packed_stride(StrideD{}, cute::make_shape(int(M), int(N), int(L)))");
    expect_has(s, "{static_cast<const ElementA*>(tensors[0]), stride_a,\n"
                  "         static_cast<const ElementB*>(tensors[1]), stride_b}");
    ASSERT_EQ(out.plan.kernels.size(), 1u);
    const KernelLaunch& k = out.plan.kernels[0];
    EXPECT_EQ(k.builder_tensors, (std::vector<std::string>{"B", "A", "Y"}));
    EXPECT_EQ(k.cluster, (std::array<unsigned, 3>{1, 2, 1}));
}

TEST(GemmTranspose, BroadcastsExchangeRowAndColumnRoles) {
    Lowered out = lower_ok(program_tf32_nn({chain_tensor(K::kAdd, "b", {"N"}),
                                            chain_tensor(K::kSub, "c", {"M", "1"}),
                                            chain_tensor(K::kAdd, "R", {"M", "N"})}),
                           problem_tf32_nn_bias());
    const std::string& s = out.cuda_source;
    // b[N] runs along the kernel's M: a column broadcast reading tensors[3] (B, A, Y, b, c, R).
    expect_has(s, "Sm90ColBroadcast<0, TileShape, float, ElementCompute, Stride<_1, _0, int64_t>>");
    expect_has(s, "{static_cast<const float*>(tensors[3]), float(0), {_1{}, _0{}, int64_t(0)}}");
    // c[M,1] runs along the kernel's N: a row broadcast reading tensors[4].
    expect_has(s, "Sm90RowBroadcast<0, TileShape, float, ElementCompute, Stride<_0, _1, int64_t>>");
    expect_has(s, "{static_cast<const float*>(tensors[4]), float(0), {_0{}, _1{}, int64_t(0)}}");
    // The residual R is the collective's C, column-major like D, one for all batches.
    expect_has(s, "using ElementC = float;\n");
    expect_has(s, "using LayoutC = cutlass::layout::ColumnMajor;\n");
    expect_has(s, "static_cast<const ElementC*>(tensors[5])");
    expect_has(s, "make_cute_packed_stride(StrideC{}, cute::make_shape(int(M), int(N), int(L)))");
    EXPECT_EQ(out.plan.kernels.at(0).builder_tensors,
              (std::vector<std::string>{"B", "A", "Y", "b", "c", "R"}));
}

TEST(GemmTranspose, KMajorBAndMMajorAStayUnswapped) {
    Problem problem = problem_tf32_nn_bias();
    // B as [N,K] (K-major): the plain SS path.
    dsl::Program p = program_tf32_nn({});
    relayout_operand(problem, p, 1, {"N", "K"}, {2048, 512});
    Lowered out = lower_ok(p, problem);
    expect_has(out.cuda_source, "using LayoutA = cutlass::layout::RowMajor;\n");
    expect_has(out.cuda_source, "using LayoutD = cutlass::layout::RowMajor;\n");
    expect_has(out.cuda_source, "using TileShape = Shape<_128, _256, _32>;\n");
    expect_lacks(out.cuda_source, "computed as");
    // A as [K,M] (M-major) with that B: CUTLASS's register-sourced mainloop takes it as is.
    relayout_operand(problem, p, 0, {"K", "M"}, {512, 1024});
    out = lower_ok(p, problem);
    expect_has(out.cuda_source, "using LayoutA = cutlass::layout::ColumnMajor;\n");
    expect_has(out.cuda_source, "using LayoutB = cutlass::layout::ColumnMajor;\n");
    expect_has(out.cuda_source, "using LayoutD = cutlass::layout::RowMajor;\n");
    expect_lacks(out.cuda_source, "computed as");
    EXPECT_EQ(out.plan.kernels.at(0).builder_tensors, (std::vector<std::string>{"A", "B", "Y"}));
}

TEST(GemmTranspose, MultistageKeepsTheOriginalProblem) {
    dsl::Program p = program_tf32_nn({chain_tensor(K::kAdd, "b", {"N"})});
    p.kernels[0].gemm.schedule = dsl::Schedule::kMultistage;
    p.kernels[0].gemm.cluster_m = 1;
    Lowered out = lower_ok(p, problem_tf32_nn_bias());
    expect_has(out.cuda_source, "using LayoutB = cutlass::layout::RowMajor;\n");
    expect_lacks(out.cuda_source, "computed as");
    EXPECT_EQ(out.plan.kernels.at(0).builder_tensors,
              (std::vector<std::string>{"A", "B", "Y", "b"}));
}

TEST(GemmTransposeError, BothOperandsMnMajorAreRefused) {
    Problem problem = problem_tf32_nn_bias();
    dsl::Program p = program_tf32_nn({});
    relayout_operand(problem, p, 0, {"K", "M"}, {512, 1024});
    auto out = lower_program(p, problem, transposed_lowering());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().where, "k0");
    EXPECT_NE(out.error().message.find("both operands MN-major"), std::string::npos)
        << out.error().to_string();
}

TEST(GemmTransposeError, AlignmentNamesTheProblemsDims) {
    Problem problem = problem_tf32_nn_bias();
    problem.dims["N"] = 2046;  // 8184 bytes per row of B, Y and R: not a multiple of 16
    for (auto& t : problem.tensors)
        for (size_t i = 0; i < t.dim_names.size(); ++i)
            if (t.dim_names[i] == "N") t.shape[i] = 2046;
    auto out = lower_program(program_tf32_nn({}), problem, transposed_lowering());
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.error().message.find("tensor B: its contiguous dim (2046 elements)"),
              std::string::npos) << out.error().to_string();
}

}  // namespace
}  // namespace kforge::codegen
