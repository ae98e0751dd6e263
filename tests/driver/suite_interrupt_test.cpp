// `kforge suite` stopped from outside: a SIGTERM in the middle of the suite (on the simulated
// device, small problems) ends it with the summary of every problem, its unfinished runs marked
// `interrupted` in the store, and the same command run again resumes those runs.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace kforge {
namespace {
namespace fs = std::filesystem;

std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A folder of built-in problems at small shapes (dims 256, a row length C of 1024), each with
// its start program beside it.
fs::path small_suite(const fs::path& root) {
    const fs::path dir = root / "tiny";
    fs::create_directories(dir);
    const fs::path problems = fs::path(KFORGE_SOURCE_DIR) / "problems";
    for (const char* name : {"bias_gelu_mul_f32", "gemm_bf16_4096", "layer_norm_f32"}) {
        auto j = nlohmann::json::parse(read(problems / (std::string(name) + ".json")));
        for (auto& [dim, value] : j["dims"].items()) value = dim == "C" ? 1024 : 256;
        std::ofstream(dir / (std::string(name) + ".json")) << j.dump(2);
        fs::copy_file(problems / (std::string(name) + ".kf"), dir / (std::string(name) + ".kf"));
    }
    return dir;
}

pid_t start_kforge(const std::vector<std::string>& args, const fs::path& out) {
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        std::vector<char*> argv{const_cast<char*>(KFORGE_CLI_PATH)};
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(KFORGE_CLI_PATH, argv.data());
        _exit(127);
    }
    return pid;
}

// Waits up to `timeout_s` for `pid`; its exit status, or -1 when it did not end (then killed).
int wait_for(pid_t pid, double timeout_s) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    int status = 0;
    while (std::chrono::steady_clock::now() < until) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

TEST(SuiteInterrupt, SigtermWritesTheSummaryMarksRunsInterruptedAndResumes) {
    const fs::path root = fs::temp_directory_path() /
                          ("kforge_suite_interrupt_" + std::to_string(getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
    const fs::path dir = small_suite(root);
    const std::string db = (root / "kforge.db").string();
    const fs::path out = root / "out.txt";
    const std::vector<std::string> args = {"suite", dir.string(), "--device", "sim",
                                           "--budget-wall", "300", "--db", db};
    pid_t pid = start_kforge(args, out);
    // stopped once the start phase is over and a round has run
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (read(out).find(" round 1:") == std::string::npos &&
           std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_NE(read(out).find(" round 1:"), std::string::npos) << read(out);
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(kill(pid, SIGTERM), 0);
    const int rc = wait_for(pid, 60);
    const double stop_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string text = read(out);
    ASSERT_NE(rc, -1) << "the suite did not end within 60 s of SIGTERM:\n" << text;
    EXPECT_EQ(rc, 128 + SIGTERM) << text;
    EXPECT_LT(stop_s, 60.0);
    // every problem's summary, the interruption said
    for (const char* name : {"bias_gelu_mul_f32", "gemm_bf16_4096", "layer_norm_f32"})
        EXPECT_NE(text.find("problem " + std::string(name) + ", run "), std::string::npos)
            << name << " has no summary:\n" << text;
    EXPECT_NE(text.find("interrupted by SIGTERM"), std::string::npos) << text;
    int interrupted = 0;
    {
        auto store = open_store(db);
        ASSERT_TRUE(store) << store.error().to_string();
        auto runs = store->list_runs();
        ASSERT_TRUE(runs);
        ASSERT_EQ(runs->size(), 3u);
        for (const RunSummary& r : *runs) {
            EXPECT_NE(r.status, RunStatus::kRunning) << "run " << r.id << " left running";
            interrupted += r.status == RunStatus::kInterrupted;
        }
    }
    EXPECT_GE(interrupted, 1) << text;
    // the same command again resumes the interrupted runs (a short budget: it only has to start)
    std::vector<std::string> again = args;
    again[5] = "3";
    pid = start_kforge(again, out);
    const int rc2 = wait_for(pid, 120);
    const std::string text2 = read(out);
    EXPECT_NE(rc2, -1) << text2;
    EXPECT_NE(text2.find(" (interrupted)"), std::string::npos) << text2;
    EXPECT_NE(text2.find("resume "), std::string::npos) << text2;
    auto store = open_store(db);
    ASSERT_TRUE(store);
    auto runs = store->list_runs();
    ASSERT_TRUE(runs);
    // interrupted runs go on; a run that had finished is a new run
    EXPECT_EQ(runs->size(), 3u + (3u - static_cast<size_t>(interrupted)))
        << "a resumed suite started new runs for interrupted ones:\n" << text2;
    fs::remove_all(root);
}

}  // namespace
}  // namespace kforge
