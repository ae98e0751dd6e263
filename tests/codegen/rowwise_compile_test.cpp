// Integration: every row op (several knob settings and dtypes) and map chains with every
// element-wise statement lower to CUDA that nvcc compiles for sm_90a with no register spills.
// One translation unit per group keeps this to a few nvcc runs.
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

struct NvccResult {
    int status = -1;
    std::string output;
};

NvccResult run_nvcc(const std::string& name, const std::string& source) {
    const auto dir = std::filesystem::temp_directory_path() / "kforge_rowwise_compile";
    std::filesystem::create_directories(dir);
    const auto cu = dir / (name + ".cu");
    std::ofstream(cu) << source;
    const std::string cmd = std::string(KFORGE_NVCC) +
                            " -std=c++17 -cubin -gencode=arch=compute_90a,code=sm_90a -Xptxas -v"
                            " -I" KFORGE_SOURCE_DIR " -o " + (dir / (name + ".cubin")).string() +
                            " " + cu.string() + " 2>&1";
    NvccResult r;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    std::array<char, 4096> buf;
    while (fgets(buf.data(), buf.size(), p)) r.output += buf.data();
    r.status = pclose(p);
    return r;
}

// Compiles, then checks every entry function reports 0 spill stores and loads.
void expect_compiles_without_spills(const std::string& name, const std::string& source,
                                    size_t entries) {
    const NvccResult r = run_nvcc(name, source);
    ASSERT_EQ(r.status, 0) << r.output;
    // The compile driver tries NVRTC first for these sources (no CUTLASS, no host code): it must
    // accept them too, or every row-wise candidate pays an nvcc process.
    auto rtc = compile::nvrtc_compile_cubin(source, compile::default_compile_options("sm_90a"));
    EXPECT_TRUE(rtc.ok()) << (rtc.ok() ? "" : rtc.error().to_string());
    const std::regex spill(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
    const std::regex regs(R"(Compiling entry function '(\w+)'[\s\S]*?Used (\d+) registers)");
    size_t n = 0;
    for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), spill);
         it != std::sregex_iterator(); ++it, ++n) {
        EXPECT_EQ((*it)[1], "0") << r.output;
        EXPECT_EQ((*it)[2], "0") << r.output;
    }
    EXPECT_EQ(n, entries) << r.output;
    for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), regs);
         it != std::sregex_iterator(); ++it) {
        std::printf("  %-28s %s registers\n", (*it)[1].str().c_str(), (*it)[2].str().c_str());
    }
}

struct Knobs {
    int threads = 256, rpb = 1, vec = 4, passes = 1, split = 1;
    bool online = false;
};

