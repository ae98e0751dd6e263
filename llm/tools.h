// What `kforge llm` does, as library calls: ping an endpoint with one tiny request, and preview
// the prompts the LLM proposer would send for a problem (sending nothing).
#pragma once

#include <string>

#include "common/expected.h"
#include "llm/client.h"
#include "llm/config.h"

namespace kforge::llm {

// One "Reply with the single word: pong" request over HTTP with `api_key` ("" for none).
ChatOutcome ping(const LlmConfig& config, const std::string& api_key);

struct PromptPreviewRequest {
    std::string problem_path;   // problem spec (JSON)
    std::string program_path;   // a program shown as the best so far ("": none)
    std::string device = "h200";  // device table name, for the SOL bounds in the prompt
    int count = 4;              // programs asked for
};

struct Prompts {
    std::string system;
    std::string user;
};

// The system and user prompts; a user error names the file, the spec or the device at fault.
Expected<Prompts> preview_prompts(const PromptPreviewRequest& request);

}  // namespace kforge::llm
