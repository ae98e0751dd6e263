// The supervisor against real misbehaving worker processes (sh scripts): workers that never
// answer, exit at once, print garbage, die by a signal mid-task, leave partial lines, speak
// another protocol version, spawn grandchildren, leak memory or ask for a restart. Every case
// must end in a status or an Error within its deadline, never a hang or an exception.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "worker/supervisor.h"

namespace kforge::eval {
namespace {

const std::string kHello =
    R"(echo '{"type":"hello","protocol_version":1,"device":{"name":"fake","simulated":true},"pid":1}'; )";

// A worker that answers every task; `status` and `extra` shape each answer ($n counts lines).
std::string answering_worker(const std::string& status, const std::string& report,
                             const std::string& restart = "false") {
    return kHello + R"(n=0; while read -r l; do n=$((n+1)); )" +
           R"(id=$(echo "$l" | sed 's/.*"id":\([0-9]*\).*/\1/'); )" +
           R"(echo "{\"type\":\"result\",\"protocol_version\":1,\"id\":$id,\"status\":\")" +
           status + R"(\",\"report\":)" + report + R"(,\"restart\":)" + restart + R"(}"; )" +
           R"(case "$l" in *shutdown*) exit 0;; esac; done)";
}

SupervisorOptions options_for(const std::string& script) {
    SupervisorOptions o;
    o.worker_argv = {"/bin/sh", "-c", script};
    o.start_timeout_s = 5;
    o.task_timeout_s = 5;
    o.control_timeout_s = 5;
    o.check_memory = false;
    return o;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(SupervisorMisbehaving, MissingBinaryIsAnError) {
    SupervisorOptions o;
    o.worker_argv = {"/nonexistent/kforge-worker"};
    Supervisor s(o);
    auto st = s.start();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("cannot start the worker"), std::string::npos);
}

TEST(SupervisorMisbehaving, ExitAtOnceGivesCodeAndStderr) {
    Supervisor s(options_for("echo 'no device here' >&2; exit 3"));
    auto st = s.start();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("exited with code 3"), std::string::npos)
        << st.error().message;
    EXPECT_NE(st.error().message.find("no device here"), std::string::npos);
}

TEST(SupervisorMisbehaving, GarbageInsteadOfHello) {
    Supervisor s(options_for("echo 'Segmentation fault (core dumped)'; sleep 100"));
    auto t0 = std::chrono::steady_clock::now();
    auto st = s.start();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("not JSON"), std::string::npos) << st.error().message;
    EXPECT_LT(seconds_since(t0), 4.0);  // killed, not waited for
}

TEST(SupervisorMisbehaving, SilentWorkerTimesOutAtStart) {
    auto o = options_for("sleep 100");
    o.start_timeout_s = 0.5;
    Supervisor s(o);
    auto t0 = std::chrono::steady_clock::now();
    auto st = s.start();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("no hello"), std::string::npos);
    EXPECT_LT(seconds_since(t0), 4.0);
    EXPECT_FALSE(s.worker_running());
}

TEST(SupervisorMisbehaving, ProtocolVersionMismatchIsClear) {
    Supervisor s(options_for(
        R"(echo '{"type":"hello","protocol_version":2,"device":{"name":"x","simulated":true},"pid":1}'; sleep 100)"));
    auto st = s.start();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("protocol version mismatch: peer speaks 2"),
              std::string::npos)
        << st.error().message;
}

TEST(SupervisorMisbehaving, HangingTaskIsKilledAndNextTaskGetsFreshWorker) {
    Supervisor s(options_for(kHello + "read -r l; sleep 100"));
    auto t0 = std::chrono::steady_clock::now();
    auto r = s.evaluate(nlohmann::json::object(), 0.5);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->status, EvalStatus::kTimedOut);
    EXPECT_NE(r->message.find("SIGKILL"), std::string::npos) << r->message;
    EXPECT_LT(seconds_since(t0), 4.0);
    auto r2 = s.evaluate(nlohmann::json::object(), 0.3);
    ASSERT_TRUE(r2.ok());
    EXPECT_EQ(r2->status, EvalStatus::kTimedOut);
    EXPECT_EQ(s.stats().workers_started, 2);
    EXPECT_EQ(s.stats().timeouts, 2);
}

TEST(SupervisorMisbehaving, TimeoutKillsTheWholeProcessGroup) {
    char dir[] = "/tmp/kforge-sup-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    std::string pid_file = std::string(dir) + "/grandchild.pid";
    Supervisor s(options_for(kHello + "sleep 100 & echo $! > " + pid_file +
                             "; read -r l; sleep 100"));
    auto r = s.evaluate(nlohmann::json::object(), 0.5);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, EvalStatus::kTimedOut);
    pid_t grandchild = 0;
    std::ifstream(pid_file) >> grandchild;
    ASSERT_GT(grandchild, 0);
    bool gone = false;
    for (int i = 0; i < 200 && !gone; ++i) {  // reaped by init shortly after SIGKILL
        gone = kill(grandchild, 0) != 0;
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(gone) << "grandchild " << grandchild << " survived the group kill";
    unlink(pid_file.c_str());
    rmdir(dir);
}

