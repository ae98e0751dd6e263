// run_process: exit codes, captured output, timeouts that kill the whole process group.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "common/stop_request.h"
#include "compile/process.h"

namespace kforge::compile {
namespace {

TEST(Process, CapturesOutputAndExitCode) {
    auto r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 10);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->exit_code, 3);
    EXPECT_FALSE(r->timed_out);
    EXPECT_NE(r->output.find("out"), std::string::npos);
    EXPECT_NE(r->output.find("err"), std::string::npos);
}

TEST(Process, TimeoutKillsTheGroupIncludingChildren) {
    auto start = std::chrono::steady_clock::now();
    // The child `sleep` inherits the pipe; only a group kill ends the wait early.
    auto r = run_process({"/bin/sh", "-c", "sleep 30 & sleep 30"}, 1);
    auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->timed_out);
    EXPECT_LT(secs, 10.0);
}

// A stop asked for (SIGTERM's first signal) kills a running compiler's group within a second:
// a stopped suite does not wait minutes for a CUTLASS compile.
TEST(Process, StopRequestKillsTheGroup) {
    clear_stop_request();
    std::thread stopper([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        request_stop();
    });
    auto t0 = std::chrono::steady_clock::now();
    auto r = run_process({"/bin/sh", "-c", "sleep 30 & sleep 30"}, 60);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stopper.join();
    clear_stop_request();
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_TRUE(r->stopped);
    EXPECT_FALSE(r->timed_out);
    EXPECT_LT(secs, 5.0);
}

TEST(ProcessError, MissingProgramIsAnError) {
    auto r = run_process({"/nonexistent/kforge-no-such-compiler"}, 5);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("cannot run"), std::string::npos) << r.error().to_string();
}

}  // namespace
}  // namespace kforge::compile
