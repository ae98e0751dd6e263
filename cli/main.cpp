// kforge: the command-line client of libkforge.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "common/install_paths.h"
#include "codegen/launch_knobs.h"
#include "compile/compile.h"

namespace kforge::cli {
int& exit_code() {
    static int code = kExitOk;
    return code;
}

namespace {

// "10G", "500M", "1.5GiB", "1048576" (bytes; K, M, G, T are powers of 1024); nullopt if not.
std::optional<int64_t> parse_size(const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !(v >= 0)) return std::nullopt;
    std::string unit(end);
    for (const char* tail : {"iB", "B"})
        if (unit.size() > 1 && unit.size() >= std::string(tail).size() &&
            unit.compare(unit.size() - std::string(tail).size(), std::string::npos, tail) == 0) {
            unit.resize(unit.size() - std::string(tail).size());
            break;
        }
    double scale = 1;
    if (unit == "K" || unit == "k") scale = 1024.0;
    else if (unit == "M" || unit == "m") scale = 1024.0 * 1024;
    else if (unit == "G" || unit == "g") scale = 1024.0 * 1024 * 1024;
    else if (unit == "T" || unit == "t") scale = 1024.0 * 1024 * 1024 * 1024;
    else if (!unit.empty() && unit != "B") return std::nullopt;
    if (v * scale > 9.0e18) return std::nullopt;
    return static_cast<int64_t>(v * scale);
}

}  // namespace

// The compile cache's size limit from $KFORGE_CACHE_MAX_BYTES (every command, workers included:
// they inherit the variable); "" or the error to print.
std::string apply_compile_cache_limit() {
    const char* e = std::getenv("KFORGE_CACHE_MAX_BYTES");
    if (!e || !*e) return "";
    auto bytes = parse_size(e);
    if (!bytes)
        return std::string("$KFORGE_CACHE_MAX_BYTES: expected a size such as 20G, 500M or 0 "
                           "(no limit), got \"") + e + "\"";
    kforge::compile::set_default_cache_max_bytes(*bytes);
    return "";
}

// $KFORGE_BAKE_LAUNCH_KNOBS=1: every launch knob baked into the generated source, one compile
// per value (codegen/launch_knobs.h; the behaviour before launch knobs, for measuring them).
// Every command reads it, so the worker processes a search starts agree with it.
void apply_launch_knobs_switch() {
    const char* e = std::getenv("KFORGE_BAKE_LAUNCH_KNOBS");
    kforge::codegen::set_launch_knobs_baked(e && *e && std::string(e) != "0");
}

// The run-time paths (common/install_paths.h) with $KFORGE_HOME and $KFORGE_CUTLASS_DIR; ""
// or the error to print.
std::string apply_install_paths() {
    auto env = [](const char* name) { const char* v = std::getenv(name); return v ? v : ""; };
    auto paths = kforge::resolve_install_paths({env("KFORGE_HOME"), env("KFORGE_CUTLASS_DIR")},
                                               kforge::self_executable());
    if (!paths) return "$" + paths.error().to_string();
    kforge::set_install_paths(*paths);
    return "";
}

}  // namespace kforge::cli

int main(int argc, char** argv) {
    using namespace kforge::cli;
    CLI::App app{"kforge: finds the fastest correct CUDA implementation of an operator problem"};
    app.require_subcommand(1);
    app.set_version_flag("--version", KFORGE_VERSION);
    register_check(app);
    register_sol(app);
    register_calibrate(app);
    register_db(app);
    register_fmt(app);
    register_compile(app);
    register_eval(app);
    register_worker(app);
    register_report(app);
    register_profile(app);
    register_llm(app);
    register_optimize(app);
    register_suite(app);
    register_interpret(app);
    register_import(app);
    register_baseline(app);
    register_export(app);
    register_mcp(app);
    prepare_app(app, argc, argv);
    if (std::string bad = apply_compile_cache_limit(); !bad.empty()) {
        eprintf("kforge: %s\n", bad.c_str());
        return finish_command(app, kExitUserError);
    }
    apply_launch_knobs_switch();
    if (std::string bad = apply_install_paths(); !bad.empty()) {
        eprintf("kforge: %s\n", bad.c_str());
        return finish_command(app, kExitEnvironment);
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return parse_error_exit(app, e, argc, argv);
    } catch (const std::exception& e) {
        eprintf("kforge: internal error: %s\n", e.what());
        return finish_command(app, kExitFailure);
    }
    return finish_command(app, exit_code());
}
