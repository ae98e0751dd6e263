// common/process.h: exit codes, captured output, timeouts and stops that kill the whole process
// group, the environment and working folder given, exec failures as errors.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>

#include "common/stop_request.h"
#include "common/process.h"

namespace kforge {
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

TEST(Process, EnvironmentAndFolderAreTheChildsOwn) {
    RunOptions o;
    o.env = {{"KFORGE_PROCESS_TEST", "given"}, {"HOME", "/nowhere"}};
    o.cwd = "/tmp";
    auto r = run_process({"/bin/sh", "-c", "echo $KFORGE_PROCESS_TEST $HOME; pwd"}, o);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->output, "given /nowhere\n/tmp\n");
    EXPECT_EQ(getenv("KFORGE_PROCESS_TEST"), nullptr);  // the parent's is untouched
}

TEST(Process, StdoutOnlyLeavesStderrToTheParent) {
    RunOptions o;
    o.capture = Capture::kStdout;
    testing::internal::CaptureStderr();
    auto r = run_process({"/bin/sh", "-c", "echo to-stdout; echo to-stderr >&2"}, o);
    const std::string err = testing::internal::GetCapturedStderr();
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->output, "to-stdout\n");
    EXPECT_NE(err.find("to-stderr"), std::string::npos);
}

// No pipe to read (both streams pass through) and no timeout: the stop request still ends it.
TEST(Process, PassThroughWithoutTimeoutStillStops) {
    clear_stop_request();
    std::thread stopper([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        request_stop();
    });
    RunOptions o;
    o.capture = Capture::kNone;
    auto r = run_process({"/bin/sh", "-c", "sleep 30 & sleep 30"}, o);
    stopper.join();
    clear_stop_request();
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_TRUE(r->stopped);
}

// PR_SET_PDEATHSIG follows the forking thread: a child that must die with the process outlives
// the (short-lived) thread that asked for it, as a worker started by one MCP tool call must.
TEST(Process, DieWithParentChildOutlivesTheThreadThatAskedForIt) {
    Expected<pid_t> pid = make_error("", "not started");
    std::thread caller([&] {
        SpawnOptions o;
        o.die_with_parent = true;
        pid = spawn_process({"/bin/sleep", "30"}, o);
    });
    caller.join();
    ASSERT_TRUE(pid.ok()) << pid.error().to_string();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    int status = 0;
    EXPECT_EQ(waitpid(*pid, &status, WNOHANG), 0) << "the child died with the calling thread";
    kill(-*pid, SIGKILL);
    waitpid(*pid, &status, 0);
}

TEST(ProcessError, MissingFolderIsAnError) {
    SpawnOptions o;
    o.cwd = "/nonexistent/kforge-no-such-folder";
    auto pid = spawn_process({"/bin/true"}, o);
    ASSERT_FALSE(pid.ok());
    EXPECT_NE(pid.error().message.find("No such file"), std::string::npos)
        << pid.error().to_string();
}

}  // namespace
}  // namespace kforge
