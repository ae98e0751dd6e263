#include "common/stop_request.h"

#include <atomic>
#include <csignal>
#include <unistd.h>

namespace kforge {
namespace {

std::atomic<int> g_signal{0};  // 0: none; >0: the signal; -1: asked for in code
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int sig) {
    int none = 0;
    if (!g_signal.compare_exchange_strong(none, sig)) {
        // Second signal: leave now. _exit is async-signal-safe; SQLite's journal keeps the store.
        static const char msg[] = "\nkforge: second interrupt, exiting now\n";
        ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)ignored;
        _exit(128 + sig);
    }
    static const char msg[] =
        "\nkforge: stopping after the evaluation in flight (interrupt again to exit now)\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
}

}  // namespace

void install_stop_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a blocking wait returns EINTR and can look at the flag
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

bool stop_requested() { return g_signal.load(std::memory_order_relaxed) != 0; }

int stop_signal() { return g_signal.load(std::memory_order_relaxed); }

void request_stop() {
    int none = 0;
    g_signal.compare_exchange_strong(none, -1);
}

void clear_stop_request() { g_signal.store(0, std::memory_order_relaxed); }

}  // namespace kforge
