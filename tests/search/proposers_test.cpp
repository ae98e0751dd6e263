// The built-in proposers produce programs that parse (knob values inside the tables' domains),
// compute the problem (checker semantics), never repeat a program the run has seen, and name
// their move.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "search/knob_space.h"
#include "search/proposers.h"
#include "sol/device.h"

namespace kforge::search {
namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

class ProposersOnSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(ProposersOnSuite, LegalNewNamedPrograms) {
    std::string base = std::string(KFORGE_SOURCE_DIR) + "/problems/" + GetParam();
    auto problem = load_problem(base + ".json");
    ASSERT_TRUE(problem) << problem.error().to_string();
    std::string text = slurp(base + ".kf");
    auto start = dsl::parse_program(text, "start");
    ASSERT_TRUE(start);
    dsl::DeviceLimits limits = dsl::device_limits(*find_device("h200"));
    ProposalContext ctx;
    ctx.problem = &*problem;
    ctx.count = 8;
    CandidateView v;
    v.program_text = dsl::print_canonical(*start);
    v.program_hash = dsl::program_hash(*start);
    v.fraction_of_sol = 0.3;
    v.diagnosis = "dram_bound; latency_bound_low_occupancy; tail_bound";
    v.ptxas_summary = "k0: 96 registers, 24 bytes spill stores";
    ctx.best = {v};
    ctx.seen_hashes = {v.program_hash};
    for (const char* name : {"parameter", "random", "diagnosis"}) {
        auto p = make_builtin_proposer(name);
        ASSERT_TRUE(p);
        auto props = p->propose(ctx);
        EXPECT_FALSE(props.empty()) << name;
        EXPECT_LE(props.size(), 8u) << name;
        int checked = 0;
        std::set<std::string> hashes;
        for (const Proposal& prop : props) {
            auto prog = dsl::parse_program(prop.program_text, name);
            ASSERT_TRUE(prog) << name << ": " << prog.error().to_string() << "\n" << prop.program_text;
            std::string h = dsl::program_hash(*prog);
            EXPECT_NE(h, v.program_hash) << name << " proposed the parent again";
            EXPECT_TRUE(hashes.insert(h).second) << name << " proposed a program twice";
            EXPECT_FALSE(prop.move.empty());
            ASSERT_FALSE(prop.parent_hashes.empty());
            EXPECT_EQ(prop.parent_hashes[0], v.program_hash);
            if (dsl::check_program(*prog, *problem, limits).ok()) ++checked;
        }
        if (std::string(name) != "random") EXPECT_GT(checked, 0) << name;
    }
}

INSTANTIATE_TEST_SUITE_P(Suite, ProposersOnSuite,
                         ::testing::Values("bias_gelu_mul_f32", "layer_norm_f32", "gemm_bf16_4096",
                                           "softmax_long_rows_f32"));

TEST(KnobSpace, NeighboursChangeOneKnobAndFlagsToggleBothWays) {
    auto p = dsl::parse_program(
        "program t for \"t\"\nkernel k0 = rowwise softmax(X[R,C]) rows_per_block 1 threads 256 "
        "vec 4 passes 1 online split 1\n    { store Y[R,C] }\n", "t");
    ASSERT_TRUE(p) << p.error().to_string();
    auto n = knob_neighbours(*p);
    bool off = false, vec8 = false;
    for (const KnobMove& m : n) {
        EXPECT_NE(m.program, *p);
        if (m.move == "k0 online on -> off") off = !m.program.kernels[0].rowwise.online;
        if (m.move == "k0 vec 4 -> 8") vec8 = m.program.kernels[0].rowwise.vec == 8;
    }
    EXPECT_TRUE(off);
    EXPECT_TRUE(vec8);
    EXPECT_TRUE(step_knob(*p, 0, "eps", 1).empty());  // semantic knobs are never moved
    EXPECT_TRUE(step_knob(*p, 0, "vec", 1).size() == 1u);
}

TEST(KnobSpace, CrossoverNeedsSameStructure) {
    auto a = dsl::parse_program("program t for \"t\"\nkernel k0 = map(X[R,C]) block 256 vec 4\n"
                                "    { relu; store Y[R,C] }\n", "a");
    auto b = dsl::parse_program("program t for \"t\"\nkernel k0 = map(X[R,C]) block 512 vec 8\n"
                                "    { relu; store Y[R,C] }\n", "b");
    auto c = dsl::parse_program("program t for \"t\"\nkernel k0 = map(X[R,C]) block 512 vec 8\n"
                                "    { gelu erf; store Y[R,C] }\n", "c");
    ASSERT_TRUE(a && b && c);
    Rng rng{3};
    EXPECT_TRUE(crossover(*a, *b, rng));
    EXPECT_FALSE(crossover(*a, *c, rng));
}

TEST(Diagnosis, MovesFollowTheEvidence) {
    Bounds mem;
    mem.kind = BoundKind::kMemory;
    CandidateView v;
    v.fraction_of_sol = 0.4;
    auto moves = diagnosis_moves(v, &mem);
    bool vec = false;
    for (const auto& m : moves) vec = vec || (m.knob == "vec" && m.direction > 0);
    EXPECT_TRUE(vec);
    v.fraction_of_sol = 0.95;
    EXPECT_TRUE(diagnosis_moves(v, &mem).empty());
    v.ptxas_summary = "0 bytes spill stores, 0 bytes spill loads";
    EXPECT_TRUE(diagnosis_moves(v, &mem).empty());
    v.ptxas_summary = "128 bytes spill stores";
    bool smaller_tile = false;
    for (const auto& m : diagnosis_moves(v, &mem)) smaller_tile = smaller_tile || (m.knob == "tile" && m.direction < 0);
    EXPECT_TRUE(smaller_tile);
    v.ptxas_summary.clear();
    v.diagnosis = "tail_bound: last wave 12% full";
    bool streamk = false;
    for (const auto& m : diagnosis_moves(v, &mem)) streamk = streamk || m.word == "stream_k";
    EXPECT_TRUE(streamk);
}

}  // namespace
}  // namespace kforge::search
