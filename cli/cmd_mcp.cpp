// `kforge mcp --root DIR [--device sim|cuda|auto] [--gpu N] [--sim-model M] [--gpu-model M]
// [--db PATH] [--max-gpu-seconds S] [--max-compiles N] [--max-concurrent N]
// [--max-optimize-wall S] [--max-request-bytes B] [--allow-import] [--ncu PATH]`:
// kforge's tools for coding agents over the Model Context Protocol (stdio; mcp/server.h,
// docs/agents.md). The flags are the operator's: the working folder every path is confined to,
// the device, and limits no tool argument can raise. stdout carries the protocol only (anything
// else the process prints goes to stderr); logs go to stderr. Exit 0 at the end of input, 2 for
// a bad flag or root.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "mcp/server.h"

namespace kforge::cli {
namespace {

struct McpArgs {
    std::string root;
    std::string device = "auto";
    int gpu = 0;
    std::string sim_model = "h200";
    std::string gpu_model = "h200";
    std::string db;
    std::string ncu = "ncu";
    mcp::OperatorLimits limits;
    bool allow_import = false;
};

int run(const McpArgs& a) {
    if (json_mode()) {
        eprintf("kforge mcp: stdout carries the MCP protocol (JSON-RPC); --json does not apply\n");
        return kExitUserError;
    }
    auto device = driver::device_choice_from_string(a.device);
    if (!device) {
        eprintf("kforge mcp: --device must be cuda, sim or auto\n");
        return kExitUserError;
    }
    auto root = mcp::Root::open(a.root);
    if (!root) {
        eprintf("kforge mcp: %s\n", root.error().to_string().c_str());
        return kExitUserError;
    }
    mcp::ServerConfig c;
    c.root = root->dir().string();
    c.limits = a.limits;
    c.device = *device;
    c.gpu = a.gpu;
    c.sim_model = a.sim_model;
    c.gpu_model = a.gpu_model;
    c.db = a.db;
    c.kforge_executable = kforge_executable();
    c.compile_cache_dir = default_compile_cache_dir();
    c.ncu = a.ncu;
    c.python = python_options();
    c.runtime_library = runtime_library("");  // as kforge export finds it (cli_common)
    c.allow_import = a.allow_import;
    c.kforge_version = KFORGE_VERSION;
    // The protocol gets its own descriptor; fd 1 becomes stderr, so that nothing a library or a
    // child process prints can corrupt the JSON-RPC stream.
    std::fflush(stdout);
    const int protocol_fd = ::dup(STDOUT_FILENO);
    if (protocol_fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        eprintf("kforge mcp: cannot set up stdout\n");
        return kExitEnvironment;
    }
    mcp::Services services(c, std::move(*root));
    auto log = [](const std::string& line) {
        std::fprintf(stderr, "kforge mcp: %s\n", line.c_str());
        std::fflush(stderr);
    };
    log("serving on stdio; root " + c.root + ", device " + a.device + ", store " +
        services.db_path());
    int rc = mcp::serve(services, STDIN_FILENO, protocol_fd, log);
    ::close(protocol_fd);
    return rc;
}

}  // namespace

void register_mcp(CLI::App& app) {
    auto a = std::make_shared<McpArgs>();
    auto* cmd = app.add_subcommand("mcp", "serve kforge's tools to coding agents (MCP over stdio)");
    cmd->add_option("--root", a->root, "working folder: every path a tool takes lies inside it")
        ->required();
    cmd->add_option("--device", a->device, "sim, cuda or auto (default)");
    cmd->add_option("--gpu", a->gpu, "GPU index (default 0)");
    cmd->add_option("--sim-model", a->sim_model, "device table entry the simulator models");
    cmd->add_option("--gpu-model", a->gpu_model,
                    "GPU of the device table for sol, check_program and compile (default h200)");
    cmd->add_option("--db", a->db, "store (default ROOT/.kforge/kforge.db)");
    cmd->add_option("--max-gpu-seconds", a->limits.gpu_seconds,
                    "evaluation seconds on the device, all calls together")
        ->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--max-compiles", a->limits.compiles, "compiles, all calls together")
        ->capture_default_str()->check(CLI::NonNegativeNumber);
    cmd->add_option("--max-concurrent", a->limits.concurrent_evaluations,
                    "device tool calls in flight at once")
        ->capture_default_str()->check(CLI::Range(1, 64));
    cmd->add_option("--max-optimize-wall", a->limits.optimize_wall_s,
                    "one optimize call's wall-clock budget, seconds, at most")
        ->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--max-request-bytes", a->limits.max_request_bytes,
                    "largest JSON-RPC message accepted")
        ->capture_default_str()->check(CLI::Range(size_t{1024}, size_t{1} << 30));
    cmd->add_flag("--allow-import", a->allow_import,
                  "enable import_kernelbench (it runs the KernelBench file's Python)");
    cmd->add_option("--ncu", a->ncu, "path of ncu for profile on cuda (default: on PATH)");
    cmd->callback([a] { exit_code() = run(*a); });
}

}  // namespace kforge::cli
