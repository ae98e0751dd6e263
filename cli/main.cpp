// kforge: the command-line client of libkforge.
#include <cstdio>
#include <exception>

#include "cli/commands.h"

namespace kforge::cli {
int& exit_code() {
    static int code = kExitOk;
    return code;
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
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : kExitUserError;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kforge: internal error: %s\n", e.what());
        return kExitFailure;
    }
    return exit_code();
}
