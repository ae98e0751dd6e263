// How `kforge optimize` and `kforge suite` show a search as it runs (search::ProgressEvent, and
// the suite's search::SuiteProgress):
// - tty: one status line (best, % SOL - sol/sol_share.h: at most 100%, "!" when under the bound -,
//   speedup, evaluations, budget used and left, ETA) redrawn
//   in place and never wider than the terminal; events (rounds, notes, profiling lines) printed
//   above it, and a heartbeat in it while a compile wave runs;
// - plain (stdout not a terminal): whole lines only, no \r: events, one status line per round,
//   a heartbeat line every few seconds of a compile wave;
// - a suite's status line: the problem in progress, problems done of all, the best speedup so
//   far, evaluations, the suite's budget used and left (its plain line: after each round);
// - json: one JSON object per line and event ("start", "evaluation", "round", "heartbeat",
//   "note", "result"), for tools;
// - none: nothing.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "search/loop.h"
#include "search/suite.h"

namespace kforge::cli {

enum class ProgressMode { kTty, kPlain, kJson, kNone };

// "auto" (tty when `out` is a terminal, else plain), "tty", "plain", "json" or "none".
std::optional<ProgressMode> progress_mode_from_string(const std::string& s, std::FILE* out);
// progress_mode_from_string, or nullopt after "kforge CMD: --progress must be ..." on stderr.
std::optional<ProgressMode> progress_mode_flag(const char* cmd, const std::string& s,
                                               std::FILE* out);

// The status line of a search, at most `width` columns: the less important fields go first
// when the terminal is narrow. `heartbeat` ("compiling 12 program(s), 15 s") replaces the ETA.
std::string status_line(const search::SearchState& state, const search::SearchOptions& options,
                        const search::Spent& spent, int width, const std::string& heartbeat = "");

// The status line of a suite, at most `width` columns, as status_line: the problem in progress
// (the name that shrinks), problems done of all, the best speedup of any problem so far,
// evaluations of all problems, the suite's budget used, and what is left of it (or `heartbeat`).
std::string suite_status_line(const search::SuiteProgress& progress,
                              const search::SearchOptions& options, int width,
                              const std::string& heartbeat = "");

// The budget in words for the start of a run ("wall 600 s", "rounds 4, compiles 40").
std::string budget_text(const search::SearchOptions& options);

class ProgressPrinter {
public:
    ProgressPrinter(ProgressMode mode, std::FILE* out) : mode_(mode), out_(out) {}
    ProgressMode mode() const { return mode_; }
    // A line above the status line (a round, a profiling note); on `err` when given.
    void line(const std::string& text, std::FILE* err = nullptr);
    // A search event (evaluation, round, heartbeat): the status line redrawn, JSON written.
    void event(const search::ProgressEvent& e, const search::SearchOptions& options);
    // The suite's progress (search/suite.h): from now on the status line is the suite's; drawn
    // (tty), printed as a line after each round (plain), a "suite" object (json). Its last call
    // (finished) ends the status line.
    void suite(const search::SuiteProgress& progress, const search::SearchOptions& options);
    // One JSON object as a line (json mode only).
    void json(const nlohmann::ordered_json& object);
    // Ends the status line (tty): what follows starts on a clean line.
    void finish();

private:
    int width() const;
    void draw_locked();
    ProgressMode mode_;
    std::FILE* out_;
    std::mutex mu_;
    std::string status_;     // tty: the status line shown now ("" none)
    std::string heartbeat_;  // tty: what the compile wave says
    // the last evaluation's state, to redraw the line after a heartbeat or a note
    const search::SearchState* state_ = nullptr;
    const search::Spent* spent_ = nullptr;
    const search::SearchOptions* options_ = nullptr;
    std::optional<search::SuiteProgress> suite_;  // a suite's: the line is the suite's
};

}  // namespace kforge::cli
