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
//   diagnosis   directed moves from the typed diagnosis (its bottleneck classes and ptxas
//               spills: the moves table of diagnosis/moves.h) and the SOL headroom (the table's
//               roofline moves: memory-bound far from SOL -> wider vectors, more rows/items per
//               block, one pass, a row split over more CTAs; compute-bound -> bigger tiles, more
//               stages, clusters); a refused move is replaced by the same move with one other
//               knob moved too, when that is legal, else dropped. Moves that change launch
//               knobs only (a sm90 GEMM's raster, swizzle, split-K, stream-K) come first, each
//               marked "free: ... launch knobs only: no compile" (they share the parent's
//               compile), then the rest; a GEMM whose shape leaves SMs idle (search/
//               launch_moves.h: few output tiles with a long K, a short last wave) gets split-K
//               and stream-K moves also without a profile
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "diagnosis/moves.h"
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

// The moves the diagnosis proposer makes for one candidate (DirectedMove: diagnosis/moves.h):
// the moves table's knob moves for each bottleneck class of its diagnosis (spill_bound, or ptxas
// spills, first), then, far from SOL, the roofline moves of the problem's bound kind (not the
// memory ones when the profiler measured the kernel SIMT-bound). Each reason starts with what
// asked for the move ("dram_bound: ...", "memory-bound at 45% of SOL: ...").
std::vector<DirectedMove> diagnosis_moves(const CandidateView& view, const Bounds* bounds);

}  // namespace kforge::search