TEST(SupervisorMisbehaving, DeathBySignalIsCrashWithSignalAndLog) {
    Supervisor s(options_for(kHello + "read -r l; echo 'about to fault' >&2; kill -SEGV $$"));
    auto r = s.evaluate(nlohmann::json::object());
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->status, EvalStatus::kCrashed);
    EXPECT_NE(r->message.find("SIGSEGV"), std::string::npos) << r->message;
    EXPECT_NE(r->message.find("about to fault"), std::string::npos) << r->message;
    EXPECT_EQ(s.stats().crashes, 1);
}

TEST(SupervisorMisbehaving, GarbageMidTaskIsCrashNotException) {
    Supervisor s(options_for(kHello + "read -r l; echo '{\"type\": [[[[garbage'; sleep 100"));
    auto t0 = std::chrono::steady_clock::now();
    auto r = s.evaluate(nlohmann::json::object());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, EvalStatus::kCrashed);
    EXPECT_NE(r->message.find("protocol violation"), std::string::npos) << r->message;
    EXPECT_LT(seconds_since(t0), 4.0);
}

TEST(SupervisorMisbehaving, PartialLineThenExitIsCrash) {
    Supervisor s(options_for(kHello + R"(read -r l; printf '{"type":"resu'; exit 1)"));
    auto r = s.evaluate(nlohmann::json::object());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, EvalStatus::kCrashed);
    EXPECT_NE(r->message.find("exited with code 1"), std::string::npos) << r->message;
    EXPECT_NE(r->message.find("partial output"), std::string::npos) << r->message;
}

TEST(SupervisorMisbehaving, WorkerGoneBeforeTaskIsCrashNotSigpipe) {
    Supervisor s(options_for(kHello + "exec 0<&-; exit 0"));
    ASSERT_TRUE(s.start().ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto r = s.evaluate(nlohmann::json{{"big", std::string(1 << 20, 'x')}});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, EvalStatus::kCrashed);
}

TEST(SupervisorMisbehaving, WrongIdIsProtocolViolation) {
    Supervisor s(options_for(
        kHello + R"(read -r l; echo '{"type":"result","protocol_version":1,"id":999,"status":"passed","report":{}}'; sleep 100)"));
    auto r = s.evaluate(nlohmann::json::object());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, EvalStatus::kCrashed);
    EXPECT_NE(r->message.find("expected 1"), std::string::npos) << r->message;
}

TEST(SupervisorMisbehaving, RecycleAfterNTasks) {
    auto o = options_for(answering_worker("passed", "{}"));
    o.recycle_after_tasks = 2;
    Supervisor s(o);
    for (int i = 0; i < 3; ++i) {
        auto r = s.evaluate(nlohmann::json::object());
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_EQ(r->status, EvalStatus::kPassed);
        EXPECT_EQ(r->notes.empty(), i != 1) << i;
    }
    EXPECT_EQ(s.stats().recycles, 1);
    EXPECT_EQ(s.stats().workers_started, 2);
    EXPECT_EQ(s.stats().crashes, 0);
}

TEST(SupervisorMisbehaving, RestartFlagReplacesWorker) {
    Supervisor s(options_for(answering_worker("launch_failed", "{}", "true")));
    auto r = s.evaluate(nlohmann::json::object());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, EvalStatus::kLaunchFailed);
    ASSERT_EQ(r->notes.size(), 1u);
    EXPECT_NE(r->notes[0].find("device is unusable"), std::string::npos);
    EXPECT_FALSE(s.worker_running());
    EXPECT_EQ(s.stats().restarts_broken, 1);
    ASSERT_TRUE(s.ping().ok());
    EXPECT_EQ(s.stats().workers_started, 2);
}

TEST(SupervisorMisbehaving, MemoryGrowthRestartsWorker) {
    // Every answer reports n GB in use (n counts the worker's answers): 1 GB at the hello,
    // 3 GB after the first task (the baseline: a worker keeps its last candidate's buffers),
    // 5 GB after the second: 2 GB of growth past the baseline is a leak.
    auto o = options_for(answering_worker("passed", R"({\"used_bytes\":${n}000000000})"));
    o.check_memory = true;
    Supervisor s(o);
    auto first = s.evaluate(nlohmann::json::object());
    ASSERT_TRUE(first.ok()) << first.error().to_string();
    EXPECT_TRUE(first->notes.empty()) << first->notes[0];
    EXPECT_EQ(s.stats().restarts_leak, 0);
    auto r = s.evaluate(nlohmann::json::object());
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->status, EvalStatus::kPassed);
    ASSERT_EQ(r->notes.size(), 1u);
    EXPECT_NE(r->notes[0].find("device memory grew by 1907 MiB"), std::string::npos)
        << r->notes[0];
    EXPECT_EQ(s.stats().restarts_leak, 1);
}

TEST(SupervisorMisbehaving, WorkerErrorMessageIsAnError) {
    Supervisor s(options_for(
        kHello + R"(read -r l; echo '{"type":"error","protocol_version":1,"id":1,"message":"bad payload"}'; sleep 100)"));
    auto r = s.evaluate(nlohmann::json::object());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("bad payload"), std::string::npos);
    EXPECT_TRUE(s.worker_running());
}

}  // namespace
}  // namespace kforge::eval
