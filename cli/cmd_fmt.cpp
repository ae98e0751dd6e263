// Placeholder until the fmt stage lands; replaced by its owner.
#include <cstdio>

#include "cli/commands.h"

namespace kforge::cli {
void register_fmt(CLI::App& app) {
    auto* cmd = app.add_subcommand("fmt", "(not built yet)");
    cmd->callback([] {
        std::fprintf(stderr, "kforge fmt: not built yet\n");
        exit_code() = kExitEnvironment;
    });
}
}  // namespace kforge::cli
