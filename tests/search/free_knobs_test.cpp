// Free knobs in the search (issue 27): the knob space says which moves change launch knobs only
// (codegen/launch_knobs.h), the parameter proposer spends most of a request on them, and the
// loop admits a launch-knob variant of a compiled configuration as precompiled (a quick timing,
// no compile wave, no room in the compile budget). No GPU: the loop's helpers on a state.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "codegen/launch_knobs.h"
#include "compile/compile_history.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "search/knob_space.h"
#include "search/loop_internal.h"
#include "search/proposers.h"
#include "search/proposers_common.h"

namespace kforge::search {
namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

dsl::Program suite_program(const std::string& name) {
    auto p = dsl::parse_program(slurp(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".kf"),
                                name);
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : dsl::Program{};
}

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(FreeKnobs, TheKnobSpaceNamesTheLaunchKnobs) {
    const dsl::Program split = suite_program("gemm_large_k_bf16");  // cooperative, splitk 2
    std::vector<std::string> free = free_knobs(split, 0);
    EXPECT_TRUE(has(free, "raster"));
    EXPECT_TRUE(has(free, "swizzle"));
    EXPECT_TRUE(has(free, "splitk"));  // 2 -> 3 keeps the stream-K scheduler
    EXPECT_FALSE(has(free, "tile"));
    EXPECT_FALSE(has(free, "stages"));
    dsl::Program plain = split;
    plain.kernels[0].gemm.split_k = 1;  // the persistent scheduler: a split is a compile
    EXPECT_FALSE(has(free_knobs(plain, 0), "splitk"));
    EXPECT_TRUE(has(free_knobs(plain, 0), "raster"));

    const std::vector<KnobMove> moves = free_neighbours(split);
    ASSERT_GE(moves.size(), 10u);  // raster x swizzle x splitk, one and two at a time
    for (const KnobMove& m : moves) {
        EXPECT_TRUE(m.free) << m.move;
        EXPECT_TRUE(is_free_move(split, m.program)) << m.move;
        EXPECT_EQ(m.program.kernels[0].gemm.tile_n, split.kernels[0].gemm.tile_n);
    }
    int free_singles = 0, costly_singles = 0;
    for (const KnobMove& m : knob_neighbours(split)) (m.free ? free_singles : costly_singles)++;
    EXPECT_GT(free_singles, 0);
    EXPECT_GT(costly_singles, 0);  // tile, cluster, stages, schedule, math ...

    codegen::set_launch_knobs_baked(true);  // the old behaviour: nothing is free
    EXPECT_TRUE(free_neighbours(split).empty());
    EXPECT_TRUE(free_knobs(split, 0).empty());
    codegen::set_launch_knobs_baked(false);
}

TEST(FreeKnobs, TheParameterProposerSpendsMostMovesOnFreeKnobs) {
    auto problem = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/gemm_large_k_bf16.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    const dsl::Program start = suite_program("gemm_large_k_bf16");
    ProposalContext ctx;
    ctx.problem = &*problem;
    ctx.count = 12;
    CandidateView v;
    v.program_text = dsl::print_canonical(start);
    v.program_hash = dsl::program_hash(start);
    ctx.best = {v};
    ctx.seen_hashes = {v.program_hash};
    auto count_free = [&](std::vector<Proposal> proposals) {
        int free = 0;
        for (const Proposal& p : proposals) {
            auto prog = dsl::parse_program(p.program_text, "<proposal>");
            EXPECT_TRUE(prog.ok());
            if (!prog.ok()) continue;
            EXPECT_EQ(detail::static_check(*prog, *problem, "h200"), "") << p.move;
            if (is_free_move(start, *prog)) {
                ++free;
                EXPECT_EQ(p.move.rfind("free: ", 0), 0u) << p.move;
            }
        }
        return std::make_pair(free, static_cast<int>(proposals.size()));
    };
    auto [free, total] = count_free(make_parameter_proposer()->propose(ctx));
    EXPECT_EQ(total, 12);
    EXPECT_GE(free, 9) << "three quarters of the request on launch knobs";
    EXPECT_LT(free, total) << "the rest explores moves that need a compile";
    codegen::set_launch_knobs_baked(true);
    auto [baked_free, baked_total] = count_free(make_parameter_proposer()->propose(ctx));
    codegen::set_launch_knobs_baked(false);
    EXPECT_EQ(baked_free, 0);
    EXPECT_EQ(baked_total, 12);
}

// A state with a timed start (its configuration compiled), a launch-knob variant and a tile move.
struct LoopFixture {
    SearchState st;
    SearchOptions options;
    std::string start, variant, tile;

