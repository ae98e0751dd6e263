// Shared helpers of the eval tests: suite problems, test programs and a request builder.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "eval/evaluate.h"
#include "problem/spec.h"
#include "worker/supervisor.h"

namespace kforge::eval::testing {

inline std::string read_text(const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "cannot read " << path;
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline Problem suite_problem(const std::string& name) {
    auto p = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".json");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

// A request for suite problem `name` with the program tests/eval/data/<name>.kf.
inline EvalRequest request_for(const std::string& name, EvalTier tier = EvalTier::kQuick) {
    EvalRequest r;
    r.problem = suite_problem(name);
    r.program_file = std::string(KFORGE_SOURCE_DIR) + "/tests/eval/data/" + name + ".kf";
    r.program_text = read_text(r.program_file);
    r.tier = tier;
    return r;
}

// A request for suite problem `name` with the suite's own program beside it
// (problems/<name>.kf).
inline EvalRequest request_for_suite_program(const std::string& name,
                                             EvalTier tier = EvalTier::kQuick) {
    EvalRequest r;
    r.problem = suite_problem(name);
    r.program_file = std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".kf";
    r.program_text = read_text(r.program_file);
    r.tier = tier;
    return r;
}

#ifdef KFORGE_CLI_PATH  // the tests that run the kforge binary
// A supervisor of `kforge worker --device sim` modelling the H200.
inline SupervisorOptions sim_worker() {
    SupervisorOptions o;
    o.worker_argv = worker_command(KFORGE_CLI_PATH, "sim", 0, "h200");
    return o;
}
#endif

inline const GateOutcome* find_gate(const EvalReport& r, const std::string& gate) {
    for (const GateOutcome& g : r.gates)
        if (g.gate == gate) return &g;
    return nullptr;
}

}  // namespace kforge::eval::testing
