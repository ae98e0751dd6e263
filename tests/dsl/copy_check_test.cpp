// Copy kernels in the kernel language: `copy reshape|expand|permute|slice|cat|pad(X0[..], ..)`
// parses and prints back, checks against the problem's shape op (the expression proves the op
// word, the inputs in order and the attributes match; the chain runs on each moved value), and
// wrong programs get clear errors: an unknown op word, inputs in another order, a shape op the
// problem does not have, a store whose dims differ from the op's output (a reshape whose sizes
// do not match), a dropped element-wise op, bad knobs.
#include <gtest/gtest.h>

#include <string>

#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "dsl/reference_card.h"
#include "problem/spec.h"
#include "sol/device.h"
#include "tests/dsl/check_test_util.h"

namespace kforge::dsl {
namespace {

const char* kSpec = R"({"name": "c", "dims": {"N": 2, "C1": 3, "C2": 5, "H": 4, "W": 6, "G": 2},
    "inputs": {"a": {"shape": ["N", "C1", "H", "W"], "dtype": "f32"},
               "b": {"shape": ["N", "C2", "H", "W"], "dtype": "f32"}},
    "graph": [{"op": "cat", "inputs": ["a", "b"], "output": "x", "axis": 1},
              {"op": "relu", "inputs": ["x"], "output": "y"},
              {"op": "permute", "inputs": ["a"], "output": "p", "dims": [0, 2, 3, 1]},
              {"op": "reshape", "inputs": ["b"], "output": "f", "shape": ["N", "C2*H*W"]},
              {"op": "slice", "inputs": ["a"], "output": "s", "axis": 3, "start": 1, "step": 2}],
    "outputs": ["y", "p", "f", "s"], "precision": {"policy": "fp32_strict"}})";

const char* kGood = R"(program c for "c"
kernel k0 = copy cat(a[N,C1,H,W], b[N,C2,H,W]) threads 128 vec 2
    { relu; store y[N,8,H,W] }
kernel k1 = copy permute(a[N,C1,H,W])
    { store p[N,H,W,C1] }
kernel k2 = copy reshape(b[N,C2,H,W]) { store f[N,C2_H_W] }
kernel k3 = copy slice(a[N,C1,H,W]) vec 1 { store s[N,C1,H,3] }
)";

CheckResult check_text(const std::string& text) { return testing::check_text(kSpec, text); }

void expect_check_error(const std::string& text, const std::string& fragment) {
    SCOPED_TRACE(text);
    testing::expect_error_containing(check_text(text), fragment);
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

TEST(CopyCheck, ParsesPrintsAndChecks) {
    auto prog = parse_program(kGood, "c.kf");
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 4u);
    EXPECT_EQ(prog->kernels[0].kind, KernelKind::kCopy);
    EXPECT_EQ(prog->kernels[0].copy_op, OpKind::kCat);
    EXPECT_EQ(prog->kernels[0].args.size(), 2u);
    EXPECT_EQ(prog->kernels[0].copy.threads, 128);
    EXPECT_EQ(prog->kernels[0].copy.vec, 2);
    const std::string text = print_canonical(*prog);
    EXPECT_NE(text.find("copy cat(a[N,C1,H,W], b[N,C2,H,W]) threads 128 vec 2"), std::string::npos)
        << text;
    auto again = parse_program(text, "c2.kf");
    ASSERT_TRUE(again.ok()) << again.error().to_string();
    EXPECT_EQ(strip_locations(*again), strip_locations(*prog));
    CheckResult r = check_text(kGood);
    EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0].to_string());
    EXPECT_NE(reference_card().find("copy reshape|expand|permute|slice|cat|pad"), std::string::npos);
}

TEST(CopyCheck, UnknownOpWordIsAParseError) {
    auto prog = parse_program("program c for \"c\"\nkernel k0 = copy concat(a[N,C1,H,W]) { store p[N,H,W,C1] }\n",
                              "c.kf");
    ASSERT_FALSE(prog.ok());
    EXPECT_NE(prog.error().to_string().find("a shape op (reshape, expand, permute, slice, cat, pad)"),
              std::string::npos) << prog.error().to_string();
}

TEST(CopyCheck, WrongProgramsAreRefusedByName) {
    // the cat's inputs in the other order: no cat of the problem reads (b, a)
    expect_check_error(replaced(kGood, "cat(a[N,C1,H,W], b[N,C2,H,W])", "cat(b[N,C2,H,W], a[N,C1,H,W])"),
                       "no cat op of the problem reads exactly these tensors");
    // a pad the problem does not have
    expect_check_error(replaced(kGood, "copy permute(a[N,C1,H,W])", "copy pad(a[N,C1,H,W])"),
                       "no pad op of the problem reads exactly these tensors");
    // the relu dropped: the program does not compute y
    expect_check_error(replaced(kGood, "{ relu; store y[N,8,H,W] }", "{ store y[N,8,H,W] }"), "y");
    // a reshape stored under dims whose sizes do not match the op's output
    expect_check_error(replaced(kGood, "store f[N,C2_H_W]", "store f[N,C2,H]"), "f");
    // knobs outside their domains
    auto threads = parse_program(replaced(kGood, "threads 128 vec 2", "threads 100 vec 2"), "c.kf");
    ASSERT_FALSE(threads.ok());
    EXPECT_NE(threads.error().to_string().find("threads 100: expected 32..1024, a multiple of 32"),
              std::string::npos) << threads.error().to_string();
    auto vec3 = parse_program(replaced(kGood, "threads 128 vec 2", "threads 128 vec 3"), "c.kf");
    ASSERT_FALSE(vec3.ok());
    EXPECT_NE(vec3.error().to_string().find("vec 3: expected one of 1, 2, 4, 8"), std::string::npos)
        << vec3.error().to_string();
}

}  // namespace
}  // namespace kforge::dsl
