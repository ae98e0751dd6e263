// Crash safety: a child process writes evaluations with their measurements in a tight loop and
// is SIGKILLed at random moments. Afterwards the database must pass PRAGMA integrity_check and
// every evaluation present must have all of its measurements (transactions are atomic).
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "store_fixture.h"

namespace kforge {
namespace {

// The child: opens its own connection, signals the parent after the first commit, then writes
// until it is killed. Evaluation i carries 1 + i % 97 measurements and says so in its evidence.
[[noreturn]] void write_forever(const std::string& path, int64_t candidate, int64_t device,
                                int ready_fd) {
    auto store = open_store(path);
    if (!store) _exit(10);
    for (int64_t i = 0;; ++i) {
        int n = 1 + static_cast<int>(i % 97);
        auto e = test::test_evaluation(candidate, device, n, 1000.0 + static_cast<double>(i));
        e.evidence_json = nlohmann::json{{"n", n}}.dump();
        if (!store->add_evaluation(e)) _exit(11);
        if (i == 0) {
            char byte = 1;
            if (write(ready_fd, &byte, 1) != 1) _exit(12);
        }
    }
}

TEST(StoreCrash, KilledWritersLeaveWholeEvaluations) {
    auto dir = test::make_temp_dir();
    std::string path = (dir / "kforge.db").string();
    int64_t device = 0, candidate = 0;
    {
        auto s = open_store(path);
        ASSERT_TRUE(s.ok()) << s.error().to_string();
        device = *s->upsert_device(test::test_device());
        int64_t problem = *s->upsert_problem("gemm_small", test::kSpecJson);
        NewRun r;
        r.problem_id = problem;
        r.device_id = device;
        int64_t run = *s->create_run(r);
        candidate = s->add_candidate(test::test_candidate(run, problem, "program a"))->id;
    }  // no connection is open across fork()

    unsigned seed = static_cast<unsigned>(
        std::chrono::steady_clock::now().time_since_epoch().count());
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> delay_us(0, 40000);
    SCOPED_TRACE("seed " + std::to_string(seed));

    constexpr int kIterations = 12;
    for (int it = 0; it < kIterations; ++it) {
        int fds[2];
        ASSERT_EQ(pipe(fds), 0);
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            close(fds[0]);
            write_forever(path, candidate, device, fds[1]);
        }
        close(fds[1]);
        pollfd pfd{fds[0], POLLIN, 0};
        int ready = poll(&pfd, 1, 10000);  // bounded: a stuck child fails the test, never hangs
        char byte = 0;
        bool started = ready == 1 && read(fds[0], &byte, 1) == 1;
        close(fds[0]);
        if (started) std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
        kill(pid, SIGKILL);
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(started) << "iteration " << it << ": child did not commit its first write "
                             << "(exit status " << status << ")";
        ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
            << "iteration " << it << ": child ended on its own with status " << status;
    }

    auto s = open_store(path);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    EXPECT_EQ(*s->db().query_text("PRAGMA integrity_check"), "ok");
    EXPECT_EQ(*s->db().query_text("SELECT count(*) FROM pragma_foreign_key_check"), "0")
        << "a measurement or evaluation points at a missing row";
    auto evals = s->list_evaluations(candidate);
    ASSERT_TRUE(evals.ok()) << evals.error().to_string();
    EXPECT_GE(evals->size(), static_cast<size_t>(kIterations));  // each child committed one
    for (const auto& e : *evals) {
        int n = nlohmann::json::parse(e.evidence_json)["n"];
        EXPECT_EQ(e.measurements.size(), static_cast<size_t>(n)) << "evaluation " << e.id;
    }
    auto orphans = s->db().query_text(
        "SELECT count(*) FROM measurements m LEFT JOIN evaluations e ON e.id = m.evaluation_id "
        "WHERE e.id IS NULL");
    EXPECT_EQ(*orphans, "0");
    std::filesystem::remove_all(dir);
}

// Several processes open one fresh file at once (racing to create the schema) and write
// concurrently: the busy timeout and IMMEDIATE transactions serialize them, nothing is lost.
TEST(StoreCrash, ConcurrentWritersOnAFreshDatabaseAllSucceed) {
    auto dir = test::make_temp_dir();
    std::string path = (dir / "kforge.db").string();
    constexpr int kWriters = 4, kEvaluations = 40;
    std::vector<pid_t> pids;
    for (int w = 0; w < kWriters; ++w) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            auto s = open_store(path);
            if (!s) {
                std::fprintf(stderr, "writer %d: %s\n", w, s.error().to_string().c_str());
                _exit(10);
            }
            auto device = s->upsert_device(test::test_device());
            auto problem = s->upsert_problem("gemm_small", test::kSpecJson);
            if (!device || !problem) _exit(11);
            NewRun r;
            r.problem_id = *problem;
            r.device_id = *device;
            auto run = s->create_run(r);
            if (!run) _exit(12);
            auto c = s->add_candidate(test::test_candidate(*run, *problem, "program a"));
            if (!c) _exit(13);
            for (int i = 0; i < kEvaluations; ++i) {
                if (!s->add_evaluation(test::test_evaluation(c->id, *device, 8))) _exit(14);
            }
            _exit(0);
        }
        pids.push_back(pid);
    }
    for (pid_t pid : pids) {
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    }
    auto s = open_store(path);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    EXPECT_EQ(*s->db().query_text("SELECT count(*) FROM devices"), "1");
    EXPECT_EQ(*s->db().query_text("SELECT count(*) FROM problems"), "1");
    EXPECT_EQ(*s->db().query_text("SELECT count(*) FROM evaluations"),
              std::to_string(kWriters * kEvaluations));
    EXPECT_EQ(*s->db().query_text("SELECT count(*) FROM measurements"),
              std::to_string(kWriters * kEvaluations * 8));
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kforge
