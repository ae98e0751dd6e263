// Placeholder until the compile stage lands; replaced by its owner.
#include <cstdio>

#include "cli/commands.h"

namespace kforge::cli {
void register_compile(CLI::App& app) {
    auto* cmd = app.add_subcommand("compile", "(not built yet)");
    cmd->callback([] {
        std::fprintf(stderr, "kforge compile: not built yet\n");
        exit_code() = kExitEnvironment;
    });
}
}  // namespace kforge::cli