TEST(RowwiseCompile, EveryRowOp) {
    const std::vector<std::pair<R, const char*>> ops = {
        {R::kSoftmax, "softmax"}, {R::kLogSoftmax, "log_softmax"}, {R::kLogsumexp, "logsumexp"},
        {R::kLayerNorm, "layer_norm"}, {R::kRmsNorm, "rms_norm"}, {R::kGroupNorm, "group_norm"},
        {R::kSum, "sum"}, {R::kMean, "mean"}, {R::kMax, "max"}, {R::kMin, "min"},
        {R::kProd, "prod"}, {R::kL1Normalize, "l1_normalize"}, {R::kL2Normalize, "l2_normalize"}};
    const std::vector<Knobs> knobs = {{256, 1, 4, 1, 1, false}, {1024, 1, 8, 2, 1, true},
                                      {256, 8, 4, 1, 1, false}, {512, 1, 4, 1, 4, true}};
    const std::vector<DType> dtypes = {DType::kF32, DType::kBF16, DType::kF16};
    std::string source;
    size_t entries = 0;
    int id = 0;
    for (const auto& [row_op, op_name] : ops) {
        for (size_t kn = 0; kn < knobs.size(); ++kn) {
            const DType dt = dtypes[(id++) % dtypes.size()];
            const bool reduces = row_op == R::kLogsumexp || row_op == R::kSum ||
                                 row_op == R::kMean || row_op == R::kMax || row_op == R::kMin ||
                                 row_op == R::kProd;
            Tensors t;
            t.add("X", {"N", "C", "L"}, {16, 32, 128}, dt).add("w", {"C"}, {32}).add("b", {"C"}, {32});
            t.add("wl", {"L"}, {128}, DType::kBF16).add("bl", {"L"}, {128});
            t.add("Y", {"N", "C", "L"}, {16, 32, 128}, dt).add("Yr", {"N", "C"}, {16, 32}, dt);
            std::vector<dsl::TensorRef> args = {ref("X", {"N", "C", "L"})};
            if (row_op == R::kGroupNorm) args.push_back(ref("w", {"C"})), args.push_back(ref("b", {"C"}));
            if (row_op == R::kLayerNorm) args.push_back(ref("wl", {"L"})), args.push_back(ref("bl", {"L"}));
            if (row_op == R::kRmsNorm) args.push_back(ref("wl", {"L"}));
            dsl::Kernel k = rowwise(std::string(op_name) + "_" + std::to_string(kn), row_op, args,
                                    {op(K::kMul, {2.0}), op(K::kSilu),
                                     reduces ? store("Yr", {"N", "C"}) : store("Y", {"N", "C", "L"})});
            k.rowwise = {knobs[kn].rpb, knobs[kn].threads, knobs[kn].vec, knobs[kn].passes,
                         knobs[kn].online, knobs[kn].split};
            if (row_op == R::kGroupNorm) k.groups = 4;
            auto code = lower_rowwise(k, t.ctx);
            ASSERT_TRUE(code.ok()) << op_name << " " << kn << ": " << code.error().to_string();
            source += code->device_source;
            entries += code->launches.size();
        }
    }
    // Column reductions over a leading dim, one slice and several.
    for (R row_op : {R::kSum, R::kMean, R::kMax, R::kMin, R::kProd}) {
        for (int64_t rlen : {64, 65536}) {
            Tensors t;
            t.add("X", {"A", "B"}, {rlen, 512}, DType::kBF16).add("Y", {"B"}, {512});
            dsl::Kernel k = rowwise("col_" + std::to_string(int(row_op)) + "_" + std::to_string(rlen),
                                    row_op, {ref("X", {"A", "B"})}, {store("Y", {"B"})});
            k.over = "A";
            auto code = lower_rowwise(k, t.ctx);
            ASSERT_TRUE(code.ok()) << code.error().to_string();
            source += code->device_source;
            entries += code->launches.size();
        }
    }
    // Reductions over a set of dims (kernels/reduce_set.cuh): BatchNorm's N, H, W of
    // [N, C, H, W] in one slice and several (with the finish launch), a prologue, a kept last
    // dim (scalar run), three alternating groups.
    for (R row_op : {R::kSum, R::kMean, R::kMax, R::kMin}) {
        for (int64_t n : {2, 64}) {
            Tensors t;
            t.add("X", {"N", "C", "H", "W"}, {n, 256, 28, 28}, DType::kBF16)
                .add("m", {"C"}, {256})
                .add("Y", {"C"}, {256});
            const std::string name = "set_" + std::to_string(int(row_op)) + "_" + std::to_string(n);
            dsl::Kernel k = rowwise(name, row_op, {ref("X", {"N", "C", "H", "W"})}, {store("Y", {"C"})});
            k.over = "N,H,W";
            if (n == 64) k.pre = {with(K::kSub, "m", {"C"}), op(K::kSquare)};
            if (n == 2) k.rowwise.threads = 512;  // the planner's block for a one-block output
            auto code = lower_rowwise(k, t.ctx);
            ASSERT_TRUE(code.ok()) << code.error().to_string();
            source += code->device_source;
            entries += code->launches.size();
        }
    }
    {
        Tensors t;
        t.add("X", {"A", "B", "C", "D", "E"}, {4, 6, 8, 10, 12}).add("Y", {"B", "D"}, {6, 10});
        t.add("Z", {"B", "E"}, {6, 12});
        dsl::Kernel k = rowwise("set_groups", R::kMean, {ref("X", {"A", "B", "C", "D", "E"})},
                                {store("Y", {"B", "D"})});
        k.over = "A,C,E";
        auto code = lower_rowwise(k, t.ctx);
        ASSERT_TRUE(code.ok()) << code.error().to_string();
        source += code->device_source;
        entries += code->launches.size();
        dsl::Kernel kept_last = rowwise("set_kept_last", R::kSum,
                                        {ref("X", {"A", "B", "C", "D", "E"})}, {store("Z", {"B", "E"})});
        kept_last.over = "A,C,D";
        code = lower_rowwise(kept_last, t.ctx);
        ASSERT_TRUE(code.ok()) << code.error().to_string();
        source += code->device_source;
        entries += code->launches.size();
    }
    expect_compiles_without_spills("rowwise_all", source, entries);
}

