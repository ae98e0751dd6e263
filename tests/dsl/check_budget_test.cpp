// The checker's work stays bounded on hostile inputs (issue 31, item 1): values reused by `let`
// (and problem ops that read a value twice) are shared nodes with digest keys and counted
// operands, not copied subtrees; what still grows too large (counts beyond exact, a step budget
// spent, a gemm epilogue tree) is a user error naming the statement or the problem's op. The
// work is asserted in steps (CheckResult::steps), not seconds: deterministic on any machine.
#include <gtest/gtest.h>
#include <pthread.h>

#include <functional>

#include "check_test_util.h"
#include "tests/doubling_inputs.h"

namespace kforge::dsl::testing {
namespace {

using kforge::test::doubling_program;
using kforge::test::doubling_spec;

// Where statement `needle` starts in `program` ("t.kf:L:C"), as the checker names it.
std::string where_of(const std::string& program, const std::string& needle) {
    const size_t at = program.find(needle);
    EXPECT_NE(at, std::string::npos) << needle;
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < at; ++i)
        if (program[i] == '\n') ++line, line_start = i + 1;
    return "t.kf:" + std::to_string(line) + ":" + std::to_string(at - line_start + 1);
}

// 24 pairs took 16 s and 2.3 GB when every key spelled out its subtrees.
TEST(CheckBudget, TwentyFourLetPairsCheckInFewSteps) {
    const std::string program = doubling_program(24);
    CheckResult r = check_text(doubling_spec(24), program);
    EXPECT_TRUE(r.ok()) << all_errors(r);
    EXPECT_LT(r.steps, 2000) << "the work must grow linearly with the program";
}

// 128 pairs (two kernels of 64: a chain holds at most 256 statements) against 128 levels.
TEST(CheckBudget, HundredTwentyEightLetPairsCheckInFewSteps) {
    const std::string program = doubling_program(128, 64);
    CheckResult r = check_text(doubling_spec(128), program);
    EXPECT_TRUE(r.ok()) << all_errors(r);
    EXPECT_LT(r.steps, 10000);
}

// Every binary statement that can read a named value, each against its problem op.
TEST(CheckBudget, ReusedValuesOfEveryBinaryOpShareNodes) {
    for (auto [op, stmt] : {std::pair{"add", "add"}, {"mul", "mul"}, {"sub", "sub"},
                            {"div", "div"}, {"maximum", "max"}, {"minimum", "min"}}) {
        CheckResult r = check_text(doubling_spec(40, op), doubling_program(40, 100, stmt));
        EXPECT_TRUE(r.ok()) << op << ": " << all_errors(r);
        EXPECT_LT(r.steps, 4000) << op;
    }
}

// A wrong count is still found, and said as counts (not as 2^24 operands).
TEST(CheckBudget, AMissingDoublingIsNamedWithCounts) {
    const std::string program = doubling_program(24);
    CheckResult r = check_text(doubling_spec(23), program);
    expect_one_error(r, where_of(program, "Y[M,N] }"),
                     {"Y is not what the problem computes", "adds X", "16777216 times",
                      "the problem 8388608 times"});
    EXPECT_LT(r.steps, 2000);
}

// 2^1024 occurrences are not a double: the checker refuses the statement that gets there
// rather than compare rounded counts (that could call two different programs equal).
TEST(CheckBudget, CountsBeyondExactAreRefusedAtTheStatement) {
    const std::string program = doubling_program(1100, 127);
    CheckResult r = check_text(doubling_spec(1), program);
    expect_one_error(r, where_of(program, "add a1023;"),
                     {"too large to check", "counts exactly"});
    EXPECT_LT(r.steps, 100000);
}

// The same in the problem: its op is named, and the program is not blamed.
TEST(CheckBudget, AProblemTooLargeToCheckNamesItsOp) {
    CheckResult r = check_text(doubling_spec(1100), doubling_program(1));
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("problem doubling is too large to check"),
              std::string::npos) << r.errors[0].message;
    EXPECT_NE(r.errors[0].message.find("at graph[1023]"), std::string::npos)
        << r.errors[0].message;
}

// The step budget (CheckOptions::max_steps) stops a proof that needs more and names the
// statement where it ran out; a chain of distinct terms summed up is quadratic work.
TEST(CheckBudget, TheStepBudgetNamesTheStatementWhereItRanOut) {
    std::string chain;
    for (int i = 0; i < 60; ++i) chain += " let t" + std::to_string(i) + "; exp;";
    chain += " use t0;";
    for (int i = 1; i < 60; ++i) chain += " add t" + std::to_string(i) + ";";
    const std::string program =
        "program p for \"doubling\"\nkernel k0 = map(X[M,N]) {" + chain + " store Y[M,N] }\n";
    auto problem = parse_problem(doubling_spec(1), "p.json");
    auto parsed = parse_program(program, "t.kf");
    ASSERT_TRUE(problem.ok() && parsed.ok());
    CheckOptions options{"t.kf", program};
    const CheckResult unbounded = check_program(*parsed, *problem, h200(), options);
    ASSERT_EQ(unbounded.errors.size(), 1u) << all_errors(unbounded);  // not the problem's sum
    EXPECT_EQ(unbounded.errors[0].message.find("too large"), std::string::npos);
    ASSERT_GT(unbounded.steps, 1000);

    options.max_steps = 1000;
    const CheckResult r = check_program(*parsed, *problem, h200(), options);
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_EQ(r.errors[0].where.rfind("t.kf:2:", 0), 0u) << r.errors[0].where;
    EXPECT_NE(r.errors[0].message.find("too large to check from here"), std::string::npos);
    EXPECT_NE(r.errors[0].message.find("more than 1000 steps"), std::string::npos);
    EXPECT_NE(r.errors[0].detail.find('^'), std::string::npos);
    // The statement named is an `add` of the long sum, where the work is.
    const std::string& where = r.errors[0].where;
    const size_t col = std::stoul(where.substr(where.rfind(':') + 1));
    EXPECT_EQ(program.substr(program.find('\n') + col, 5), "add t") << where;
}

