// `kforge llm ping --config FILE`: sends one tiny request to the configured endpoint and prints
// the reply, tokens, cost and latency (exit 2 for a refused key or an unknown model, 3 when the
// endpoint cannot be reached). `kforge llm prompt --config FILE --problem SPEC [--program P]`:
// prints the system and user prompts the LLM proposer would send, without sending them.
// The API key is read here, from the env var the config names (api_key_env), and never printed.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "cli/llm_common.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "llm/client.h"
#include "llm/config.h"
#include "llm/prompt.h"
#include "problem/spec.h"
#include "sol/bounds.h"
#include "sol/calibration.h"
#include "sol/device.h"

namespace kforge::cli {

namespace {

struct LlmArgs {
    std::string config;
    std::string problem;
    std::string program;
    std::string device = "h200";
    int count = 4;
};

Expected<std::string> read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path, "cannot read the file");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

int fail(const char* cmd, const Error& e, int code) {
    std::fprintf(stderr, "kforge llm %s: %s\n", cmd, e.to_string().c_str());
    return code;
}

int run_ping(const LlmArgs& a) {
    auto config = llm::load_llm_config(a.config);
    if (!config) return fail("ping", config.error(), kExitUserError);
    auto key = llm_api_key(*config);
    if (!key) return fail("ping", key.error(), kExitUserError);
    auto client = llm::make_http_chat_client(*config, *key);
    llm::ChatRequest request{{{"user", "Reply with the single word: pong"}}};
    auto out = client->chat(request);
    if (!out.ok()) {
        return fail("ping", out.error,
                    llm::is_fatal(out.kind) ? kExitUserError : kExitEnvironment);
    }
    const auto& r = *out.reply;
    std::printf("%s %s at %s: ok in %.0f ms (%d attempt%s)\n",
                std::string(llm::to_string(config->provider)).c_str(), config->model.c_str(),
                config->base_url.c_str(), r.latency_ms, r.attempts, r.attempts == 1 ? "" : "s");
    std::printf("  tokens %lld in, %lld out; cost $%.6f\n", static_cast<long long>(r.tokens_in),
                static_cast<long long>(r.tokens_out),
                llm::cost_usd(*config, r.tokens_in, r.tokens_out));
    std::printf("  reply: %s\n", r.content.substr(0, 200).c_str());
    return kExitOk;
}

int run_prompt(const LlmArgs& a) {
    if (!a.config.empty()) {
        auto config = llm::load_llm_config(a.config);
        if (!config) return fail("prompt", config.error(), kExitUserError);
    }
    auto spec_text = read_text(a.problem);
    if (!spec_text) return fail("prompt", spec_text.error(), kExitUserError);
    auto problem = parse_problem(*spec_text, a.problem);
    if (!problem) return fail("prompt", problem.error(), kExitUserError);
    auto device = find_device(a.device);
    if (!device) return fail("prompt", device.error(), kExitUserError);
    auto bounds = compute_bounds(*problem, effective_ceilings(*device, std::nullopt));
    if (!bounds) return fail("prompt", bounds.error(), kExitUserError);

    search::ProposalContext context;
    context.problem = &*problem;
    context.problem_spec_json = *spec_text;
    context.bounds = &*bounds;
    context.device_key = a.device;
    context.count = a.count;
    if (!a.program.empty()) {
        auto text = read_text(a.program);
        if (!text) return fail("prompt", text.error(), kExitUserError);
        auto program = dsl::parse_program(*text, a.program);
        if (!program) return fail("prompt", program.error(), kExitUserError);
        search::CandidateView best;
        best.program_text = dsl::print_canonical(*program);
        best.program_hash = dsl::program_hash(*program);
        best.proposer = "human";
        context.best.push_back(std::move(best));
    }
    std::printf("<!-- system -->\n%s\n<!-- user -->\n%s", llm::system_prompt().c_str(),
                llm::user_prompt(context).c_str());
    return kExitOk;
}

}  // namespace

void register_llm(CLI::App& app) {
    auto args = std::make_shared<LlmArgs>();
    auto* cmd = app.add_subcommand("llm", "Check an LLM endpoint and show the prompts kforge sends");
    cmd->require_subcommand(1);
    auto* ping = cmd->add_subcommand("ping", "Send one tiny request to the configured endpoint");
    ping->add_option("--config", args->config, "LLM config file (JSON, docs/llm.md)")->required();
    ping->callback([args] { exit_code() = run_ping(*args); });
    auto* prompt = cmd->add_subcommand("prompt", "Print the prompts for a problem, send nothing");
    prompt->add_option("--config", args->config, "LLM config file (JSON, docs/llm.md)");
    prompt->add_option("--problem", args->problem, "Problem spec (JSON)")->required();
    prompt->add_option("--program", args->program, "A program to show as the best so far");
    prompt->add_option("--device", args->device, "Device table name")->capture_default_str();
    prompt->add_option("--count", args->count, "Programs to ask for")->capture_default_str();
    prompt->callback([args] { exit_code() = run_prompt(*args); });
}

}  // namespace kforge::cli
