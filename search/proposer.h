// The proposer plug-in point: built-in proposers (parameter, diagnosis-driven, random, seed)
// and the LLM proposer (llm/) all implement Proposer. The search loop (search/loop.h) builds a
// ProposalContext from the store and the evaluation results, asks each proposer for programs,
// and screens what comes back through the fidelity ladder. Proposers never evaluate anything.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/diagnosis.h"
#include "dsl/ast.h"
#include "problem/problem.h"
#include "sol/bounds.h"
#include "store/enums.h"

namespace kforge::search {

// What a proposer may know about one evaluated (or rejected) candidate.
struct CandidateView {
    std::string program_text;     // canonical text
    std::string program_hash;
    EvalStatus status = EvalStatus::kPassed;
    std::string message;          // checker / compiler / gate message when it failed
    std::optional<double> median_ns;
    std::optional<double> fraction_of_sol;  // T_sol / T (1.0 = at the fused SOL bound)
    Diagnosis diagnosis;          // bottleneck classes, evidence, moves and the ptxas summary
                                  // (profile/); empty when not profiled
    std::string proposer;
    std::string move;
    // program_text parsed, where the loop has it (search/candidate.h); null: parse the text
    std::shared_ptr<const dsl::Program> program;
};

struct ProposalContext {
    const Problem* problem = nullptr;
    std::string problem_spec_json;           // the spec as the user wrote it
    const Bounds* bounds = nullptr;     // fused/unfused SOL on the target device
    std::string device_key = "h200";
    std::vector<CandidateView> best;         // best passed candidates, fastest first
    std::vector<CandidateView> recent_failures;
    std::vector<std::string> helpful_moves;  // moves that helped on similar problems (store)
    std::vector<std::string> seen_hashes;    // programs already in the run (proposing them again
                                             // is wasted: the loop drops them)
    // Per kernel of the best program (by name), its kernel group's weight this round
    // (search/group_budget.h: share of time x SOL headroom); a proposer puts moves of the
    // heavier kernels first. Empty: no preference (one group).
    std::map<std::string, double> kernel_focus;
    int count = 4;                           // how many programs to propose
    uint64_t seed = 1;
};

struct Proposal {
    std::string program_text;
    std::vector<std::string> parent_hashes;  // empty for a seed; two for a crossover
    std::string move;                        // e.g. "tile 128x128x64 -> 128x256x64"
};

// Usage counters a proposer reports (LLM tokens and cost; zero for built-in proposers).
struct ProposerUsage {
    int64_t tokens_in = 0;
    int64_t tokens_out = 0;
    double cost_usd = 0.0;
    int requests = 0;
};

class Proposer {
public:
    virtual ~Proposer() = default;
    virtual std::string name() const = 0;
    // Programs for the context; may return fewer than asked (or none when it has nothing new).
    virtual std::vector<Proposal> propose(const ProposalContext& context) = 0;
    virtual ProposerUsage usage() const { return {}; }
    // False once the proposer's own budget (e.g. LLM tokens) is spent.
    virtual bool exhausted() const { return false; }
};

}  // namespace kforge::search
