// Each `kforge` subcommand lives in its own cli/cmd_<name>.cpp and registers itself here.
// The CLI only parses arguments, reads the environment and calls libkforge.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "driver/python_tool.h"

namespace kforge::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;     // the command ran, the answer is negative (e.g. a candidate failed)
inline constexpr int kExitUserError = 2;   // bad spec, program, flag or file
inline constexpr int kExitEnvironment = 3; // missing GPU, toolchain or service

// A subcommand sets its callback to store its exit code here.
int& exit_code();

// The running kforge binary (/proc/self/exe): workers and ncu runs start it again.
std::string kforge_executable();
// The whole file into `out`; false when it cannot be read.
bool read_file(const std::string& path, std::string& out);
// The content-addressed compile cache: $KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge/cubin,
// else ~/.cache/kforge/cubin, else a folder in the temporary directory.
std::string default_compile_cache_dir();
// The Python side's options from $KFORGE_PYTHON and $PYTHONPATH.
driver::PythonOptions python_options();

void register_check(CLI::App& app);
void register_sol(CLI::App& app);
void register_calibrate(CLI::App& app);
void register_db(CLI::App& app);
void register_fmt(CLI::App& app);
void register_compile(CLI::App& app);
void register_eval(CLI::App& app);
void register_worker(CLI::App& app);
void register_report(CLI::App& app);
void register_profile(CLI::App& app);
void register_llm(CLI::App& app);
void register_optimize(CLI::App& app);
void register_suite(CLI::App& app);
void register_interpret(CLI::App& app);
void register_import(CLI::App& app);
void register_baseline(CLI::App& app);

}  // namespace kforge::cli
