// Where kforge's run-time data lives: the kernel templates and headers that generated sources
// include (kernels/*.cuh, codegen/host_abi.h), the Python package (kforge_py), the CUTLASS headers
// and nvcc. Resolved once at start-up from the binary's own location, so an installed tree
// (`cmake --install`, `pip install .`) works wherever it is moved:
//
//   data_dir         $KFORGE_HOME, else <exe>/../share/kforge (an installed tree), else the
//                    source tree kforge was built from (compiled in: the last resort)
//   python_dir       <data_dir>/python (holds kforge_py/)
//   cutlass_include  $KFORGE_CUTLASS_DIR, else the nvidia-cutlass package of the Python
//                    environment kforge is installed in (<exe>/../lib/python3*/site-packages/
//                    cutlass_library/source/include), else of <data_dir>/.venv, else the path
//                    configured at build time
//   python           the interpreter beside the binary (<exe dir>/python3: kforge installed
//                    into a virtual environment by pip), else "" (driver/python_tool.h then
//                    tries <data_dir>/.venv/bin/python, the source tree's)
//   nvcc             the configured nvcc if it exists, else /usr/local/cuda/bin/nvcc, else
//                    "nvcc" (looked up in PATH)
//
// Only cli/ reads the environment: it passes $KFORGE_HOME and $KFORGE_CUTLASS_DIR in as
// PathOverrides and installs the result with set_install_paths() before any command runs;
// default_compile_options() and PythonOptions start from install_paths().
#pragma once

#include <string>

#include "common/expected.h"

namespace kforge {

struct PathOverrides {
    std::string home;         // $KFORGE_HOME ("": unset)
    std::string cutlass_dir;  // $KFORGE_CUTLASS_DIR ("": unset)
};

struct InstallPaths {
    std::string exe;              // this binary (/proc/self/exe)
    std::string data_dir;         // holds kernels/ and codegen/host_abi.h
    std::string data_from;        // "KFORGE_HOME", "installed" or "source tree"
    std::string python_dir;       // holds kforge_py/
    std::string cutlass_include;  // holds cutlass/cutlass.h ("" if none was found)
    std::string cutlass_from;     // "KFORGE_CUTLASS_DIR", "python package", "configured", "none"
    std::string python;           // default interpreter ("" if none)
    std::string nvcc;
};

// The path of the running binary ("" if /proc/self/exe cannot be read).
std::string self_executable();

// Resolves the paths for a binary at `exe` (see the top of this file). An Error (where:
// "KFORGE_HOME" or "KFORGE_CUTLASS_DIR") when an override is set but holds no kforge data
// (kernels/cstdint.cuh) or no CUTLASS headers (cutlass/cutlass.h, also accepted under include/
// or source/include/ of the given folder).
Expected<InstallPaths> resolve_install_paths(const PathOverrides& overrides,
                                             const std::string& exe);

// The process's paths: those set by set_install_paths, else resolved once with no overrides.
const InstallPaths& install_paths();
void set_install_paths(InstallPaths paths);

// "key: value" lines (data, python package, CUTLASS, python, nvcc and where each came from).
std::string describe(const InstallPaths& paths);

}  // namespace kforge
