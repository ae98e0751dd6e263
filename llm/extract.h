// Programs out of an LLM reply: fenced blocks tagged ```kforge or ```kf, or untagged fences
// whose text contains a `program` line, each with the one-line rationale written next to it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kforge::llm {

struct ExtractedProgram {
    std::string text;       // the block's contents
    std::string rationale;  // "Rationale: ..." line before (or after) the block; may be empty
    int index = 0;          // 1-based position among the extracted blocks
};

// Never fails: prose without code gives an empty list; an unterminated fence at the end of a
// (truncated) reply is taken up to the end of the text.
std::vector<ExtractedProgram> extract_programs(std::string_view reply);

}  // namespace kforge::llm
