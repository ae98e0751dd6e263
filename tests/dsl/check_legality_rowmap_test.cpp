// The rowwise and map rules that mirror the lowering (codegen/lower_rowwise_emit.cpp,
// codegen/lower_map.cpp): each program here is one the lowering refuses (or accepts), so the
// checker must refuse (or accept) it at the static tier, before a compile is spent on it.
#include <gtest/gtest.h>

#include <string>

#include "check_test_util.h"

namespace kforge::dsl {
namespace {

using testing::all_errors;
using testing::check_suite;
using testing::check_text;
using testing::expect_one_error;

constexpr const char* kLongRows = "program p for \"softmax_long_rows_f32\"\n"
                                  "kernel k0 = rowwise softmax(X[R,C]) ";

CheckResult long_rows(const std::string& knobs) {
    return check_suite("softmax_long_rows_f32", std::string(kLongRows) + knobs + " { store Y[R,C] }");
}

// lowering: "split > 1 needs rows_per_block 1" (kforge issue 6: it cost a compile a round)
TEST(CheckLegalityRowmap, SplitRowNeedsOneRowPerBlock) {
    auto r = long_rows("rows_per_block 2 threads 1024 vec 4 passes 2 online split 8");
    expect_one_error(r, "t.kf:2:37", {"rows_per_block 2 with split 8", "use rows_per_block 1"});
    EXPECT_TRUE(long_rows("rows_per_block 1 threads 1024 vec 4 passes 2 online split 8").ok());
    EXPECT_TRUE(long_rows("rows_per_block 2 threads 1024 vec 4 passes 2 online split 1").ok());
    // a column reduction has no rows per block: split slices the reduced dim there
    auto c = check_suite("col_sum_f32", "program p for \"col_sum_f32\"\nkernel k0 = rowwise "
                         "sum(X[R,C]) over R rows_per_block 2 threads 256 vec 4 passes 1 split 4 "
                         "{ store Y[C] }");
    EXPECT_TRUE(c.ok()) << all_errors(c);
}

// lowering: "passes 1 keeps the row on chip: ..." with the lowering's arithmetic: a CTA holds
// row_len / split values, in registers up to 64 a thread, else in shared memory in the input's
// dtype, less 1 KiB of static shared memory (else both: the next test).
TEST(CheckLegalityRowmap, OnePassHoldsWhatTheLoweringHolds) {
    // 1M / 8 CTAs / 1024 threads = 128 values a thread, 512 KiB a CTA: refused
    expect_one_error(long_rows("threads 1024 vec 4 passes 1 online split 8"), "t.kf:2:56",
                     {"passes 1 caches each row: 128 values per thread", "use passes 2"});
    // split 16: 64 values a thread, in registers
    EXPECT_TRUE(long_rows("threads 1024 vec 4 passes 1 online split 16").ok());
    // the same in shared memory (smem_stage) is 256 KiB: refused
    expect_one_error(long_rows("threads 1024 vec 4 passes 1 online split 16 smem_stage"),
                     "t.kf:2:56", {"64 values per thread staged in shared memory", "256 KiB"});
    // bf16 rows are held as bf16: 2 rows of 32000 are 125 KiB, not the 250 KiB of f32
    auto b = check_suite("log_softmax_vocab_bf16",
                         "program p for \"log_softmax_vocab_bf16\"\nkernel k0 = rowwise "
                         "log_softmax(X[R,V]) rows_per_block 2 threads 256 vec 8 passes 1 online "
                         "{ cast bf16; store Y[R,V] }");
    EXPECT_TRUE(b.ok()) << all_errors(b);
    // 227 KiB of opt-in shared memory less the 1 KiB the kernels keep: 226 KiB is the limit
    // (split 1, 1024 threads, vec 4: 1M values = 4 MiB; 4 rows of 14336 f32 = 224 KiB fits,
    // 4 rows of 14592 = 228 KiB does not)
    auto rows = [](int64_t c, const std::string& knobs) {
        return check_text(R"({"name": "sm", "dims": {"R": 64, "C": )" + std::to_string(c) + R"(},
            "inputs": {"X": {"shape": ["R", "C"], "dtype": "f32"}},
            "graph": [{"op": "softmax", "inputs": ["X"], "output": "Y"}],
            "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})",
                          "program p for \"sm\"\nkernel k0 = rowwise softmax(X[R,C]) " + knobs +
                              " { store Y[R,C] }");
    };
    EXPECT_TRUE(rows(14336, "rows_per_block 4 threads 128 vec 4 passes 1 smem_stage").ok());
    auto over = rows(14592, "rows_per_block 4 threads 128 vec 4 passes 1 smem_stage");
    ASSERT_EQ(over.errors.size(), 1u) << all_errors(over);
    EXPECT_NE(over.errors[0].message.find("the h200 allows 226 KiB"), std::string::npos)
        << all_errors(over);
    // without smem_stage, 64 values a thread stay in registers beside the stage: 14592 is
    // 16 + 98 vectors (196 KiB staged); 16640 is 16 + 114 (228 KiB): refused
    EXPECT_TRUE(rows(14592, "rows_per_block 4 threads 128 vec 4 passes 1").ok());
    auto both = rows(16640, "rows_per_block 4 threads 128 vec 4 passes 1");
    ASSERT_EQ(both.errors.size(), 1u) << all_errors(both);
    EXPECT_NE(both.errors[0].message.find("64 of them in registers"), std::string::npos)
        << all_errors(both);
}

// passes 1 on rows too long for registers and for shared memory alone: both hold the CTA's
// part (the lowering's RowCfg with ITEMS and STAGED), as in softmax_long_rows_f32's 4 MB rows
// over a 16-CTA cluster: 256 KiB a CTA.
TEST(CheckLegalityRowmap, OnePassHoldsLongRowsInRegistersAndSharedMemory) {
    // 512 threads: 64 + 64 values a thread, 128 KiB staged
    EXPECT_TRUE(long_rows("threads 512 vec 4 passes 1 online split 16").ok());
    // 256 threads: 64 + 192, 192 KiB staged
    EXPECT_TRUE(long_rows("threads 256 vec 4 passes 1 online split 16").ok());
    // split 8: 64 + 448 values, 448 KiB: refused
    expect_one_error(long_rows("threads 256 vec 4 passes 1 online split 8"), "t.kf:2:55",
                     {"512 values per thread, 64 of them in registers", "448 KiB"});
}

// lowering: "too many rows for one grid" / "too many elements for one grid"
TEST(CheckLegalityRowmap, GridsOfMoreThanTwoToThe31BlocksAreRefused) {
    auto r = check_text(R"({"name": "sm", "dims": {"R": 4294967296, "C": 32},
        "inputs": {"X": {"shape": ["R", "C"], "dtype": "f32"}},
        "graph": [{"op": "softmax", "inputs": ["X"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})",
                        "program p for \"sm\"\nkernel k0 = rowwise softmax(X[R,C]) "
                        "rows_per_block 1 threads 32 vec 1 { store Y[R,C] }");
    expect_one_error(r, "t.kf:2:37", {"4294967296 rows", "more than 2^31 - 1 blocks"});
    auto m = check_text(R"({"name": "m", "dims": {"R": 4294967296, "C": 64},
        "inputs": {"X": {"shape": ["R", "C"], "dtype": "f32"}},
        "graph": [{"op": "relu", "inputs": ["X"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})",
                        "program p for \"m\"\nkernel k0 = map(X[R,C]) block 64 items 1 "
                        "{ relu; store Y[R,C] }");
    expect_one_error(m, "t.kf:2:34", {"elements over block 64 x items 1", "grid_stride"});
    auto g = check_text(R"({"name": "m", "dims": {"R": 4294967296, "C": 64},
        "inputs": {"X": {"shape": ["R", "C"], "dtype": "f32"}},
        "graph": [{"op": "relu", "inputs": ["X"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})",
                        "program p for \"m\"\nkernel k0 = map(X[R,C]) block 64 items 1 grid_stride "
                        "{ relu; store Y[R,C] }");
    EXPECT_TRUE(g.ok()) << all_errors(g);
}

// lowering: "smem_stage: one vector per thread ... more than the ... available" (a device with
// little shared memory: one vector of 1024 threads x 16 bytes is 16 KiB)
TEST(CheckLegalityRowmap, StagedVectorsMustFitSharedMemory) {
    DeviceLimits small = testing::h200();
    small.name = "tiny";
    small.smem_per_block_optin_bytes = 16 * 1024;
    auto r = check_text(R"({"name": "sm", "dims": {"R": 64, "C": 65536},
        "inputs": {"X": {"shape": ["R", "C"], "dtype": "f32"}},
        "graph": [{"op": "softmax", "inputs": ["X"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})",
                        "program p for \"sm\"\nkernel k0 = rowwise softmax(X[R,C]) threads 1024 "
                        "vec 4 passes 2 smem_stage { store Y[R,C] }",
                        small);
    expect_one_error(r, "t.kf:2:65", {"smem_stage: one vector per thread", "the tiny allows"});
}

}  // namespace
}  // namespace kforge::dsl
