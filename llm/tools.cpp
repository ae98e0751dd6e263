// What `kforge llm` does (llm/tools.h).
#include "llm/tools.h"

#include <fstream>
#include <sstream>

#include "dsl/parser.h"
#include "dsl/printer.h"
#include "llm/prompt.h"
#include "problem/spec.h"
#include "sol/bounds.h"
#include "sol/calibration.h"
#include "sol/device.h"

namespace kforge::llm {
namespace {

Expected<std::string> read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path, "cannot read the file");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

ChatOutcome ping(const LlmConfig& config, const std::string& api_key) {
    auto client = make_http_chat_client(config, api_key);
    ChatRequest request{{{"user", "Reply with the single word: pong"}}};
    return client->chat(request);
}

Expected<Prompts> preview_prompts(const PromptPreviewRequest& r) {
    auto spec_text = read_text(r.problem_path);
    if (!spec_text) return spec_text.error();
    auto problem = parse_problem(*spec_text, r.problem_path);
    if (!problem) return problem.error();
    auto device = find_device(r.device);
    if (!device) return device.error();
    auto bounds = compute_bounds(*problem, effective_ceilings(*device, std::nullopt));
    if (!bounds) return bounds.error();

    search::ProposalContext context;
    context.problem = &*problem;
    context.problem_spec_json = *spec_text;
    context.bounds = &*bounds;
    context.device_key = r.device;
    context.count = r.count;
    if (!r.program_path.empty()) {
        auto text = read_text(r.program_path);
        if (!text) return text.error();
        auto program = dsl::parse_program(*text, r.program_path);
        if (!program) return program.error();
        search::CandidateView best;
        best.program_text = dsl::print_canonical(*program);
        best.program_hash = dsl::program_hash(*program);
        best.proposer = "human";
        context.best.push_back(std::move(best));
    }
    return Prompts{system_prompt(), user_prompt(context)};
}

}  // namespace kforge::llm
