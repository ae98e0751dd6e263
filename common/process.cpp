// spawn_process: fork + setpgid (+ PR_SET_PDEATHSIG) + dup2 + chdir + execvpe, the exec's errno
// through a close-on-exec pipe. run_process: spawn_process with one output pipe polled under
// the deadline and the stop flag, kill(-pgid) to end it, a waitpid that honours both.
#include "common/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "common/stop_request.h"

extern char** environ;

namespace kforge {

namespace {

std::string errno_text(const char* what, int e) { return std::string(what) + ": " + std::strerror(e); }

// The child's environment: the parent's with `env` set (built before the fork: the child may
// only make async-signal-safe calls).
std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& env) {
    std::vector<std::string> out;
    for (char** e = environ; e && *e; ++e) {
        std::string entry(*e);
        const std::string key = entry.substr(0, entry.find('='));
        bool replaced = false;
        for (const auto& [k, v] : env) replaced = replaced || k == key;
        if (!replaced) out.push_back(std::move(entry));
    }
    for (const auto& [k, v] : env) out.push_back(k + "=" + v);
    return out;
}

}  // namespace

namespace {

// PR_SET_PDEATHSIG fires when the *thread* that forked the child ends, not the process. A
// child that must die with kforge is therefore forked by one thread that lives as long as the
// process: the MCP server runs each tool call on a thread of its own, and a worker forked by
// such a call died with it (H100, 2026-12-06: every other evaluate found its worker dead).
class ProcessLifetimeForker {
public:
    template <typename Fn>
    auto run(Fn fn) -> decltype(fn()) {
        std::packaged_task<decltype(fn())()> task(std::move(fn));
        auto result = task.get_future();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            jobs_.push_back([&task] { task(); });
        }
        cv_.notify_one();
        return result.get();
    }

    static ProcessLifetimeForker& instance() {
        // never destroyed: its thread runs until the process exits
        static ProcessLifetimeForker* forker = new ProcessLifetimeForker();
        return *forker;
    }

private:
    ProcessLifetimeForker() {
        std::thread([this] {
            for (;;) {
                std::function<void()> job;
                {
                    std::unique_lock<std::mutex> lock(mutex_);
                    cv_.wait(lock, [this] { return !jobs_.empty(); });
                    job = std::move(jobs_.front());
                    jobs_.pop_front();
                }
                job();
            }
        }).detach();
    }
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> jobs_;
};

Expected<pid_t> spawn_here(const std::vector<std::string>& argv, const SpawnOptions& o);

}  // namespace

Expected<pid_t> spawn_process(const std::vector<std::string>& argv, const SpawnOptions& o) {
    if (!o.die_with_parent) return spawn_here(argv, o);
    return ProcessLifetimeForker::instance().run([&] { return spawn_here(argv, o); });
}

namespace {

Expected<pid_t> spawn_here(const std::vector<std::string>& argv, const SpawnOptions& o) {
    if (argv.empty()) return make_error("", "spawn_process: empty command");
    int err_fds[2];
    if (pipe2(err_fds, O_CLOEXEC) != 0) return make_error(argv[0], errno_text("pipe", errno));
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    std::vector<std::string> env_strings;
    std::vector<char*> cenv;
    if (!o.env.empty()) {
        env_strings = child_environment(o.env);
        for (auto& s : env_strings) cenv.push_back(s.data());
        cenv.push_back(nullptr);
    }
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(err_fds[0]);
        close(err_fds[1]);
        return make_error(argv[0], errno_text("fork", e));
    }
    if (pid == 0) {  // child: async-signal-safe calls only
        auto fail = [&](int e) {
            (void)!write(err_fds[1], &e, sizeof e);
            _exit(127);
        };
        if (o.die_with_parent) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);  // survives execve
            if (getppid() != parent) _exit(126);
        }
        setpgid(0, 0);
        signal(SIGPIPE, SIG_DFL);
        if (o.stdin_fd >= 0 && dup2(o.stdin_fd, STDIN_FILENO) < 0) fail(errno);
        if (o.stdout_fd >= 0 && dup2(o.stdout_fd, STDOUT_FILENO) < 0) fail(errno);
        if (o.stderr_fd >= 0 && dup2(o.stderr_fd, STDERR_FILENO) < 0) fail(errno);
        if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) fail(errno);
        if (cenv.empty()) execvp(cargv[0], cargv.data());
        else execvpe(cargv[0], cargv.data(), cenv.data());
        fail(errno);
    }
    setpgid(pid, pid);  // also from the parent, so the group exists before any kill(-pid)
    close(err_fds[1]);
    int exec_errno = 0;
    ssize_t got;
    do {
        got = read(err_fds[0], &exec_errno, sizeof exec_errno);
    } while (got < 0 && errno == EINTR);
    close(err_fds[0]);
    if (got == sizeof exec_errno) {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return make_error(argv[0], std::string("cannot run: ") + std::strerror(exec_errno));
    }
    return pid;
}

}  // namespace

