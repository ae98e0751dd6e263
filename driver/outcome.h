// How a command-level call of the driver ended, and where it writes while it runs. cli/ maps
// the outcome to its exit code and the console to stdout/stderr; a server would log both.
#pragma once

#include <functional>
#include <string>

namespace kforge::driver {

enum class Exit {
    kOk,           // done, the answer is positive (a candidate passed)
    kFailure,      // done, the answer is negative (no candidate passed, a mode failed)
    kUserError,    // bad spec, program, flag or file
    kEnvironment,  // missing GPU, toolchain, Python or service
};

struct Outcome {
    Exit exit = Exit::kOk;
    std::string message;  // for the user when not empty (a failure's reason)
    // The message ends a progress display: a caller showing one starts a new line first.
    bool after_progress = false;
};

inline Outcome fail(Exit exit, std::string message) { return {exit, std::move(message), false}; }

// Where a call reports as it goes; each optional.
struct Console {
    std::function<void(const std::string& text)> print;  // results, as is (stdout)
    std::function<void(const std::string& line)> note;   // one warning or note (stderr)
};

}  // namespace kforge::driver
