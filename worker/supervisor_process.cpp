// WorkerProcess: started by common/process.h's spawn_process (its own process group, killed
// when the supervising process ends), non-blocking pipes driven by poll() with deadlines,
// kill(-pgid, SIGKILL) and a bounded waitpid. Every syscall loop handles EINTR.
#include "worker/supervisor_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "common/process.h"

namespace kforge::eval {

namespace {

int ms_until(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return 0;
    return static_cast<int>(std::min<int64_t>(left.count(), 1000));
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

std::string describe_wait_status(int status) {
    if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char* abbrev = sigabbrev_np(sig);
        return "killed by signal " + std::to_string(sig) +
               (abbrev ? std::string(" (SIG") + abbrev + ")" : std::string());
    }
    return "stopped (wait status " + std::to_string(status) + ")";
}

std::string file_tail(const std::string& path, size_t from, size_t max_bytes) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return {};
    auto size = static_cast<size_t>(in.tellg());
    if (size <= from) return {};
    size_t start = size - from > max_bytes ? size - max_bytes : from;
    std::string text(size - start, '\0');
    in.seekg(static_cast<std::streamoff>(start));
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (start > from) {
        size_t nl = text.find('\n');
        if (nl != std::string::npos) text.erase(0, nl + 1);
    }
    return text;
}

Expected<WorkerProcess> WorkerProcess::spawn(const std::vector<std::string>& argv,
                                             const std::string& log_path) {
    if (argv.empty()) return make_error("worker", "empty worker command");
    int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) return make_error(log_path, errno_text("cannot open the worker log"));
    int in_fds[2], out_fds[2];
    if (pipe2(in_fds, O_CLOEXEC) != 0) {
        close(log_fd);
        return make_error("worker", errno_text("pipe"));
    }
    if (pipe2(out_fds, O_CLOEXEC) != 0) {
        for (int fd : {in_fds[0], in_fds[1], log_fd}) close(fd);
        return make_error("worker", errno_text("pipe"));
    }
    // The worker lives in its own process group (a timeout kills the group), so a Ctrl-C at the
    // terminal misses it, and nothing else would end it when the supervisor dies (SIGKILL, a
    // crash): die_with_parent ties it to the supervising process, whichever thread starts it
    // (the MCP server's tool calls each run on a thread of their own).
    SpawnOptions o;
    o.stdin_fd = in_fds[0];
    o.stdout_fd = out_fds[1];
    o.stderr_fd = log_fd;
    o.die_with_parent = true;
    auto pid = spawn_process(argv, o);
    for (int fd : {in_fds[0], out_fds[1], log_fd}) close(fd);
    if (!pid) {
        for (int fd : {in_fds[1], out_fds[0]}) close(fd);
        return make_error(argv[0], "cannot start the worker: " + pid.error().message);
    }
    WorkerProcess w;
    w.pid_ = *pid;
    w.pgid_ = *pid;
    w.to_fd_ = in_fds[1];
    w.from_fd_ = out_fds[0];
    fcntl(w.to_fd_, F_SETFL, fcntl(w.to_fd_, F_GETFL) | O_NONBLOCK);
    fcntl(w.from_fd_, F_SETFL, fcntl(w.from_fd_, F_GETFL) | O_NONBLOCK);
    return w;
}

WorkerProcess::WorkerProcess(WorkerProcess&& o) noexcept { *this = std::move(o); }

WorkerProcess& WorkerProcess::operator=(WorkerProcess&& o) noexcept {
    if (this != &o) {
        if (running()) kill_group();
        close_fds();
        pid_ = std::exchange(o.pid_, -1);
        pgid_ = std::exchange(o.pgid_, -1);
        ended_how_ = std::move(o.ended_how_);
        to_fd_ = std::exchange(o.to_fd_, -1);
        from_fd_ = std::exchange(o.from_fd_, -1);
        reader_ = std::move(o.reader_);
        tasks_done = o.tasks_done;
        memory_baseline_bytes = o.memory_baseline_bytes;
        baseline_after_task = o.baseline_after_task;
    }
    return *this;
}

