// The CLI's side of a driver call (cli/console.h).
#include "cli/console.h"

#include <cstdio>
#include <string>

#include "cli/commands.h"

namespace kforge::cli {

driver::Console console_for(const char* cmd) {
    driver::Console c;
    c.print = [](const std::string& text) { std::printf("%s", text.c_str()); };
    c.note = [cmd](const std::string& line) {
        eprintf("kforge %s: %s\n", cmd, line.c_str());
    };
    return c;
}

int exit_code_of(const driver::Outcome& outcome, const char* cmd) {
    if (!outcome.message.empty())
        eprintf("%skforge %s: %s\n", outcome.after_progress ? "\n" : "", cmd,
                     outcome.message.c_str());
    switch (outcome.exit) {
        case driver::Exit::kOk: return kExitOk;
        case driver::Exit::kFailure: return kExitFailure;
        case driver::Exit::kUserError: return kExitUserError;
        case driver::Exit::kEnvironment: return kExitEnvironment;
    }
    return kExitFailure;
}

}  // namespace kforge::cli