// Runs `fn` on a thread with a `stack_bytes` stack (a worker pool's thread may have less than the
// main thread's 8 MB).
void run_with_stack(size_t stack_bytes, const std::function<void()>& fn) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, stack_bytes);
    pthread_t thread;
    auto body = [](void* f) -> void* {
        (*static_cast<const std::function<void()>*>(f))();
        return nullptr;
    };
    ASSERT_EQ(pthread_create(&thread, &attr, body, const_cast<std::function<void()>*>(&fn)), 0);
    pthread_join(thread, nullptr);
    pthread_attr_destroy(&attr);
}

// The first difference of two chains kMaxGraphOps deep is found walking down, not recursing: a
// 4096-deep difference overflowed a 4 MB stack.
TEST(CheckBudget, ADeepDifferenceIsFoundWithoutRecursion) {
    std::string graph;
    for (int i = 0; i < 4096; ++i) {
        graph += std::string(i ? ", " : "") + R"({"op": ")" + (i ? "exp" : "relu") +
                 R"(", "inputs": [")" + (i ? "T" + std::to_string(i - 1) : std::string("X")) +
                 R"("], "output": ")" + (i == 4095 ? std::string("Y") : "T" + std::to_string(i)) +
                 R"("})";
    }
    const std::string spec = R"({"name": "deep", "dims": {"M": 64, "N": 64},
        "inputs": {"X": {"shape": ["M", "N"], "dtype": "f32"}}, "graph": [)" + graph +
                             R"(], "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";
    std::string program = "program p for \"deep\"\n";
    for (int k = 0, done = 0; done < 4096; ++k) {
        const int n = std::min(250, 4096 - done);
        program += "kernel k" + std::to_string(k) + " = map(" +
                   (k ? "S" + std::to_string(k - 1) : std::string("X")) + "[M,N]) {";
        for (int i = done; i < done + n; ++i) program += i ? " exp;" : " abs;";
        done += n;
        program += " store " + (done == 4096 ? std::string("Y") : "S" + std::to_string(k)) +
                   "[M,N] }\n";
    }
    CheckResult r;
    run_with_stack(512 * 1024, [&] { r = check_text(spec, program); });
    ASSERT_EQ(r.errors.size(), 1u) << all_errors(r);
    EXPECT_NE(r.errors[0].message.find("the problem applies relu to X at graph[0]; the program's "
                                       "chain for Y has abs at 2:"),
              std::string::npos) << r.errors[0].message;
}

// A gemm epilogue is CUTLASS's visitor tree: every use of a `let` value copies its nodes, so the
// lowering's tree (and the host code filling its arguments) doubles with each reuse. The checker
// refuses it at the statement that passes kMaxEpilogueTreeNodes; the same chain in a map kernel
// (which keeps a named value in registers) checks.
TEST(CheckBudget, AGemmEpilogueTreeIsCapped) {
    std::string graph = R"({"op": "linear", "inputs": ["X", "W"], "output": "H0"})";
    for (int i = 0; i < 12; ++i) {
        const std::string in = "H" + std::to_string(i);
        const std::string out = i == 11 ? "Y" : "H" + std::to_string(i + 1);
        graph += R"(, {"op": "add", "inputs": [")" + in + R"(", ")" + in + R"("], "output": ")" +
                 out + R"("})";
    }
    const std::string spec = R"({"name": "gemm_doubling", "dims": {"M": 256, "N": 128, "K": 64},
        "inputs": {"X": {"shape": ["M", "K"], "dtype": "f32"},
                   "W": {"shape": ["N", "K"], "dtype": "f32", "param": true}},
        "graph": [)" + graph + R"(], "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";
    std::string pairs;
    for (int i = 0; i < 12; ++i)
        pairs += " let a" + std::to_string(i) + "; add a" + std::to_string(i) + ";";
    const std::string fused = "program p for \"gemm_doubling\"\n"
                              "kernel k0 = gemm(X[M,K], W[N,K]) {" + pairs + " store Y[M,N] }\n";
    // 1, 3, 7, ..., 1023 nodes; the tenth `add` makes 2047.
    expect_one_error(check_text(spec, fused), where_of(fused, "add a9;"),
                     {"visitor tree would have more than 1024 nodes", "map kernel"});

    const std::string split = "program p for \"gemm_doubling\"\n"
                              "kernel k0 = gemm(X[M,K], W[N,K]) { store H0[M,N] }\n"
                              "kernel k1 = map(H0[M,N]) {" + pairs + " store Y[M,N] }\n";
    CheckResult r = check_text(spec, split);
    EXPECT_TRUE(r.ok()) << all_errors(r);
}

}  // namespace
}  // namespace kforge::dsl::testing
