// A candidate program as the search holds it: its canonical text, the parsed program and its
// content hash, made once - when a proposal is admitted (search/loop_propose.cpp), when a run
// starts from its start program or resumes from the store (search/loop_state.cpp) - and carried
// through the round: the cost-model screen, the cost model's observation of a quick timing and
// the proposers' parents (CandidateView::program) read the parsed program, none parses the text
// again.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "dsl/ast.h"

namespace kforge::search {

struct Candidate {
    std::string text;                             // canonical: dsl::print_canonical(*program)
    std::shared_ptr<const dsl::Program> program;  // never null
    std::string hash;                             // dsl::program_hash(*program)
};

// Parses `text` once (`origin` names it in a parse error, e.g. "<search:diagnosis>"), then
// prints and hashes the program.
Expected<Candidate> make_candidate(const std::string& text, const std::string& origin);

}  // namespace kforge::search
