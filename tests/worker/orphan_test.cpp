// Workers die with their supervisor, and a hung worker is declared hung after the problem's
// expected time, not 900 s: `kforge eval --isolate` on the simulated device with a worker that
// hangs (--sim-fault process_hang) runs as a real child process. This test process is a child
// subreaper, so an orphaned worker is re-parented to it (not to init): it can wait for it, and
// kills one that survives.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

const std::string kSource = KFORGE_SOURCE_DIR;

// Starts `kforge eval --isolate` on the simulated device with a hanging worker; its stdout and
// stderr go to `out_path`.
pid_t start_isolated_eval(const std::string& out_path, const std::string& fault) {
    std::vector<std::string> args{KFORGE_CLI_PATH, "eval", "--isolate", "--device", "sim",
                                  "--sim-fault", fault,
                                  "--problem", kSource + "/problems/row_sum_f32.json",
                                  "--program", kSource + "/tests/eval/data/row_sum_f32.kf"};
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
    }
    return pid;
}

// The pid of a child of `parent` (from /proc), or 0.
pid_t child_of(pid_t parent) {
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(e.path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'
        auto close = line.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 1));
        char state = 0;
        pid_t ppid = 0;
        rest >> state >> ppid;
        if (ppid == parent) return static_cast<pid_t>(std::stoi(name));
    }
    return 0;
}

// Waits up to `limit` for `pid` (our child: the subreaper adopted it) to end; true if it did.
bool reaped_within(pid_t pid, std::chrono::milliseconds limit) {
    auto end = Clock::now() + limit;
    while (Clock::now() < end) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno == ECHILD)) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

std::string read_all(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class OrphanedWorker : public ::testing::TestWithParam<int> {};

// The supervisor (`kforge eval --isolate`) is killed by SIGKILL (nothing of it runs) or
// interrupted by SIGINT (a Ctrl-C: the worker, in its own process group, never sees it) while
// its worker hangs in a task: the worker must be gone within two seconds.
TEST_P(OrphanedWorker, DiesWithItsSupervisor) {
    const int sig = GetParam();
    ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    std::string out = ::testing::TempDir() + "kforge-orphan-" + std::to_string(getpid()) + ".txt";
    pid_t supervisor = start_isolated_eval(out, "process_hang");
    ASSERT_GT(supervisor, 0);
    pid_t worker = 0;
    for (auto end = Clock::now() + std::chrono::seconds(30); !worker && Clock::now() < end;)
        if (!(worker = child_of(supervisor)))
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_GT(worker, 0) << "no worker started; output:\n" << read_all(out);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // in its hung task by now
    ASSERT_EQ(kill(worker, 0), 0) << "the worker should still hang";
    kill(supervisor, sig);
    int status = 0;
    ASSERT_EQ(waitpid(supervisor, &status, 0), supervisor);
    bool gone = reaped_within(worker, std::chrono::milliseconds(2000));
    if (!gone) {
        kill(worker, SIGKILL);
        reaped_within(worker, std::chrono::milliseconds(2000));
    }
    EXPECT_TRUE(gone) << "worker " << worker << " outlived its supervisor (signal " << sig << ")";
    std::remove(out.c_str());
}

INSTANTIATE_TEST_SUITE_P(Signals, OrphanedWorker, ::testing::Values(SIGKILL, SIGINT, SIGTERM));

// A worker that hangs on a small problem on the simulated device is declared hung (timed_out,
// exit 1) after seconds: the deadline follows the problem's expected time (worker/deadline.h).
TEST(HungWorker, IsDeclaredHungAfterTheExpectedTimeNotAFixedDeadline) {
    ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    std::string out = ::testing::TempDir() + "kforge-hang-" + std::to_string(getpid()) + ".txt";
    auto t0 = Clock::now();
    pid_t supervisor = start_isolated_eval(out, "process_hang");
    ASSERT_GT(supervisor, 0);
    int status = 0;
    bool ended = false;
    while (!ended && Clock::now() - t0 < std::chrono::seconds(60)) {
        ended = waitpid(supervisor, &status, WNOHANG) == supervisor;
        if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!ended) {
        kill(supervisor, SIGKILL);
        waitpid(supervisor, &status, 0);
    }
    std::string text = read_all(out);
    ASSERT_TRUE(ended) << "still waiting after 60 s:\n" << text;
    EXPECT_LT(secs, 30.0) << text;
    ASSERT_TRUE(WIFEXITED(status)) << text;
    EXPECT_EQ(WEXITSTATUS(status), 1) << text;
    EXPECT_NE(text.find("timed_out"), std::string::npos) << text;
    EXPECT_NE(text.find("the deadline was"), std::string::npos) << text;
    std::remove(out.c_str());
}

}  // namespace
