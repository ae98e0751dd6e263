// Shared by `kforge optimize` (cmd_optimize.cpp) and `kforge suite` (cmd_suite.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "eval/device.h"
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
    std::string db = "kforge.db";
    std::optional<int64_t> resume;
    uint64_t seed = 1;
    std::string out;
    std::vector<std::string> proposers = {"parameter", "diagnosis"};
    double promote_ratio = 1.0 / 3.0;
    int per_round = 12;
};

// Adds the options both commands share.
void add_optimize_options(CLI::App* cmd, OptimizeArgs& a);
// The device by --device; nullptr with the exit code set on failure. Prints the simulated banner.
std::unique_ptr<eval::Device> open_device(const OptimizeArgs& a, const char* cmd, int& rc);
search::SearchOptions search_options(const OptimizeArgs& a, const char* cmd);
// Proposers by name; empty with an error printed for an unknown name.
std::vector<std::unique_ptr<search::Proposer>> make_proposers(const OptimizeArgs& a, const char* cmd);
// The start program of a spec: --program, else <spec without .json>.kf beside it.
std::optional<std::string> start_program(const std::string& spec, const std::string& program);

}  // namespace kforge::cli
