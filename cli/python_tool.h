// Running kforge's Python side (python/kforge_py) from the CLI: locating the interpreter and
// running one of its modules with PYTHONPATH pointing at the package.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"

namespace kforge::cli {

// The Python to use: $KFORGE_PYTHON if set (e.g. "python3" on a machine with a system-wide
// PyTorch; a bare name is looked up in PATH), else the project's .venv/bin/python under
// KFORGE_SOURCE_DIR. An Error (where "python") names both places when neither exists.
Expected<std::string> find_python();

struct PythonRun {
    int exit_code = 0;    // the module's exit status; 128 + N when killed by signal N
    std::string stdout_text;  // captured only when asked for
};

// Runs `python -m <module> args...` with PYTHONPATH=<source>/python prepended. stderr passes
// through; stdout is captured when `capture_stdout`, else it passes through too. An Error
// only when the process cannot be started.
Expected<PythonRun> run_python_module(const std::string& python, const std::string& module,
                                      const std::vector<std::string>& args, bool capture_stdout);

}  // namespace kforge::cli
