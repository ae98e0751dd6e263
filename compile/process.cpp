// run_process: fork + setpgid + execvp, poll on one pipe for output, kill(-pgid) on timeout.
#include "compile/process.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/stop_request.h"

namespace kforge::compile {

Expected<ProcessResult> run_process(const std::vector<std::string>& argv, int timeout_s,
                                    const std::string& cwd) {
    if (argv.empty()) return make_error("", "run_process: empty command");
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return make_error(argv[0], std::string("pipe: ") + std::strerror(errno));
    // Exec failures are reported through a second close-on-exec pipe.
    int err_fds[2];
    if (pipe2(err_fds, O_CLOEXEC) != 0) {
        close(fds[0]);
        close(fds[1]);
        return make_error(argv[0], std::string("pipe: ") + std::strerror(errno));
    }
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    auto start = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid < 0) {
        for (int fd : {fds[0], fds[1], err_fds[0], err_fds[1]}) close(fd);
        return make_error(argv[0], std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {  // child: only async-signal-safe calls
        setpgid(0, 0);
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
            int e = errno;
            (void)!write(err_fds[1], &e, sizeof e);
            _exit(127);
        }
        execvp(cargv[0], cargv.data());
        int e = errno;
        (void)!write(err_fds[1], &e, sizeof e);
        _exit(127);
    }
    setpgid(pid, pid);  // also from the parent, so the group exists before any kill
    close(fds[1]);
    close(err_fds[1]);
    int exec_errno = 0;
    bool exec_failed = read(err_fds[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
    close(err_fds[0]);

    ProcessResult r;
    auto deadline = start + std::chrono::seconds(timeout_s);
    char buf[65536];
    bool open_pipe = true;
    while (open_pipe) {
        auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
            r.timed_out = true;
            kill(-pid, SIGKILL);
            break;
        }
        if (stop_requested()) {
            r.stopped = true;
            kill(-pid, SIGKILL);
            break;
        }
        int wait_ms = static_cast<int>(
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
        pollfd p{fds[0], POLLIN, 0};
        int n = poll(&p, 1, std::min(wait_ms, 1000));
        if (n < 0 && errno != EINTR) break;
        if (n <= 0) continue;
        ssize_t got = read(fds[0], buf, sizeof buf);
        if (got > 0) r.output.append(buf, static_cast<size_t>(got));
        else if (got == 0 || errno != EINTR) open_pipe = false;
    }
    close(fds[0]);
    // The pipe closed (or we timed out): reap, still honoring the deadline.
    int status = 0;
    while (true) {
        pid_t w = waitpid(pid, &status, r.timed_out || r.stopped ? 0 : WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) break;
        if (stop_requested() && !r.stopped) {
            r.stopped = true;
            kill(-pid, SIGKILL);
            continue;
        }
        if (std::chrono::steady_clock::now() >= deadline && !r.timed_out) {
            r.timed_out = true;
            kill(-pid, SIGKILL);
            continue;
        }
        usleep(10000);
    }
    r.time_wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - start).count();
    if (exec_failed)
        return make_error(argv[0], std::string("cannot run: ") + std::strerror(exec_errno));
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) {
        r.signaled = !r.timed_out;
        r.signal = WTERMSIG(status);
    }
    return r;
}

}  // namespace kforge::compile
