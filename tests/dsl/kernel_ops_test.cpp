// Which graph ops each kernel computes (dsl/kernel_ops.h), on suite programs and on variants
// that store a private intermediate or recompute a value.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "dsl/kernel_ops.h"
#include "dsl/parser.h"
#include "problem/spec.h"

namespace kforge::dsl {
namespace {

Problem suite_problem(const std::string& name) {
    auto p = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".json");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

Program program(const std::string& text) {
    auto p = parse_program(text, "<test>");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Program{};
}

std::string suite_program(const std::string& name) {
    std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".kf");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(KernelOps, SwiglusTwoGemmsSplitTheGraphAtTheirStores) {
    // G = linear(X, W1); A = silu(G); U = linear(X, W3); Y = A * U
    Problem p = suite_problem("swiglu_bf16");
    std::vector<KernelOps> k = kernel_ops(program(suite_program("swiglu_bf16")), p);
    ASSERT_EQ(k.size(), 2u);
    EXPECT_EQ(k[0].kernel, "k0");
    EXPECT_EQ(k[0].kind, KernelKind::kGemm);
    EXPECT_EQ(k[0].ops, (std::vector<size_t>{0, 1}));
    EXPECT_EQ(k[0].stores, (std::vector<std::string>{"A"}));
    EXPECT_EQ(k[1].ops, (std::vector<size_t>{2, 3}));  // A was stored by k0: not walked
    EXPECT_EQ(k[1].stores, (std::vector<std::string>{"Y"}));
}

TEST(KernelOps, AKernelThatRecomputesAValueHoldsItsOps) {
    // C = A @ B, Y = sum(C): a program storing only Y puts both ops in its one kernel...
    Problem p = suite_problem("matmul_rowsum_f32");
    std::vector<KernelOps> k = kernel_ops(program(suite_program("matmul_rowsum_f32")), p);
    ASSERT_EQ(k.size(), 2u);
    EXPECT_EQ(k[0].ops, (std::vector<size_t>{0}));
    EXPECT_EQ(k[1].ops, (std::vector<size_t>{1}));
    // ...and a kernel storing a tensor the problem does not name holds none: the kernel that
    // reads it gets the ops behind its store
    Problem q = suite_problem("swiglu_bf16");
    std::string text = suite_program("swiglu_bf16");
    for (std::string from : {"store A[M,N]", "mul A[M,N]"}) {
        std::string to = from;
        to.replace(to.find("A[M,N]"), 1, "P");
        text.replace(text.find(from), from.size(), to);
    }
    std::vector<KernelOps> r = kernel_ops(program(text), q);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_TRUE(r[0].ops.empty());
    EXPECT_TRUE(r[0].stores.empty());
    EXPECT_EQ(r[1].ops, (std::vector<size_t>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace kforge::dsl
