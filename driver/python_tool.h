// Running kforge's Python side (python/kforge_py: the KernelBench importer, the PyTorch baseline
// timer): locating the interpreter and running one of its modules with PYTHONPATH pointing at
// the package. Reads no environment: the caller passes $KFORGE_PYTHON and $PYTHONPATH in.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "common/install_paths.h"

namespace kforge::driver {

struct PythonOptions {
    std::string python;  // $KFORGE_PYTHON as set ("": unset)
    // Holds python/ (kforge_py) and, in a source tree, .venv/: kforge's data folder
    // (common/install_paths.h: $KFORGE_HOME, the installed share/kforge, or the source tree).
    std::string source_dir = install_paths().data_dir;
    std::string beside_python = install_paths().python;  // the venv's python kforge is in, or ""
    std::string pythonpath;  // the caller's $PYTHONPATH, kept after ours
};

// The Python to use: options.python if set (e.g. "python3" on a machine with a system-wide
// PyTorch; a bare name is looked up in PATH when run), else options.beside_python (kforge
// pip-installed into a virtual environment), else <source_dir>/.venv/bin/python. An Error (where
// "python") when options.python is a path but no executable file, or names both places when
// neither is set or exists.
Expected<std::string> find_python(const PythonOptions& options);

struct PythonRun {
    int exit_code = 0;        // the module's exit status; 128 + N when killed by signal N
                              // (also when a stop request - Ctrl-C - killed its group)
    std::string stdout_text;  // captured only when asked for
};

// Runs `python -m <module> args...` with PYTHONPATH=<source_dir>/python[:options.pythonpath],
// in its own process group (common/process.h: a stop request kills it and its children).
// stderr passes through; stdout is captured when `capture_stdout`, else it passes through too.
// An Error when the process cannot be started (no such interpreter).
Expected<PythonRun> run_python_module(const PythonOptions& options, const std::string& python,
                                      const std::string& module,
                                      const std::vector<std::string>& args, bool capture_stdout);

// find_python, then run_python_module. Every Error is the environment's: no Python, or an
// interpreter that could not be started ("could not run PYTHON (set KFORGE_PYTHON): ...").
// The module's own exit status is the run's.
Expected<PythonRun> run_python_tool(const PythonOptions& options, const std::string& module,
                                    const std::vector<std::string>& args, bool capture_stdout);

}  // namespace kforge::driver
