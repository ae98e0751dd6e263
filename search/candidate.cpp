// A candidate parsed, printed and hashed once (search/candidate.h).
#include "search/candidate.h"

#include "dsl/parser.h"
#include "dsl/printer.h"

namespace kforge::search {

Expected<Candidate> make_candidate(const std::string& text, const std::string& origin) {
    auto program = dsl::parse_program(text, origin);
    if (!program) return program.error();
    Candidate c;
    c.text = dsl::print_canonical(*program);
    c.hash = dsl::program_hash(*program);
    c.program = std::make_shared<const dsl::Program>(std::move(*program));
    return c;
}

}  // namespace kforge::search