WorkerProcess::~WorkerProcess() {
    if (running() || pgid_ > 0) kill_group();
    close_fds();
}

void WorkerProcess::close_fds() {
    if (to_fd_ >= 0) close(to_fd_);
    if (from_fd_ >= 0) close(from_fd_);
    to_fd_ = from_fd_ = -1;
}

bool WorkerProcess::write_all(const std::string& bytes, Clock::time_point deadline) {
    size_t done = 0;
    while (done < bytes.size()) {
        if (to_fd_ < 0 || Clock::now() >= deadline) return false;
        pollfd p{to_fd_, POLLOUT, 0};
        int n = poll(&p, 1, ms_until(deadline));
        if (n < 0 && errno != EINTR) return false;
        if (n <= 0) continue;
        if (p.revents & (POLLERR | POLLHUP)) return false;
        ssize_t put = write(to_fd_, bytes.data() + done, bytes.size() - done);
        if (put > 0) done += static_cast<size_t>(put);
        else if (put < 0 && errno != EINTR && errno != EAGAIN) return false;  // EPIPE: gone
    }
    return true;
}

LineRead WorkerProcess::read_line(Clock::time_point deadline) {
    char buf[65536];
    while (true) {
        if (auto line = reader_.next_line()) {
            if (reader_.overflowed()) return {ReadEnd::kOverflow, {}};
            return {ReadEnd::kLine, std::move(*line)};
        }
        if (reader_.overflowed()) return {ReadEnd::kOverflow, {}};
        if (from_fd_ < 0) return {ReadEnd::kEof, reader_.pending()};
        if (Clock::now() >= deadline) return {ReadEnd::kTimeout, {}};
        pollfd p{from_fd_, POLLIN, 0};
        int n = poll(&p, 1, ms_until(deadline));
        if (n < 0 && errno != EINTR) return {ReadEnd::kEof, reader_.pending()};
        if (n == 0 && pid_ > 0) {
            // The worker may be dead while a grandchild keeps the pipe open: no EOF then.
            int status = 0;
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                ended_how_ = describe_wait_status(status);
                return {ReadEnd::kEof, reader_.pending()};
            }
        }
        if (n <= 0) continue;
        ssize_t got = read(from_fd_, buf, sizeof buf);
        if (got > 0) {
            reader_.append(std::string_view(buf, static_cast<size_t>(got)));
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
            // EOF: the worker closed stdout (exited or crashed); a partial line stays pending.
            close(from_fd_);
            from_fd_ = -1;
        }
    }
}

std::string WorkerProcess::reap(Clock::time_point deadline) {
    while (pid_ > 0) {
        int status = 0;
        pid_t r = waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            pid_ = -1;
            ended_how_ = describe_wait_status(status);
        } else if (r < 0 && errno != EINTR) {
            pid_ = -1;
            ended_how_ = errno_text("waitpid");
        } else if (Clock::now() >= deadline) {
            return "did not exit";
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }
    return ended_how_.empty() ? "not running" : ended_how_;
}

std::string WorkerProcess::finish(Clock::time_point deadline) {
    if (to_fd_ >= 0) {
        close(to_fd_);
        to_fd_ = -1;
    }
    std::string how = reap(deadline);
    if (running()) return kill_group();
    if (pgid_ > 0) kill(-pgid_, SIGKILL);  // leftovers of a worker that exited
    pgid_ = -1;
    close_fds();
    return how;
}

std::string WorkerProcess::kill_group() {
    if (pgid_ > 0) kill(-pgid_, SIGKILL);
    pgid_ = -1;
    if (pid_ > 0) kill(pid_, SIGKILL);  // in case setpgid lost a race with exec
    // A process stuck in the GPU driver can take a while to die; do not wait forever.
    std::string how = reap(Clock::now() + std::chrono::seconds(10));
    if (running()) {
        how = "did not die within 10 s of SIGKILL (left behind, pid " + std::to_string(pid_) + ")";
        pid_ = -1;
    }
    close_fds();
    return how;
}

}  // namespace kforge::eval
