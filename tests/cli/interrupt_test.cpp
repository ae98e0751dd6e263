// Ctrl-C during `kforge optimize`, typed on a terminal: the binary runs on a pseudo-terminal of
// 80 columns (forkpty), and the test types ^C on it once the first evaluation is in the store, so
// the terminal's line discipline sends SIGINT to the foreground process group, exactly as a
// user's (or tmux send-keys C-c) would. Checked: exit 130, the run `interrupted` in the store,
// --out written, every status line within 80 columns, and the printed --resume command finishing
// the run. A second ^C exits at once (130) and leaves a store that opens and resumes. Plain
// output (stdout a pipe) has no \r; --progress json is one JSON object per line. Where tmux is
// installed, the same Ctrl-C is also sent with tmux send-keys C-c. `kforge suite` on the same
// terminals draws its own status line within the width.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "tests/cli_run.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;
using kforge::test::run_cli;

bool read_text(const std::string& path, std::string& out) {
    std::ifstream in(path);
    if (!in) return false;
    std::stringstream b;
    b << in.rdbuf();
    out = b.str();
    return true;
}

struct PtyRun {
    int rc = -1;
    std::string out;  // everything the terminal showed
};

class Interrupt : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("kforge_interrupt_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        if (!HasFailure()) fs::remove_all(dir_);
    }
    std::string db() const { return (dir_ / "k.db").string(); }
    std::string out() const { return (dir_ / "out").string(); }
    std::string spec() const {
        return (fs::path(KFORGE_SOURCE_DIR) / "problems" / "softmax_long_rows_f32.json").string();
    }

    // Evaluations in the store so far (0 while it does not exist yet).
    int64_t evaluations() const {
        if (!fs::exists(db())) return 0;
        auto d = Database::open(db(), 200);
        if (!d) return 0;
        auto n = d->query_text("SELECT count(*) FROM evaluations");
        return n ? std::stoll(*n) : 0;
    }

    // `kforge optimize` on an 80-column pty; `interrupts` ^C typed once the first evaluation is
    // stored (0: none).
    PtyRun optimize_on_pty(int interrupts, unsigned short columns = 80) {
        return kforge_on_pty({"optimize", spec(), "--device", "sim", "--rounds", "3",
                              "--per-round", "2", "--db", db(), "--out", out(), "--profile-top",
                              "0"},
                             interrupts, columns);
    }

    // `kforge ARGS` on a pty of `columns`, as optimize_on_pty.
    PtyRun kforge_on_pty(const std::vector<std::string>& args, int interrupts,
                         unsigned short columns) {
        PtyRun r;
        std::vector<char*> argv{const_cast<char*>(KFORGE_CLI_PATH)};
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        struct winsize ws {};
        ws.ws_row = 24;
        ws.ws_col = columns;
        int master = -1;
        const pid_t pid = forkpty(&master, nullptr, nullptr, &ws);
        if (pid < 0) return r;
        if (pid == 0) {
            ::unsetenv("COLUMNS");
            execv(KFORGE_CLI_PATH, argv.data());
            _exit(127);
        }
        const auto t0 = std::chrono::steady_clock::now();
        int sent = 0;
        int status = 0;
        bool exited = false;
        while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120)) {
            pollfd p{master, POLLIN, 0};
            if (poll(&p, 1, 20) > 0) {
                char buf[4096];
                const ssize_t n = read(master, buf, sizeof buf);
                if (n > 0) r.out.append(buf, static_cast<size_t>(n));
                else if (exited) break;  // EIO: the child closed the terminal
            } else if (exited) {
                break;
            }
            if (!exited && waitpid(pid, &status, WNOHANG) == pid) exited = true;
            // the first ^C once an evaluation is stored; a second once the first was seen (two
            // at once would merge into one pending SIGINT)
            const bool ready = sent == 0 ? evaluations() > 0
                                         : r.out.find("stopping after") != std::string::npos;
            if (!exited && sent < interrupts && ready) {
                const char ctrl_c = '\x03';  // VINTR: the line discipline raises SIGINT
                EXPECT_EQ(write(master, &ctrl_c, 1), 1);
                ++sent;
            }
        }
        if (!exited) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            ADD_FAILURE() << "kforge " << args[0] << " did not end within 120 s:\n" << r.out;
        }
        close(master);
        r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return r;
    }

    RunStatus run_status(int64_t run) {
        auto s = Store::open(db());
        EXPECT_TRUE(s.ok()) << s.error().to_string();
        if (!s) return RunStatus::kFailed;
        auto rec = s->get_run(run);
        EXPECT_TRUE(rec.ok());
        return rec ? rec->status : RunStatus::kFailed;
    }

    fs::path dir_;
};

