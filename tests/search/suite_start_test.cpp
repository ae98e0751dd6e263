// The suite's start phase (search/suite_start.h) on the simulated device: the plan orders the
// starts by SOL headroom per compile-second with estimates from the compile history, the phase
// obeys a wall budget smaller than its compile estimate (the rest "not reached"), programs that
// need no nvcc are timed while the compiles run and the GPU waits only when nothing compiled is
// left to time. The compiles here are a sleeping compiler (the timings are real simulated
// evaluations); suite_start_failure_test.cpp runs the real nvcc on a missing header.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/stop_request.h"
#include "compile/compile_history.h"
#include "device/device.h"
#include "eval/evaluator.h"
#include "problem/spec.h"
#include "search/proposers.h"
#include "search/suite.h"
#include "search/suite_start.h"
#include "suite_start_fixture.h"

namespace kforge::search {
namespace {
namespace fs = std::filesystem;
using testing::kGemms;
using testing::kRowwise;
using testing::SuiteStart;
using testing::fresh_dir;

// A compiler that takes `seconds` (the test's stand-in for nvcc on a CUTLASS GEMM).
StartCompiler sleeping_compiler(double seconds) {
    return [seconds](const Problem&, const std::string&) {
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
        return StartCompileResult{true, true, seconds, ""};
    };
}

TEST_F(SuiteStart, PlanOrdersByHeadroomPerCompileSecondWithHistoryEstimates) {
    const fs::path cache = fresh_dir("plan");
    SearchOptions o;
    auto states = start(*evaluator_, o, all_names());
    ASSERT_EQ(states.size(), 8u);
    // no history: the default table
    StartPlan plan = plan_starts(states, true, cache.string(), 2, 1.0);
    ASSERT_EQ(plan.items.size(), 8u);
    int nvcc = 0;
    for (const StartPlanItem& it : plan.items) {
        if (!it.needs_nvcc) continue;
        ++nvcc;
        EXPECT_EQ(it.kind, "gemm_sm90");
        EXPECT_DOUBLE_EQ(it.compile_est_s, compile::default_compile_s("gemm_sm90"));
        EXPECT_NE(it.estimate_basis.find("default"), std::string::npos);
    }
    EXPECT_EQ(nvcc, 6);
    // with history: its means, and the waves follow the priorities on 2 jobs
    for (double s : {3.0, 5.0})
        ASSERT_TRUE(compile::append_compile_history(cache.string(), {"gemm_sm90", "", s}));
    plan = plan_starts(states, true, cache.string(), 2, 1.0);
    for (size_t i = 0; i < plan.items.size(); ++i) {
        const StartPlanItem& it = plan.items[i];
        if (!it.needs_nvcc) {
            EXPECT_EQ(it.wave, 0);
            EXPECT_EQ(it.compile_est_s, 0);
            continue;
        }
        EXPECT_DOUBLE_EQ(it.compile_est_s, 4.0) << it.estimate_basis;
        EXPECT_EQ(it.wave, static_cast<int>(i / 2) + 1);
        EXPECT_DOUBLE_EQ(it.planned_ready_s, 4.0 * (static_cast<int>(i / 2) + 1));
        if (i > 0 && plan.items[i - 1].needs_nvcc) EXPECT_GE(plan.items[i - 1].priority, it.priority);
        EXPECT_NEAR(it.priority, it.headroom / 4.0, 1e-12);
    }
    Budget b;
    b.wall_s = 10;
    const std::string text = describe_start_plan(plan, states, b);
    EXPECT_NE(text.find("compile est 4.0 s (2 samples of gemm_sm90)"), std::string::npos) << text;
    EXPECT_NE(text.find("(past the budget)"), std::string::npos) << text;  // wave 3 ends at 12 s
    // nothing compiled (the simulated device): every start is ready at once
    plan = plan_starts(states, false, cache.string(), 2, 1.0);
    for (const StartPlanItem& it : plan.items) EXPECT_FALSE(it.needs_nvcc);
    fs::remove_all(cache);
}

// The budget (2.5 s) is smaller than the starts' compile estimate (6 x 1.0 s on 2 jobs = 3 s of
// waves, plus timings): the phase compiles and times what fits, lists the rest as not reached,
// and the suite ends within the budget plus a small grace. The row-wise starts (no nvcc) are
// timed while the first compiles run, then given their full tier while the compiles still run,
// and the GPU waits only when nothing compiled is waiting.
TEST_F(SuiteStart, ObeysAWallBudgetSmallerThanItsCompileEstimate) {
    const fs::path cache = fresh_dir("budget");
    ASSERT_TRUE(compile::append_compile_history(cache.string(), {"gemm_sm90", "", 1.0}));
    SearchOptions o;
    o.budget.wall_s = 2.5;
    o.compile_cache_dir = cache.string();
    o.proposals_per_round = 2;
    o.suite = "cold";
    auto states = start(*evaluator_, o, all_names());
    ASSERT_EQ(states.size(), 8u);
    std::mutex mu;
    std::vector<std::string> events, lines;
    SuiteHooks hooks;
    hooks.start.compile = sleeping_compiler(1.0);
    hooks.start.jobs = 2;
    hooks.start.time_est_s = 0.3;
    hooks.start.print = [&](const std::string& l) { lines.push_back(l); };
    hooks.start.event = [&](const std::string& e) {
        std::lock_guard<std::mutex> lock(mu);
        events.push_back(e);
    };
    auto param = make_parameter_proposer();
    Spent spent;
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(run_suite(states, *evaluator_, *store_, {param.get()}, o, spent, hooks));
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(secs, *o.budget.wall_s + 3.0) << "the suite ran past its budget and grace";

    std::string all;
    for (const std::string& l : lines) all += l;
    EXPECT_NE(all.find("start plan: 8 start programs, 6 to compile with nvcc on 2 jobs "
                       "(estimated 6.0 compile-seconds)"), std::string::npos) << all;
    int timed = 0, not_reached = 0;
    for (const SearchState& st : states) {
        const bool reached = st.stop_reason.rfind("not reached", 0) != 0;
        const CandidateState& c = st.candidates.at(st.start_hash);
        if (reached) {
            ++timed;
            EXPECT_TRUE(c.quick.has_value()) << st.problem.name << ": " << st.stop_reason;
            EXPECT_NE(all.find("start " + st.problem.name + ": "), std::string::npos);
        } else {
            ++not_reached;
            EXPECT_FALSE(c.evaluated) << st.problem.name;
            EXPECT_NE(all.find("start " + st.problem.name + ": not reached"), std::string::npos);
        }
    }
    EXPECT_GE(timed, 4) << all;        // the row-wise two and at least the first wave
    EXPECT_GE(not_reached, 2) << all;  // the third wave cannot fit
    EXPECT_EQ(timed + not_reached, 8);
    // a per-start line with compile seconds, time and % SOL
    EXPECT_NE(all.find("compiled in 1.0 s (est 1.0 s), "), std::string::npos) << all;
    EXPECT_NE(all.find("% SOL"), std::string::npos) << all;

    // the schedule's order: a row-wise start is timed before the first compile ends, and the GPU
    // waits only when every compiled start has been timed
    std::lock_guard<std::mutex> lock(mu);
    size_t first_time = events.size(), first_compiled = events.size();
    std::set<std::string> compiled_untimed;
    for (size_t i = 0; i < events.size(); ++i) {
        const std::string& e = events[i];
        if (e.rfind("time ", 0) == 0) {
            first_time = std::min(first_time, i);
            compiled_untimed.erase(e.substr(5));
        } else if (e.rfind("compiled ", 0) == 0) {
            first_compiled = std::min(first_compiled, i);
            compiled_untimed.insert(e.substr(9));
        } else if (e.rfind("not reached ", 0) == 0) {
            compiled_untimed.erase(e.substr(12));
        } else if (e == "wait") {
            EXPECT_TRUE(compiled_untimed.empty()) << "the GPU waited with a compiled start "
                                                  << *compiled_untimed.begin() << " untimed";
        }
    }
    ASSERT_LT(first_compiled, events.size());
    EXPECT_LT(first_time, first_compiled) << "no start was timed while the compiles ran";
    // with nothing compiled to time, the GPU gave a timed start its full tier meanwhile
    size_t first_full = events.size(), last_compiled = 0;
    for (size_t i = 0; i < events.size(); ++i) {
        if (events[i].rfind("full ", 0) == 0) first_full = std::min(first_full, i);
        if (events[i].rfind("compiled ", 0) == 0) last_compiled = i;
    }
    EXPECT_LT(first_full, last_compiled) << "no full tier while the compiles ran";
    // the compiles recorded their times for the next plan
    EXPECT_GT(compile::load_compile_history(cache.string()).size(), 1u);
    fs::remove_all(cache);
}

// While the GPU waits for the start compiles, the phase sends heartbeat events (what a status
// line shows instead of silence), every 5 s.
TEST_F(SuiteStart, HeartbeatWhileTheGpuWaitsForCompiles) {
    SearchOptions o;
    o.proposals_per_round = 2;
    o.stop.max_rounds = 1;
    o.suite = "heartbeat";
    auto states = start(*evaluator_, o, {kGemms[0]});
    ASSERT_EQ(states.size(), 1u);
    std::mutex mu;
    std::vector<ProgressEvent> beats;
    o.on_event = [&](const ProgressEvent& e) {
        std::lock_guard<std::mutex> lock(mu);
        // the start phase's (a round's compile wave says "compiling N program(s)")
        if (e.kind == ProgressEvent::Kind::kHeartbeat && e.text.find(" start ") != std::string::npos)
            beats.push_back(e);
    };
    SuiteHooks hooks;
    hooks.start.compile = sleeping_compiler(6.0);
    hooks.start.jobs = 1;
    auto param = make_parameter_proposer();
    Spent spent;
    ASSERT_TRUE(run_suite(states, *evaluator_, *store_, {param.get()}, o, spent, hooks));
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(beats.size(), 1u);
    EXPECT_EQ(beats[0].text, "compiling 1 start program(s)");
    EXPECT_GE(beats[0].elapsed_s, 5.0);
    EXPECT_LT(beats[0].elapsed_s, 6.0);
}

// A stop asked for in the middle of the start phase (SIGTERM) ends it after what is in flight:
// nothing left is called not reached or failed (the problems stay unfinished, to resume), and
// the suite marks them interrupted.
TEST_F(SuiteStart, StopRequestEndsThePhaseLeavingTheRestToResume) {
    clear_stop_request();
    SearchOptions o;
    o.budget.wall_s = 60;
    o.suite = "stopped";
    auto states = start(*evaluator_, o, all_names());
    ASSERT_EQ(states.size(), 8u);
    SuiteHooks hooks;
    hooks.start.compile = sleeping_compiler(1.0);
    hooks.start.jobs = 2;
    std::thread stopper([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        request_stop();
    });
    auto param = make_parameter_proposer();
    Spent spent;
    auto t0 = std::chrono::steady_clock::now();
    auto ran = run_suite(states, *evaluator_, *store_, {param.get()}, o, spent, hooks);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    stopper.join();
    clear_stop_request();
    ASSERT_TRUE(ran);
    EXPECT_LT(secs, 10.0);
    int interrupted = 0;
    for (const SearchState& st : states) {
        EXPECT_EQ(st.stop_reason.rfind("not reached", 0), std::string::npos) << st.problem.name;
        EXPECT_EQ(st.stop_reason.rfind("its start program failed", 0), std::string::npos);
        interrupted += st.stop_reason.rfind("interrupted by a stop request", 0) == 0;
    }
    EXPECT_GE(interrupted, 6) << "the GEMM starts compiling or waiting are unfinished";
}

}  // namespace
}  // namespace kforge::search
