// The built-in proposers (search/proposer.h): they move through the knob space that the knob
// tables define (search/knob_space.h), return only programs that pass the loop's static tier
// (the checker against the problem and the device; a refused program is remembered for the run
// and never checked or proposed again) and never propose a program already in the run.
//   parameter   neighbours of the best parents along every tuning knob, a crossover of two good
//               parents of the same structure, and now and then a random restart (rejection
//               sampling of legal knobs, bounded tries); when single moves stall (the same best
//               as last time, or its neighbours used up) first every mix of the best and the
//               next best few, and two-knob neighbours of the best
//   random      knobs uniform over their domains, kept when legal (the benchmark's baseline)
//   diagnosis   directed moves from the SOL headroom, the ptxas summary and the diagnosis text
//               (a refused move is replaced by the same move with one other knob moved too,
//               when that is legal, else dropped):
//               memory-bound far from SOL -> wider vectors, more rows/items per block, one
//               pass, a row split over more CTAs;
//               compute-bound -> bigger tiles, more stages, clusters; spills -> smaller tiles,
//               fewer rows; dram_bound / latency_bound_low_occupancy / spill_bound / tail_bound
//               -> the moves listed in diagnosis_moves()
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "search/proposer.h"

namespace kforge::search {

std::unique_ptr<Proposer> make_parameter_proposer();
std::unique_ptr<Proposer> make_random_proposer();
std::unique_ptr<Proposer> make_diagnosis_proposer();
// The "seed" proposer ("search:seed", proposers_seed.cpp): the fusion planner's seed_variants
// (planner/plan.h) of the problem on the context's device that the run has not seen, all at
// once (structural alternatives to the start program: unfused, other tiles, f32 intermediates,
// other rowwise blocks); nothing once they are all in the run.
std::unique_ptr<Proposer> make_seed_proposer();

// By name: "parameter", "random", "diagnosis", "seed"; nullptr for an unknown name.
std::unique_ptr<Proposer> make_builtin_proposer(const std::string& name);

// A directed move: knob of every kernel of `kind` ("gemm", "rowwise", "map"; "" any) stepped up
// (+1) or down (-1), or set to `word`.
struct DirectedMove {
    std::string kind;
    std::string knob;
    int direction = 1;
    std::string word;
    std::string reason;
};

// The moves the diagnosis proposer makes for one candidate: from its diagnosis class
// (dram_bound, latency_bound_low_occupancy, spill_bound, tail_bound), its ptxas summary (spills)
// and the bound kind of the problem with the candidate's fraction of SOL.
std::vector<DirectedMove> diagnosis_moves(const CandidateView& view, const Bounds* bounds);

}  // namespace kforge::search