// Every status line (what follows "\r\033[K" up to the next \r or \n) fits `columns`. With
// `marker`, only the lines holding it are status lines: the others are event lines printed above
// it (a suite's start phase and rounds), which the terminal may wrap.
void expect_status_lines_fit(const std::string& out, size_t columns,
                             const std::string& marker = "") {
    size_t seen = 0;
    for (size_t at = out.find("\r\033[K"); at != std::string::npos;
         at = out.find("\r\033[K", at + 1)) {
        const size_t from = at + 4;
        const size_t end = out.find_first_of("\r\n", from);
        const std::string line = out.substr(from, end == std::string::npos ? end : end - from);
        if (!marker.empty() && line.find(marker) == std::string::npos) continue;
        if (line.empty()) continue;
        ++seen;
        EXPECT_LT(line.size(), columns) << "status line wider than the terminal: " << line;
    }
    EXPECT_GT(seen, 0u) << "no status line drawn on the terminal:\n" << out;
}

TEST_F(Interrupt, CtrlCOnATerminalLeavesAnInterruptedRunThatResumes) {
    const PtyRun r = optimize_on_pty(1);
    EXPECT_EQ(r.rc, 130) << r.out;
    EXPECT_NE(r.out.find("stopping after the evaluation in flight"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("stopped: interrupted (SIGINT)"), std::string::npos) << r.out;
    EXPECT_EQ(run_status(1), RunStatus::kInterrupted);
    EXPECT_TRUE(fs::exists(fs::path(out()) / "evidence.json")) << r.out;
    expect_status_lines_fit(r.out, 80);
    // the budget is stated at the start; a round limit is never "unlimited"
    EXPECT_NE(r.out.find("budget: rounds 3"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("unlimited"), std::string::npos) << r.out;

    std::smatch m;
    const std::regex resume(R"(continue it with:\r?\n  ([^\r\n]+))");
    ASSERT_TRUE(std::regex_search(r.out, m, resume)) << r.out;
    const std::string command = m[1];
    EXPECT_NE(command.find("--resume 1"), std::string::npos) << command;
    EXPECT_EQ(command.rfind(KFORGE_CLI_PATH, 0), 0u) << command;
    // the printed command, as printed, through the shell
    const auto again = run_cli(command.substr(std::string(KFORGE_CLI_PATH).size()));
    EXPECT_EQ(again.rc, 0) << again.out;
    EXPECT_NE(again.out.find("stopped: round limit reached"), std::string::npos) << again.out;
    EXPECT_EQ(again.out.find('\r'), std::string::npos) << "plain output has no \\r";
    EXPECT_EQ(run_status(1), RunStatus::kFinished);
    EXPECT_TRUE(fs::exists(fs::path(out()) / "best.kf"));
}

// The same through tmux (send-keys C-c on an 80-column pane), where tmux is installed; the
// forkpty test above is the one that always runs.
TEST_F(Interrupt, CtrlCThroughTmux) {
    if (std::system("command -v tmux >/dev/null 2>&1") != 0) GTEST_SKIP() << "no tmux on PATH";
    const std::string tmux = "tmux -L kforge_test_" + std::to_string(::getpid()) + " ";
    const std::string rc_file = (dir_ / "rc").string();
    const std::string inner = std::string(KFORGE_CLI_PATH) + " optimize " + spec() +
                              " --device sim --rounds 3 --per-round 2 --profile-top 0 --db " +
                              db() + " --out " + out() + "; echo \\$? > " + rc_file + "; sleep 60";
    ASSERT_EQ(std::system((tmux + "new-session -d -x 80 -y 50 \"bash -c '" + inner + "'\"").c_str()),
              0);
    const auto t0 = std::chrono::steady_clock::now();
    bool sent = false;
    while (!fs::exists(rc_file) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120)) {
        if (!sent && evaluations() > 0) {
            EXPECT_EQ(std::system((tmux + "send-keys C-c").c_str()), 0);
            sent = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const std::string pane_file = (dir_ / "pane.txt").string();
    (void)std::system((tmux + "capture-pane -p -J -S -200 > " + pane_file).c_str());
    (void)std::system((tmux + "kill-server").c_str());
    std::string pane, rc;
    read_text(pane_file, pane);
    read_text(rc_file, rc);
    EXPECT_EQ(rc, "130\n") << pane;
    EXPECT_EQ(run_status(1), RunStatus::kInterrupted);
    EXPECT_TRUE(fs::exists(fs::path(out()) / "evidence.json")) << pane;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(pane, m, std::regex(R"(continue it with:\n +([^\n]+))"))) << pane;
    const std::string command = m[1];
    const auto again = run_cli(command.substr(std::string(KFORGE_CLI_PATH).size()));
    EXPECT_EQ(again.rc, 0) << again.out;
    EXPECT_EQ(run_status(1), RunStatus::kFinished);
}

// A narrow terminal: the name shrinks and fields go, the line never wraps.
TEST_F(Interrupt, StatusLineFitsANarrowTerminal) {
    const PtyRun r = optimize_on_pty(0, 40);
    EXPECT_EQ(r.rc, 0) << r.out;
    expect_status_lines_fit(r.out, 40);
    // the name gave way first: the best and its share of SOL still show
    EXPECT_NE(r.out.find("softmax_lon~ | best"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("% SOL"), std::string::npos) << r.out;
}

// `kforge suite` draws its own status line the same way (the problem in progress, problems done
// of all, the best speedup so far, the suite's budget used and left) under the start phase's and
// the rounds' lines; within 80 columns, and within 40 (the name shrinks); piped, whole lines.
TEST_F(Interrupt, SuiteStatusLineFitsTheTerminal) {
    const fs::path suite = dir_ / "suite";
    fs::create_directories(suite);
    for (const std::string name : {"softmax_long_rows_f32", "row_sum_f32"})
        for (const std::string ext : {".json", ".kf"})
            fs::copy_file(fs::path(KFORGE_SOURCE_DIR) / "problems" / (name + ext),
                          suite / (name + ext));
    auto args = [&](const std::string& db) {
        return std::vector<std::string>{"suite", suite.string(), "--device", "sim", "--rounds",
                                        "1", "--per-round", "2", "--profile-top", "0",
                                        "--budget-wall", "600", "--db", db};
    };
    const PtyRun r = kforge_on_pty(args(db()), 0, 80);
    EXPECT_EQ(r.rc, 0) << r.out;
    expect_status_lines_fit(r.out, 80, "/2 done");
    // while a round runs: the problem and its rounds; the end: every problem done
    const std::string at = R"(\r\x1b\[K)";  // where a status line is drawn
    EXPECT_TRUE(std::regex_search(
        r.out, std::regex(at + R"((softmax_long_rows_f32|row_sum_f32) \[0\] \| [01]/2 done \| )")))
        << r.out;
    std::smatch last;
    EXPECT_TRUE(std::regex_search(
        r.out, last, std::regex(at + R"((suite \| 2/2 done \| best [0-9.]+x \| wall [0-9]+/600s \| )"
                                     R"([0-9ms]+ left \| [0-9]+ evals \| \(sim\))\r?\n)")))
        << r.out;
    EXPECT_LT(last.str(1).size(), 80u) << last.str(1);
    // the rounds' and the start phase's lines stay whole above it
    EXPECT_TRUE(std::regex_search(
        r.out, std::regex(at + R"(row_sum_f32 round 1: best [^\r\n]+\r?\n)")))
        << r.out;
    EXPECT_NE(r.out.find("start row_sum_f32: "), std::string::npos) << r.out;

    const PtyRun narrow = kforge_on_pty(args((dir_ / "narrow.db").string()), 0, 40);
    EXPECT_EQ(narrow.rc, 0) << narrow.out;
    expect_status_lines_fit(narrow.out, 40, "/2 done");
    EXPECT_NE(narrow.out.find("softmax_lon~ | "), std::string::npos) << narrow.out;

    std::string cmd;
    for (const std::string& a : args((dir_ / "piped.db").string())) cmd += " " + a;
    const auto piped = run_cli(cmd);
    EXPECT_EQ(piped.rc, 0) << piped.out;
    EXPECT_EQ(piped.out.find('\r'), std::string::npos) << "plain output has no \\r";
    EXPECT_NE(piped.out.find("suite | 2/2 done | best "), std::string::npos) << piped.out;

    // --progress json: one object per line, "suite" events as it goes, the result last
    const auto json = kforge::test::run_cli_stdout(cmd.substr(0, cmd.rfind(" --db ")) +
                                                   " --progress json --db " +
                                                   (dir_ / "json.db").string());
    EXPECT_EQ(json.rc, 0) << json.out;
    std::istringstream lines(json.out);
    std::string line;
    nlohmann::json final;
    int suite_events = 0;
    while (std::getline(lines, line)) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        ASSERT_FALSE(j.is_discarded()) << "not a JSON line: " << line;
        if (j.value("event", "") == "suite") {
            ++suite_events;
            EXPECT_EQ(j["problems"], 2) << line;
        }
        final = j;
    }
    EXPECT_GT(suite_events, 2);
    EXPECT_EQ(final.value("event", ""), "result") << json.out;
    EXPECT_EQ(final["runs"].size(), 2u) << json.out;
}

TEST_F(Interrupt, SecondCtrlCExitsAtOnceAndTheStoreStillResumes) {
    const PtyRun r = optimize_on_pty(2);
    EXPECT_EQ(r.rc, 130) << r.out;
    EXPECT_NE(r.out.find("second interrupt, exiting now"), std::string::npos) << r.out;
    // killed before it could mark anything: the store opens (quick_check) and the run resumes
    const RunStatus st = run_status(1);
    EXPECT_TRUE(st == RunStatus::kRunning || st == RunStatus::kInterrupted);
    const auto again = run_cli("optimize --resume 1 --device sim --rounds 1 --per-round 2 "
                               "--profile-top 0 --db " + db());
    EXPECT_EQ(again.rc, 0) << again.out;
    EXPECT_EQ(run_status(1), RunStatus::kFinished);
}

TEST_F(Interrupt, ProgressAsJsonLines) {
    // stdout alone (run_cli would add stderr)
    const auto r = kforge::test::run_cli_stdout(
        "optimize " + spec() + " --device sim --rounds 2 --per-round 2 --profile-top 0 "
        "--progress json --db " + db());
    EXPECT_EQ(r.rc, 0) << r.out;
    std::istringstream lines(r.out);
    std::string line, last;
    int evaluations = 0, rounds = 0;
    while (std::getline(lines, line)) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        ASSERT_FALSE(j.is_discarded()) << "not a JSON line: " << line;
        ASSERT_TRUE(j.contains("event")) << line;
        evaluations += j["event"] == "evaluation";
        rounds += j["event"] == "round";
        last = j["event"];
    }
    EXPECT_GT(evaluations, 0);
    EXPECT_EQ(rounds, 2);
    EXPECT_EQ(last, "result");
}

}  // namespace
}  // namespace kforge