    LoopFixture() {
        st.simulated = false;
        options.compile_cache_dir = "/tmp/kforge-free-knobs-unused";
        dsl::Program p = suite_program("gemm_large_k_bf16");
        start = add(p, true);
        dsl::Program v = p;
        v.kernels[0].gemm.split_k = 4;
        v.kernels[0].gemm.raster = dsl::Raster::kAlongM;
        variant = add(v, false);
        dsl::Program t = p;
        t.kernels[0].gemm.tile_n = 256;
        tile = add(t, false);
    }
    std::string add(const dsl::Program& p, bool timed) {
        const std::string h = dsl::program_hash(p);
        CandidateState c;
        c.text = dsl::print_canonical(p);
        c.program = std::make_shared<const dsl::Program>(p);
        if (timed) c.quick = eval::TimingStats{};
        st.candidates[h] = c;
        return h;
    }
};

TEST(FreeKnobs, TheLoopAdmitsLaunchKnobVariantsAsPrecompiled) {
    LoopFixture f;
    EXPECT_EQ(detail::mark_free_candidates(f.st, {f.variant, f.tile}, f.options), 1);
    EXPECT_TRUE(f.st.precompiled.count(f.variant));
    EXPECT_FALSE(f.st.precompiled.count(f.tile));
    // without a compile cache every program compiles on its own: nothing is free
    LoopFixture g;
    g.options.compile_cache_dir.clear();
    EXPECT_EQ(detail::mark_free_candidates(g.st, {g.variant}, g.options), 0);
    // nor on the simulated device (it compiles nothing)
    LoopFixture s;
    s.st.simulated = true;
    EXPECT_EQ(detail::mark_free_candidates(s.st, {s.variant}, s.options), 0);
}

TEST(FreeKnobs, AVariantTakesNoRoomInTheCompileBudget) {
    LoopFixture f;
    Spent spent;
    f.options.budget.compiles = 1;
    eval::PrecompileRequest a;
    detail::fill_precompile(a, f.st, {f.variant, f.tile}, f.options, spent);
    EXPECT_EQ(a.program_texts.size(), 2u);  // the tile move takes the one compile
    f.options.budget.compiles = 0;
    eval::PrecompileRequest b;
    detail::fill_precompile(b, f.st, {f.variant, f.tile}, f.options, spent);
    ASSERT_EQ(b.program_texts.size(), 1u);  // a prefix: the variant, then no room
    EXPECT_EQ(b.program_texts[0], f.st.candidates.at(f.variant).text);
}

// A precompile reports a shared compile's time for every program that shares it; the history
// charges it once, to the first program of the batch that needed it.
TEST(FreeKnobs, ACompileIsChargedToTheCandidateThatNeededIt) {
    LoopFixture f;
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("kforge_free_knobs_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    eval::PrecompileRequest pre;
    pre.compile_cache_dir = dir.string();
    pre.jobs = 4;
    eval::PrecompileReport report;
    for (const std::string& h : {f.start, f.variant, f.tile}) {
        pre.program_texts.push_back(f.st.candidates.at(h).text);
        eval::PrecompiledProgram p;
        p.status = eval::PrecompileStatus::kCompiled;
        p.sources = 1;
        p.time_compile_ns = h == f.tile ? 61'000'000'000 : 52'000'000'000;
        report.programs.push_back(p);
    }
    report.sources = 2;
    detail::record_compile_cost(f.st, pre, report, 61.0);
    auto history = compile::load_compile_history(dir.string());
    ASSERT_EQ(history.size(), 2u);  // two compiles, not three
    EXPECT_EQ(history[0].charged_to, f.start);
    EXPECT_EQ(history[0].shared_by, 1);  // the variant ran on it
    EXPECT_DOUBLE_EQ(history[0].seconds, 52);
    EXPECT_EQ(history[1].charged_to, f.tile);
    EXPECT_EQ(history[1].shared_by, 0);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kforge::search
