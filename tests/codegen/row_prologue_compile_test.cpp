// Integration: row reductions with an element-wise prologue (`pre { .. }`: tensor operands
// contiguous along the row, broadcast per row, scalars, named values) in each dtype and several
// knob settings lower to CUDA that nvcc compiles for sm_90a with no register spills, and that
// NVRTC accepts too (the compile driver tries it first).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "compile/nvrtc_compile.h"
#include "tests/codegen/rowwise_fixtures.h"

namespace kforge::codegen {
namespace {

using namespace testing;
using K = dsl::ChainOpKind;
using R = dsl::RowOp;

TEST(RowPrologueCompile, ReductionsWithProloguesCompileWithoutSpills) {
    struct Case {
        R op;
        DType dt;
        int threads, rpb, vec;
        int64_t rows, n;
    };
    const std::vector<Case> cases = {
        {R::kSum, DType::kF32, 512, 1, 4, 2048, 65536},   // matvec
        {R::kSum, DType::kF32, 256, 8, 4, 4096, 1024},
        {R::kMean, DType::kBF16, 256, 1, 8, 128, 4096},   // mse
        {R::kMax, DType::kF16, 128, 4, 2, 1000, 36},
        {R::kMin, DType::kF32, 1024, 1, 4, 16, 1 << 20},
    };
    std::string source;
    size_t entries = 0;
    int id = 0;
    for (const Case& c : cases) {
        Tensors t;
        t.add("X", {"R", "C"}, {c.rows, c.n}, c.dt).add("T", {"R", "C"}, {c.rows, c.n}, c.dt);
        t.add("v", {"C", "1"}, {c.n, 1}).add("s", {"R"}, {c.rows}).add("Y", {"R"}, {c.rows});
        const std::string name = "pre_" + std::to_string(id++);
        dsl::Kernel k = rowwise(name, c.op, {ref("X", {"R", "C"})}, {op(K::kSqrt), store("Y", {"R"})});
        if (id == 1) {
            k.pre = {with(K::kMul, "v", {"C", "1"})};
        } else {
            dsl::ChainOp let_d = op(K::kLet);
            let_d.name = "d";
            dsl::ChainOp add_d = op(K::kAdd);
            add_d.name = "d";
            k.pre = {with(K::kSub, "T", {"R", "C"}), let_d, op(K::kAbs), op(K::kRsub, {1.0}),
                     op(K::kMax, {0.0}), add_d, with(K::kMul, "v", {"C", "1"}),
                     with(K::kDiv, "s", {"R"}), op(K::kSquare)};
        }
        k.rowwise.threads = c.threads;
        k.rowwise.rows_per_block = c.rpb;
        k.rowwise.vec = c.vec;
        if (c.n > 8192) k.rowwise.passes = 2;
        auto code = lower_rowwise(k, t.ctx);
        ASSERT_TRUE(code.ok()) << name << ": " << code.error().to_string();
        source += code->device_source;
        entries += code->launches.size();
    }
    const auto dir = std::filesystem::temp_directory_path() / "kforge_row_prologue_compile";
    std::filesystem::create_directories(dir);
    const auto cu = dir / "row_prologue.cu";
    std::ofstream(cu) << source;
    const std::string cmd = std::string(KFORGE_NVCC) +
                            " -std=c++17 -cubin -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
                            " -I" KFORGE_SOURCE_DIR " -o " + (dir / "row_prologue.cubin").string() +
                            " " + cu.string() + " 2>&1";
    std::string output;
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::array<char, 4096> buf;
    while (fgets(buf.data(), buf.size(), p)) output += buf.data();
    ASSERT_EQ(pclose(p), 0) << output;
    auto rtc = compile::nvrtc_compile_cubin(source, compile::default_compile_options("sm_90a"));
    EXPECT_TRUE(rtc.ok()) << (rtc.ok() ? "" : rtc.error().to_string());
    const std::regex spill(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
    size_t n = 0;
    for (auto it = std::sregex_iterator(output.begin(), output.end(), spill);
         it != std::sregex_iterator(); ++it, ++n) {
        EXPECT_EQ((*it)[1], "0") << output;
        EXPECT_EQ((*it)[2], "0") << output;
    }
    EXPECT_EQ(n, entries) << output;
}

}  // namespace
}  // namespace kforge::codegen
