// Each `kforge` subcommand lives in its own cli/cmd_<name>.cpp and registers itself here.
// The CLI only parses arguments, reads the environment and calls libkforge.
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

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
// libkforge_runtime.so for an export: `given`, else $KFORGE_RUNTIME_LIB, else beside the binary
// (a build tree: <build>/runtime/; an install: <prefix>/lib/); "" when none is found.
std::string runtime_library(const std::string& given);

// ---- --json (every command): stdout holds exactly one JSON object (cli_common.cpp).
// main turns JSON mode on when the command line has --json: stdout is captured from then on, so
// no stray text can break the JSON; a command prints its result with print_json (to the real
// stdout); a command that prints none gets {"command", "exit", "output" (its text), "error"}.
bool json_mode();
void begin_json_mode();
// Ends the capture: returns what the command printed on stdout (not JSON).
std::string end_json_mode();
// Whether the command printed its own JSON result.
bool json_printed();
// The JSON document on stdout (the real one in JSON mode), indented.
void print_json(const nlohmann::ordered_json& j);
void print_json(const nlohmann::json& j);
// An error or note on stderr ("kforge CMD: ..."), kept for the JSON error object.
void eprintf(const char* format, ...) __attribute__((format(printf, 1, 2)));
// What eprintf wrote, one line each ("" none).
const std::string& error_lines();
// The name the user ran kforge by (argv[0] when it holds a '/', else "kforge").
std::string& invoked_as();

// --gpu-model NAME: a GPU of the device table (sol/device_table; h200, h100_sxm, ...), for the
// commands that model a GPU instead of running on one. --device means sim, cuda or auto in every
// command; given a table name here (its old spelling) it is a user error naming --gpu-model.
CLI::Option* add_gpu_model_option(CLI::App* cmd, std::string& target, const std::string& help);

// ---- main's part (app_setup.cpp)
// After registration, before the parse: --json on every command that has none (hidden commands
// aside), JSON mode when the command line asks for it. (The SIGINT/SIGTERM stop handlers are
// installed by the commands that poll for a stop, optimize and suite: Ctrl-C ends any other
// command at once, as it always did.)
void prepare_app(CLI::App& app, int argc, char** argv);
// A parse error: CLI11's message, a suggestion for a mistyped command or flag (edit distance),
// the JSON error object in JSON mode; the exit code.
int parse_error_exit(CLI::App& app, const CLI::ParseError& e, int argc, char** argv);
// "unknown command 'optimise'; did you mean 'optimize'?" or "" when nothing is mistyped.
std::string suggestion(CLI::App& app, int argc, char** argv);
// After the command: in JSON mode, the JSON object of a command that printed none. `rc` back.
int finish_command(CLI::App& app, int rc);
// 128 + the signal that asked for the stop (130 for SIGINT, or for a stop asked in code).
int interrupted_exit_code();

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
void register_export(CLI::App& app);
void register_mcp(CLI::App& app);

}  // namespace kforge::cli
