// The fault suite on the GPU: the hand-written kernels of tests/faults/ compiled with
// nvcc -cubin for sm_90a and run, each with tests/faults/plan.json, through ONE supervisor
// session with `kforge worker --device cuda`. Skips visibly without a GPU.
#include <unistd.h>

#include "compile/process.h"
#include "fault_suite.h"

namespace kforge::eval {
namespace {

TEST(FaultSuiteGpu, EveryFaultyKernelGetsItsStatusInOneSession) {
    SupervisorOptions o;
    o.worker_argv = worker_command(KFORGE_CLI_PATH, "cuda", 0);
    o.task_timeout_s = 120;
    Supervisor s(o);
    auto st = s.start();
    if (!st.ok()) GTEST_SKIP() << "no usable GPU: " << st.error().to_string();
    char dir[] = "/tmp/kforge-faults-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    auto cubin_for = [&](const std::string& source) {
        std::string out = std::string(dir) + "/" + source + ".cubin";
        if (access(out.c_str(), F_OK) == 0) return out;
        auto r = compile::run_process({KFORGE_NVCC, "-cubin", "-arch=sm_90a", "-O3", "-o", out,
                                       faults::kFaultDir + "/" + source}, 300);
        EXPECT_TRUE(r.ok() && r->exit_code == 0) << source << ": " << (r.ok() ? r->output : "");
        return out;
    };
    faults::run_fault_suite(s, false, cubin_for);
    EXPECT_GE(s.stats().restarts_broken + s.stats().timeouts, 1);
}

}  // namespace
}  // namespace kforge::eval