// cumsum / cumprod (kernels/scan.cuh, cub's block and warp scans): whole-block rows at the
// KernelBench shapes and warp-or-smaller row groups, both directions and both flags, each dtype.
TEST(RowwiseCompile, Scans) {
    struct Case {
        R op;
        DType dt;
        int64_t rows, n;
        int threads, rpb, vec;
        bool reverse, exclusive;
    };
    const std::vector<Case> cases = {
        {R::kCumsum, DType::kF32, 128, 4000, 256, 1, 4, false, false},
        {R::kCumsum, DType::kF32, 128, 32768, 1024, 1, 4, true, false},
        {R::kCumsum, DType::kBF16, 64, 32768, 512, 1, 8, false, true},
        {R::kCumprod, DType::kF32, 128, 4000, 256, 1, 4, false, false},
        {R::kCumprod, DType::kF16, 1000, 100, 256, 8, 2, true, true},
        {R::kCumsum, DType::kF32, 4096, 64, 128, 16, 4, false, false},
        {R::kCumsum, DType::kF32, 4096, 8, 64, 64, 1, true, false},
    };
    std::string source;
    size_t entries = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        Tensors t;
        t.add("X", {"M", "N"}, {c.rows, c.n}, c.dt).add("Y", {"M", "N"}, {c.rows, c.n}, c.dt);
        std::vector<dsl::ChainOp> chain = {store("Y", {"M", "N"})};
        if (c.dt != DType::kF32) chain.insert(chain.begin(), cast(c.dt));
        dsl::Kernel k = rowwise("scan_" + std::to_string(i), c.op, {ref("X", {"M", "N"})}, chain);
        k.rowwise.threads = c.threads;
        k.rowwise.rows_per_block = c.rpb;
        k.rowwise.vec = c.vec;
        k.rowwise.reverse = c.reverse;
        k.rowwise.exclusive = c.exclusive;
        auto code = lower_rowwise(k, t.ctx);
        ASSERT_TRUE(code.ok()) << i << ": " << code.error().to_string();
        source += code->device_source;
        entries += code->launches.size();
    }
    expect_compiles_without_spills("rowwise_scans", source, entries);
}

