// Fuzz target for LLM reply extraction: any reply text goes through extract_programs() and each
// extracted program through the kernel-language parser, as the LLM proposer does. Extraction
// never fails, so the findings are crashes, hangs and blowups, plus these properties: blocks are
// numbered 1..n, none is blank, and a block's text fenced again as ```kforge extracts unchanged
// (up to carriage returns).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dsl/parser.h"
#include "llm/extract.h"

namespace {

[[noreturn]] void fail(const char* what, std::string_view text) {
    std::fprintf(stderr, "extract_fuzz: %s\n---\n%.*s\n---\n", what,
                 static_cast<int>(text.size()), text.data());
    std::abort();
}

std::string without_cr(std::string s) {
    s.erase(std::remove(s.begin(), s.end(), '\r'), s.end());
    return s;
}

bool blank(std::string_view s) {
    return s.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view reply(reinterpret_cast<const char*>(data), size);
    const auto programs = kforge::llm::extract_programs(reply);
    for (size_t i = 0; i < programs.size(); ++i) {
        const auto& p = programs[i];
        if (p.index != static_cast<int>(i) + 1) fail("blocks are not numbered 1..n", reply);
        if (blank(p.text)) fail("a blank block was extracted", reply);
        if (p.text.size() > reply.size() + 1) fail("a block is longer than the reply", reply);
        if (p.rationale.find('\n') != std::string::npos) fail("a rationale spans lines", reply);
        const auto again = kforge::llm::extract_programs("```kforge\n" + p.text + "```\n");
        // (A line's one trailing CR is dropped per pass, so compare without CRs.)
        if (again.size() != 1 || without_cr(again[0].text) != without_cr(p.text))
            fail("re-fenced block changed", p.text);
        (void)kforge::dsl::parse_program(p.text, "reply.kf");
    }
    return 0;
}