Expected<ProcessResult> run_process(const std::vector<std::string>& argv, const RunOptions& o) {
    if (argv.empty()) return make_error("", "run_process: empty command");
    int fds[2] = {-1, -1};
    if (o.capture != Capture::kNone && pipe2(fds, O_CLOEXEC) != 0)
        return make_error(argv[0], errno_text("pipe", errno));
    SpawnOptions s;
    s.cwd = o.cwd;
    s.env = o.env;
    if (o.capture != Capture::kNone) s.stdout_fd = fds[1];
    if (o.capture == Capture::kAll) s.stderr_fd = fds[1];
    const auto start = std::chrono::steady_clock::now();
    auto pid = spawn_process(argv, s);
    if (fds[1] >= 0) close(fds[1]);
    if (!pid) {
        if (fds[0] >= 0) close(fds[0]);
        return pid.error();
    }
    const bool has_deadline = o.timeout_s > 0;
    const auto deadline = start + std::chrono::seconds(has_deadline ? o.timeout_s : 0);
    ProcessResult r;
    auto must_end = [&] {  // true once it is to be killed (and kills it, once)
        if (r.timed_out || r.stopped) return true;
        if (has_deadline && std::chrono::steady_clock::now() >= deadline) r.timed_out = true;
        else if (stop_requested()) r.stopped = true;
        else return false;
        kill(-*pid, SIGKILL);
        return true;
    };
    char buf[65536];
    bool open_pipe = fds[0] >= 0;
    while (open_pipe && !must_end()) {
        int wait_ms = 1000;
        if (has_deadline) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            wait_ms = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left.count(), 1000)));
        }
        pollfd p{fds[0], POLLIN, 0};
        int n = poll(&p, 1, wait_ms);
        if (n < 0 && errno != EINTR) break;
        if (n <= 0) continue;
        ssize_t got = read(fds[0], buf, sizeof buf);
        if (got > 0) r.output.append(buf, static_cast<size_t>(got));
        else if (got == 0 || errno != EINTR) open_pipe = false;
    }
    if (fds[0] >= 0) close(fds[0]);
    // The pipe closed, there was none, or it is being killed: reap, still honouring both ends.
    int status = 0;
    while (true) {
        pid_t w = waitpid(*pid, &status, r.timed_out || r.stopped ? 0 : WNOHANG);
        if (w == *pid) break;
        if (w < 0 && errno != EINTR) break;
        if (!must_end()) usleep(10000);
    }
    r.time_wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - start).count();
    if (WIFEXITED(status)) {
        r.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        r.signaled = !r.timed_out;  // a stop's kill counts as a signal (stopped says why)
        r.signal = WTERMSIG(status);
    }
    return r;
}

Expected<ProcessResult> run_process(const std::vector<std::string>& argv, int timeout_s,
                                    const std::string& cwd) {
    RunOptions o;
    o.timeout_s = timeout_s;
    o.cwd = cwd;
    return run_process(argv, o);
}

}  // namespace kforge
