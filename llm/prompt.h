// The prompts of the LLM proposer. The system prompt is the role plus the language reference
// card (dsl/reference_card.h). The user prompt carries what the search knows: the problem spec,
// its SOL bounds and the current headroom, the best candidates with measured times, %SOL,
// diagnosis and ptxas summary, recent failures with their messages, moves that helped on
// similar problems, and the ask (N programs in ```kforge blocks, each with a rationale line).
#pragma once

#include <string>
#include <vector>

#include "sol/bounds.h"

#include "search/proposer.h"

namespace kforge::llm {

std::string system_prompt();

std::string user_prompt(const search::ProposalContext& context);

// A program the checker (or parser) rejected, to send back in a repair turn.
struct RejectedProgram {
    int index = 0;          // position in the previous reply (1-based)
    std::string text;       // as the model wrote it
    std::string errors;     // parser/checker messages with line, column and caret
};

// The follow-up turn after a reply whose programs were (partly) rejected.
std::string repair_prompt(const std::vector<RejectedProgram>& rejected, int accepted);

}  // namespace kforge::llm
