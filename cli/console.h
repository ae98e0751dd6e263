// The CLI's side of a driver call (driver/outcome.h): the console goes to stdout, and to stderr
// as "kforge <command>: <line>"; the outcome becomes the exit code.
#pragma once

#include "driver/outcome.h"

namespace kforge::cli {

driver::Console console_for(const char* cmd);

// Prints the outcome's message (as a note of `cmd`) and returns its exit code.
int exit_code_of(const driver::Outcome& outcome, const char* cmd);

}  // namespace kforge::cli
