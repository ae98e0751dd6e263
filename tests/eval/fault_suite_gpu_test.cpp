// The fault suite on the GPU: the hand-written kernels of tests/faults/ compiled with
// nvcc -cubin for sm_90a and run, each as a prebuilt candidate with tests/faults/plan.json,
// through ONE supervisor session with `kforge worker --device cuda`. Skips visibly without a
// GPU. (tests/faults/run_faults.sh does the same with a kforge binary only.)
#include <gtest/gtest.h>
#include <unistd.h>

#include "common/process.h"
#include "eval/evaluator.h"
#include "eval/fault_suite.h"
#include "worker/supervised_evaluator.h"

namespace kforge::eval {
namespace {

TEST(FaultSuiteGpu, EveryFaultyKernelGetsItsStatusInOneSession) {
    SupervisorOptions o;
    o.worker_argv = worker_command(KFORGE_CLI_PATH, "cuda", 0);
    Supervisor s(o);
    auto st = s.start();
    if (!st.ok()) GTEST_SKIP() << "no usable GPU: " << st.error().to_string();
    char dir[] = "/tmp/kforge-faults-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    std::string faults = std::string(KFORGE_SOURCE_DIR) + "/tests/faults/";
    for (const char* source : {"correct.cu", "out_of_bounds.cu", "infinite_loop.cu",
                               "partial_write.cu", "cached_result.cu", "low_precision.cu",
                               "nan_producer.cu", "sleeper.cu"}) {
        std::string out = std::string(dir) + "/" + source + ".cubin";
        auto r = run_process({KFORGE_NVCC, "-cubin", "-arch=sm_90a", "-O3", "-o", out,
                                       faults + source}, 300);
        ASSERT_TRUE(r.ok() && r->exit_code == 0) << source << ": " << (r.ok() ? r->output : "");
    }
    SupervisedEvaluator evaluator(s, 300);
    auto r = run_fault_suite(evaluator, faults + "scenarios.json", false, dir);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    std::printf("%s", fault_suite_table(*r).c_str());
    EXPECT_EQ(r->mismatches, 0);
    EXPECT_GE(s.stats().restarts_broken + s.stats().timeouts, 1);
}

}  // namespace
}  // namespace kforge::eval
