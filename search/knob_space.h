// Moves in the legal knob space of a program, read from the knob tables (dsl/knobs.h) so the
// search never keeps a second copy of the domains: neighbours of one knob value, uniformly
// random knob settings, and crossover of two programs of the same structure. Knobs that change
// what a program computes (`over`, `eps`, `groups`) are never touched. The results are legal by
// the tables, not yet by the checker (shared memory, divisibility): run check_program on them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/ast.h"

namespace kforge::search {

// A program one move away from its parent, and the move in words ("k0 vec 4 -> 8").
struct KnobMove {
    dsl::Program program;
    std::string move;
    std::string knob;  // "k0 threads": the kernel and knob a single-knob move changed ("" else)
    // The move changes launch knobs only (codegen/launch_knobs.h): the program shares its
    // parent's compile, so it costs an evaluation and no compile.
    bool free = false;
};

// What a program's compile depends on among its knobs, as text: programs with equal keys lower
// to one source and share one compile (codegen::compile_configuration, canonically printed).
std::string compile_configuration_key(const dsl::Program& p);

// Whether `to` shares `from`'s compile (it differs from it in launch knobs only).
bool is_free_move(const dsl::Program& from, const dsl::Program& to);

// The knobs of kernel `kernel` of `p` with a free single move (a sm90 GEMM: raster, swizzle;
// splitk where the stream-K scheduler is compiled in: from splitk 2 to 3, not to 1).
std::vector<std::string> free_knobs(const dsl::Program& p, size_t kernel);

// Every free neighbour of `p` (single-knob and two-knob moves that keep its compile),
// single moves first.
std::vector<KnobMove> free_neighbours(const dsl::Program& p);

// Deterministic generator (SplitMix64) so proposals depend only on the seed.
struct Rng {
    uint64_t state = 1;
    uint64_t next();
    int64_t uniform(int64_t lo, int64_t hi);  // inclusive
    double unit();                            // [0, 1)
};

// Whether the search may change this knob of this kernel kind (tuning, not semantics).
bool is_tuning_knob(dsl::KernelKind kind, std::string_view knob);

// Every single-knob neighbour of `p`: each integer part one step along its domain (the adjacent
// listed value, or half/double and +-step in small ranges), every other word, `auto` <-> an
// integer, a flag toggled.
std::vector<KnobMove> knob_neighbours(const dsl::Program& p);

// Every two-knob neighbour of `p`: a single-knob neighbour moved again along another knob
// ("k0 threads 1024 -> 512, k0 split 8 -> 16"); a pair is listed in both orders.
std::vector<KnobMove> knob_pair_neighbours(const dsl::Program& p);

// Trades: one integer knob of a kernel doubled and another of the same kernel halved
// ("k0 threads 1024 -> 512, k0 split 8 -> 16": the threads a row gets stay 8192, in smaller
// CTAs). Two knobs that pull against each other are where single moves mislead: on the H200
// each half of that trade alone was slower than the start, both together 1.09x faster.
std::vector<KnobMove> knob_trades(const dsl::Program& p);

// Moves of one knob of kernel `kernel` in one direction: `direction` > 0 larger values, < 0
// smaller (words: the next/previous word in the table). Empty when there is nowhere to go.
std::vector<KnobMove> step_knob(const dsl::Program& p, size_t kernel, std::string_view knob,
                                int direction);

// `p` with the word knob set to `word` (nullopt when the knob or word is unknown or already set).
std::optional<KnobMove> set_word_knob(const dsl::Program& p, size_t kernel, std::string_view knob,
                                      std::string_view word);

// Every tuning knob of kernel `kernel` drawn uniformly from its legal domain; the other kernels
// as in `p` (a random restart draws the kernels one at a time against the checker).
KnobMove random_kernel_knobs(const dsl::Program& p, size_t kernel, Rng& rng);

// Same kernels, kinds and chains (only knobs differ).
bool same_structure(const dsl::Program& a, const dsl::Program& b);

// Each tuning knob taken from `a` or `b` at random; nullopt when the structures differ.
std::optional<KnobMove> crossover(const dsl::Program& a, const dsl::Program& b, Rng& rng);

// Every mix of `a` and `b` (each tuning knob where they differ from one or the other), a and b
// themselves left out; none when the structures differ or they differ in more than `max_knobs`
// knobs (2^max_knobs - 2 mixes). Two moves made from one parent meet here: a parent moved along
// threads and the same parent moved along split give the parent moved along both.
std::vector<KnobMove> crossovers(const dsl::Program& a, const dsl::Program& b, int max_knobs = 4);

}  // namespace kforge::search
