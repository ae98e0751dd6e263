// `kforge fmt FILE... [--check] [--hash] [--card]`: the canonical form of kernel-language
// programs (dsl/printer.h), their content hash, or the language reference card.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "dsl/reference_card.h"

namespace kforge::cli {
namespace {

struct FmtOptions {
    std::vector<std::string> files;
    bool check = false;
    bool hash = false;
    bool card = false;
};

int run_fmt(const FmtOptions& opt) {
    if (opt.card) {
        std::fputs(dsl::reference_card().c_str(), stdout);
        if (opt.files.empty()) return kExitOk;
    }
    if (opt.files.empty()) {
        eprintf("kforge fmt: no FILE given (or use --card)\n");
        return kExitUserError;
    }
    int rc = kExitOk;
    for (const std::string& file : opt.files) {
        std::ifstream in(file, std::ios::binary);
        if (!in) {
            eprintf("kforge fmt: cannot read '%s'\n", file.c_str());
            return kExitUserError;
        }
        std::stringstream buf;
        buf << in.rdbuf();
        std::string text = buf.str();
        Expected<dsl::Program> p = dsl::parse_program(text, file);
        if (!p) {
            eprintf("%s\n", p.error().to_string().c_str());
            return kExitUserError;
        }
        std::string canonical = dsl::print_canonical(*p);
        if (opt.check) {
            if (canonical != text) {
                std::printf("%s: not canonical\n", file.c_str());
                rc = kExitFailure;
            }
        } else if (opt.hash) {
            std::printf("%s  %s\n", dsl::program_hash(*p).c_str(), file.c_str());
        } else {
            std::fputs(canonical.c_str(), stdout);
        }
    }
    return rc;
}

}  // namespace

void register_fmt(CLI::App& app) {
    auto opt = std::make_shared<FmtOptions>();
    auto* cmd = app.add_subcommand("fmt", "Print kernel-language programs in canonical form");
    cmd->add_option("files", opt->files, "program files (.kf)");
    cmd->add_flag("--check", opt->check, "exit 1 if a file is not in canonical form");
    cmd->add_flag("--hash", opt->hash, "print each program's content hash (SHA-256 of the canonical text)");
    cmd->add_flag("--card", opt->card, "print the language reference card (Markdown)");
    cmd->callback([opt] { exit_code() = run_fmt(*opt); });
}

}  // namespace kforge::cli
