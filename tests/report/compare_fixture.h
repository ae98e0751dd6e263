// Stores for the run comparison's tests (report/compare.h), written through the real Store API:
// three runs of one problem (proposer modes diagnosis,parameter / random / parameter), each from
// a start program at 1000 ns, a run of another problem, and one more run of the first problem
// in a second store. Evaluation times are set in the rows (created_at) so that the wall axis
// is known: a run starts at 12:00:00, its first timing lands at 12:01:00 and each next one
// 30 s later. Every evaluation records a compile of 1 s, so GPU-seconds count evaluations.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "problem/spec.h"
#include "store/store.h"

namespace kforge::test {

struct CompareStores {
    std::filesystem::path dir;
    std::string db_path, other_db_path;
    int64_t builtin_run = 0, random_run = 0, param_run = 0, other_problem_run = 0;
    int64_t other_store_run = 0;
};

// One evaluation: `samples` at 1000 * `factor` ns, a 1 s compile, at 12:01:00 + 30 s * index.
inline void add_timed(Store& store, int64_t dev, int64_t cand, EvalTier tier, double factor,
                      int index) {
    NewEvaluation e;
    e.candidate_id = cand;
    e.device_id = dev;
    e.shapes_key = "full";
    e.tier = tier;
    e.status = EvalStatus::kPassed;
    e.evidence_json = R"({"gates":[{"gate":"compile","passed":true,"evidence":)"
                      R"({"time_compile_ns":1000000000}}]})";
    for (int i = 0; i < 3; ++i) e.measurements.push_back({"candidate", i, 1000.0 * factor});
    auto id = store.add_evaluation(e);
    ASSERT_TRUE(id.ok());
    int s = 60 + 30 * index;
    char ts[64];
    std::snprintf(ts, sizeof ts, "2026-12-06T12:%02d:%02d.000Z", s / 60, s % 60);
    ASSERT_TRUE(store.db().exec("UPDATE evaluations SET created_at = '" + std::string(ts) +
                                "' WHERE id = " + std::to_string(*id)).ok());
}

// A finished run of `problem` with `proposers`: the start program, then one candidate per
// factor (times 1000 ns at the full tier; a negative factor: its absolute value at the quick
// tier).
inline int64_t add_run(Store& store, int64_t dev, int64_t problem,
                       const std::string& proposers_json, std::vector<double> factors) {
    NewRun run;
    run.problem_id = problem;
    run.device_id = dev;
    run.options_json = R"({"command":"optimize","proposers":)" + proposers_json + "}";
    int64_t id = *store.create_run(run);
    EXPECT_TRUE(store.db().exec("UPDATE runs SET started_at = '2026-12-06T12:00:00.000Z' "
                                "WHERE id = " + std::to_string(id)).ok());
    auto start = store.add_candidate({id, problem, "s", "hs", {}, "start", "starting program"});
    add_timed(store, dev, start->id, EvalTier::kFull, 1.0, 0);
    for (size_t i = 0; i < factors.size(); ++i) {
        std::string text = "c" + std::to_string(i);
        auto c = store.add_candidate({id, problem, text, "h" + text, {start->id},
                                      "search:parameter", "move " + text});
        add_timed(store, dev, c->id, factors[i] < 0 ? EvalTier::kQuick : EvalTier::kFull,
                  std::abs(factors[i]), static_cast<int>(i) + 1);
    }
    EXPECT_TRUE(store.finish_run(id, RunStatus::kFinished).ok());
    return id;
}

inline int64_t add_problem(Store& store, const std::string& name) {
    auto p = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".json");
    EXPECT_TRUE(p.ok());
    return *store.upsert_problem(p->name, problem_to_json(*p).dump());
}

// How often `what` occurs in `text`.
inline size_t count_of(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
        ++n;
    return n;
}

inline CompareStores build_compare_stores() {
    CompareStores s;
    std::string tmpl = (std::filesystem::temp_directory_path() / "kforge_compare_XXXXXX").string();
    s.dir = mkdtemp(tmpl.data());
    s.db_path = (s.dir / "search.db").string();
    s.other_db_path = (s.dir / "random.db").string();
    {
        auto store = Store::open(s.db_path);
        EXPECT_TRUE(store.ok());
        int64_t dev = *store->upsert_device({0, "NVIDIA H200", "GPU-cmp-1", "9.0", "580", "h200"});
        int64_t a = add_problem(*store, "softmax_short_rows_f32");
        int64_t b = add_problem(*store, "row_sum_f32");
        // best 1000 -> 800 -> (900) -> 500: speedups 1, 1.25, 2
        s.builtin_run = add_run(*store, dev, a, R"(["diagnosis","parameter"])", {0.8, 0.9, 0.5});
        // 1000 -> 950, then 1100: the curve ends at the last evaluation
        s.random_run = add_run(*store, dev, a, R"(["random"])", {0.95, 1.1});
        // a faster quick-tier timing does not count where the run has full-tier ones
        s.param_run = add_run(*store, dev, a, R"(["parameter"])", {-0.1});
        s.other_problem_run = add_run(*store, dev, b, R"(["random"])", {0.5});
    }
    auto other = Store::open(s.other_db_path);
    EXPECT_TRUE(other.ok());
    int64_t dev = *other->upsert_device({0, "NVIDIA H200", "GPU-cmp-1", "9.0", "580", "h200"});
    s.other_store_run = add_run(*other, dev, add_problem(*other, "softmax_short_rows_f32"),
                                R"(["random"])", {0.7});
    return s;
}

}  // namespace kforge::test
