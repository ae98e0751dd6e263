// Placeholder until the db stage lands; replaced by its owner.
#include <cstdio>

#include "cli/commands.h"

namespace kforge::cli {
void register_db(CLI::App& app) {
    auto* cmd = app.add_subcommand("db", "(not built yet)");
    cmd->callback([] {
        std::fprintf(stderr, "kforge db: not built yet\n");
        exit_code() = kExitEnvironment;
    });
}
}  // namespace kforge::cli