// Rows staged in shared memory (cp.async; passes 1 whole or beside registers, passes 2 partly)
// and 16-CTA split rows, at the suite's long-row and vocabulary shapes.
TEST(RowwiseCompile, StagedRowsAndSplit16) {
    struct Case {
        R op;
        DType dt;
        int64_t rows, n;
        dsl::RowwiseConfig cfg;  // rows_per_block threads vec passes online split smem_stage
    };
    const std::vector<Case> cases = {
        {R::kSoftmax, DType::kF32, 128, 1048576, {1, 1024, 4, 2, true, 16, true}},
        {R::kSoftmax, DType::kF32, 128, 1048576, {1, 1024, 4, 2, true, 8, true}},
        {R::kSoftmax, DType::kF32, 128, 1048576, {1, 1024, 4, 2, true, 16, false}},
        {R::kLogSoftmax, DType::kBF16, 64, 32000, {1, 256, 8, 1, true, 1, false}},
        {R::kLogSoftmax, DType::kBF16, 64, 32000, {1, 512, 8, 1, false, 1, true}},
        {R::kLogsumexp, DType::kF16, 64, 32000, {1, 512, 8, 2, false, 1, true}},
        {R::kLayerNorm, DType::kBF16, 64, 8192, {2, 512, 8, 1, false, 1, true}},
        {R::kRmsNorm, DType::kBF16, 64, 4096, {1, 256, 8, 2, false, 1, true}},
        {R::kL2Normalize, DType::kBF16, 64, 4096, {1, 256, 8, 2, false, 1, true}},
        {R::kL1Normalize, DType::kF32, 64, 4096, {1, 512, 4, 1, false, 1, true}},
        {R::kL2Normalize, DType::kF32, 16, 1048576, {1, 1024, 4, 2, false, 16, true}},
        {R::kLayerNorm, DType::kF32, 16, 1048576, {1, 1024, 4, 2, false, 16, true}},
        // passes 1 on 4 MB rows: registers and shared memory together (64 + 64 and 64 + 192
        // values a thread)
        {R::kSoftmax, DType::kF32, 128, 1048576, {1, 512, 4, 1, true, 16, false}},
        {R::kLayerNorm, DType::kF32, 128, 1048576, {1, 256, 4, 1, false, 16, false}},
    };
    std::string source;
    size_t entries = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        const bool reduces = c.op == R::kLogsumexp;
        Tensors t;
        t.add("X", {"M", "N"}, {c.rows, c.n}, c.dt).add("w", {"N"}, {c.n}, c.dt);
        t.add("b", {"N"}, {c.n}, c.dt).add("Y", {"M", "N"}, {c.rows, c.n}, c.dt);
        t.add("Yr", {"M"}, {c.rows}, c.dt);
        std::vector<dsl::TensorRef> args = {ref("X", {"M", "N"})};
        if (c.op == R::kLayerNorm) args.push_back(ref("w", {"N"})), args.push_back(ref("b", {"N"}));
        if (c.op == R::kRmsNorm) args.push_back(ref("w", {"N"}));
        dsl::Kernel k = rowwise("staged_" + std::to_string(i), c.op, args,
                                {reduces ? store("Yr", {"M"}) : store("Y", {"M", "N"})});
        k.rowwise = c.cfg;
        auto code = lower_rowwise(k, t.ctx);
        ASSERT_TRUE(code.ok()) << i << ": " << code.error().to_string();
        source += code->device_source;
        entries += code->launches.size();
    }
    expect_compiles_without_spills("rowwise_staged", source, entries);
}

TEST(MapCompile, ChainWithEveryStatement) {
    Tensors t;
    t.add("X", {"R", "C"}, {1024, 1024}, DType::kBF16).add("b", {"C"}, {1024}, DType::kF16);
    t.add("c", {"R"}, {1024}).add("G", {"R", "C"}, {1024, 1024}).add("a", {}, {});
    t.add("P", {"R", "C"}, {1024, 1024}).add("Y", {"R", "C"}, {1024, 1024}, DType::kBF16);
    std::vector<dsl::ChainOp> chain = {
        with(K::kAdd, "b", {"C"}), with(K::kSub, "c", {"R"}), with(K::kMul, "G", {"R", "C"}),
        with(K::kDiv, "a", {}), op(K::kAdd, {0.5}), op(K::kSub, {0.25}), op(K::kMul, {1.5}),
        op(K::kDiv, {3.0}), op(K::kRelu), op(K::kLeakyRelu, {0.1}), gelu(GeluApprox::kErf),
        gelu(GeluApprox::kTanh), op(K::kSilu), op(K::kSigmoid), op(K::kTanh), op(K::kMish),
        op(K::kSoftplus), op(K::kSoftplus, {2.0, 15.0}), op(K::kExp), op(K::kLog), op(K::kNeg),
        op(K::kAbs), op(K::kSqrt), op(K::kRsqrt), op(K::kSquare), op(K::kClamp, {-2.0, 2.0}),
        op(K::kMin, {1.0}), op(K::kMax, {-1.0}), store("P", {"R", "C"}), cast(DType::kF16),
        cast(DType::kBF16), store("Y", {"R", "C"})};
    std::string source;
    size_t entries = 0;
    const std::vector<dsl::MapConfig> configs = {{256, 4, 1, false}, {128, 8, 4, true},
                                                 {1024, 2, 2, false}, {64, 1, 16, true}};
    for (size_t i = 0; i < configs.size(); ++i) {
        dsl::Kernel k = map("map_" + std::to_string(i), ref("X", {"R", "C"}), chain);
        k.map = configs[i];
        auto code = lower_map(k, t.ctx);
        ASSERT_TRUE(code.ok()) << code.error().to_string();
        source += code->device_source;
        entries += code->launches.size();
    }
    expect_compiles_without_spills("map_all", source, entries);
}

}  // namespace
}  // namespace kforge::codegen
