#pragma once
// A cooperative stop, asked for by SIGINT or SIGTERM (Ctrl-C, a timeout, a job scheduler).
// install_stop_handlers() arms both signals once, in the binary's main: the first signal only
// records that a stop was asked for, and long-running loops (the search, the suite) poll
// stop_requested() between evaluations, finish what is in flight, write their outputs and mark
// their run `interrupted`; a second signal ends the process at once with 128 + signal (the store
// stays consistent: every write is one SQLite transaction).
// The flag is process-wide and async-signal-safe (a lock-free atomic).

namespace kforge {

void install_stop_handlers();

// True once SIGINT or SIGTERM arrived (or request_stop was called).
bool stop_requested();

// The signal that asked for the stop (SIGINT, SIGTERM), 0 when none, -1 when requested in code.
int stop_signal();

// Asks for a stop from code (tests; a budget watchdog), as if a first signal had arrived.
void request_stop();

// Forgets a request (tests that run several loops in one process).
void clear_stop_request();

}  // namespace kforge
