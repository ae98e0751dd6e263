// `kforge llm ping --config FILE`: sends one tiny request to the configured endpoint and prints
// the reply, tokens, cost and latency (exit 2 for a refused key or an unknown model, 3 when the
// endpoint cannot be reached). `kforge llm prompt --config FILE --problem SPEC [--program P]`:
// prints the system and user prompts the LLM proposer would send, without sending them.
// The API key is read here, from the env var the config names (api_key_env), and never printed.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/llm_common.h"
#include "llm/config.h"
#include "llm/tools.h"

namespace kforge::cli {

namespace {

struct LlmArgs {
    std::string config;
    std::string problem;
    std::string program;
    std::string device = "h200";
    int count = 4;
};

int fail(const char* cmd, const Error& e, int code) {
    eprintf("kforge llm %s: %s\n", cmd, e.to_string().c_str());
    return code;
}

int run_ping(const LlmArgs& a) {
    auto config = llm::load_llm_config(a.config);
    if (!config) return fail("ping", config.error(), kExitUserError);
    auto key = llm_api_key(*config);
    if (!key) return fail("ping", key.error(), kExitUserError);
    auto out = llm::ping(*config, *key);
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
    if (a.problem.empty())
        return fail("prompt", Error{"", "a problem SPEC is required"}, kExitUserError);
    if (!a.config.empty()) {
        auto config = llm::load_llm_config(a.config);
        if (!config) return fail("prompt", config.error(), kExitUserError);
    }
    llm::PromptPreviewRequest r{a.problem, a.program, a.device, a.count};
    auto prompts = llm::preview_prompts(r);
    if (!prompts) return fail("prompt", prompts.error(), kExitUserError);
    if (json_mode()) {
        print_json(nlohmann::ordered_json{{"system", prompts->system}, {"user", prompts->user}});
        return kExitOk;
    }
    std::printf("<!-- system -->\n%s\n<!-- user -->\n%s", prompts->system.c_str(),
                prompts->user.c_str());
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
    prompt->add_option("spec", args->problem, "Problem spec (JSON)");
    prompt->add_option("--problem", args->problem, "The problem spec, as the positional SPEC");
    prompt->add_option("--program", args->program, "A program to show as the best so far");
    add_gpu_model_option(prompt, args->device, "GPU of the device table")->capture_default_str();
    prompt->add_option("--count", args->count, "Programs to ask for")->capture_default_str();
    prompt->callback([args] { exit_code() = run_prompt(*args); });
}

}  // namespace kforge::cli
