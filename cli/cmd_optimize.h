// Shared by `kforge optimize` (cmd_optimize.cpp) and `kforge suite` (cmd_suite.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/llm_common.h"
#include "device/device.h"
#include "llm/proposer.h"
#include "problem/problem.h"
#include "search/loop.h"
#include "search/proposer.h"

namespace kforge::cli {

struct OptimizeArgs {
    std::string spec;
    std::string program;
    std::optional<double> budget_wall_s, budget_gpu_s;
    std::optional<int64_t> budget_compiles;
    std::optional<int> max_rounds, patience;
    std::optional<double> within_sol_percent;
    std::string device = "auto";
    std::string sim_model = "h200";
    std::string db = ".kforge/kforge.db";
    std::optional<int64_t> resume;
    uint64_t seed = 1;
    std::string out;
    std::vector<std::string> proposers = {"diagnosis", "parameter"};
    double promote_ratio = 1.0 / 3.0;
    int per_round = 12;
    std::string llm;                      // LLM config file; empty: no LLM proposer
    std::optional<int64_t> budget_tokens;  // LLM tokens (in + out) for the run
    std::optional<double> budget_cost;     // LLM cost (USD) for the run
    int profile_top = 2;                  // best candidates diagnosed per round; 0: none
    std::string ncu = "ncu";
};

class EvalBackend;

// What both commands open before searching, in order: the evaluation backend (--device), the
// store (--db, its folder created), the LLM proposer (--llm; null without). Store and proposer
// live on the heap: the proposer keeps a pointer to the store.
struct SearchSession {
    std::unique_ptr<EvalBackend> backend;
    std::unique_ptr<Store> store;
    std::unique_ptr<llm::LlmProposer> llm;
};
// nullopt with `rc` set (the message printed) when one of them cannot be opened.
std::optional<SearchSession> open_search_session(const OptimizeArgs& a, const char* cmd, int& rc);

// Adds the options both commands share.
void add_optimize_options(CLI::App* cmd, OptimizeArgs& a);
search::SearchOptions search_options(const OptimizeArgs& a, const char* cmd);
// Proposers by name; empty with an error printed for an unknown name.
std::vector<std::unique_ptr<search::Proposer>> make_proposers(const OptimizeArgs& a, const char* cmd);

// The start program of a spec: --program, else <spec without .json>.kf beside it, else one the
// fusion planner synthesizes from the problem (planner/plan.h) for the device's limits.
struct StartProgram {
    std::string text;
    bool synthesized = false;
    std::string fusion_plan;  // of a synthesized one
};
// A user error when --program cannot be read or no seed can express the problem (the message
// names the op).
Expected<StartProgram> start_program(const std::string& spec, const std::string& program,
                                     const Problem& problem, const eval::DeviceInfo& device);

// The LLM proposer of --llm (nullptr without --llm); with rc set to the exit code on failure.
std::unique_ptr<llm::LlmProposer> make_llm(const OptimizeArgs& a, Store& store, const char* cmd,
                                           int& rc);

// Sets options.profile_hook (when --profile-top > 0): ncu on the cuda device, the ptxas + SOL
// fallback on the simulated one (cli/optimize_profile.h). `work_dir` holds its files.
void set_profile_hook(search::SearchOptions& options, const OptimizeArgs& a, bool simulated,
                      std::function<const search::SearchState*(const std::string&)> find_state,
                      const std::string& work_dir);

}  // namespace kforge::cli
