// A store in a temporary file holding a synthetic run over three suite problems, written
// through the real Store API: candidates with lineage, evaluations with gates and
// measurements at multiples of each problem's T_sol, baseline measurements by the
// report/baseline.h labels, a disqualified (flagged_gaming) candidate and an incorrect one.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "problem/spec.h"
#include "sol/bounds.h"
#include "store/store.h"

namespace kforge::test {

struct Synthetic {
    std::filesystem::path dir;
    std::string db_path;
    int64_t run_id = 0;
    int64_t sim_run_id = 0;
    double tsol_ns[3] = {0, 0, 0};  // softmax, gemm, row_sum
    double compile_ns = 2e6;        // recorded in each evaluation's compile gate
    int64_t best_a = 0, best_b = 0;
};

inline Problem load_suite_problem(const std::string& name) {
    auto p = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".json");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return *p;
}

inline double tsol_ns(const Problem& p) {
    auto spec = find_device("h200");
    auto b = compute_bounds(p, effective_ceilings(*spec, std::nullopt));
    EXPECT_TRUE(b.ok());
    return b->time_fused_s * 1e9;
}

inline NewEvaluation make_eval(int64_t cand, int64_t dev, EvalTier tier, EvalStatus status,
                               const std::string& label, std::vector<double> times,
                               double compile_ns, const std::string& extra = "") {
    NewEvaluation e;
    e.candidate_id = cand;
    e.device_id = dev;
    e.toolchain = "nvcc 13.0";
    e.shapes_key = "full";
    e.tier = tier;
    e.status = status;
    e.evidence_json = R"({"gates":[{"gate":"compile","passed":true,"skipped":false,)"
                      R"("status":"passed","message":"","evidence":{"time_compile_ns":)" +
                      std::to_string(static_cast<int64_t>(compile_ns)) +
                      R"(}},{"gate":"correctness_full","passed":true,"skipped":false,)"
                      R"("status":"passed","message":"max err 1e-6","evidence":{"max_abs":1e-6}}])" +
                      extra + "}";
    e.flops = 1000;
    e.bytes = 2000;
    for (size_t i = 0; i < times.size(); ++i) {
        MeasurementRecord m;
        m.label = label;
        m.sample_index = static_cast<int64_t>(i);
        m.time_ns = times[i];
        e.measurements.push_back(m);
    }
    return e;
}

inline Synthetic build_synthetic(const std::string& description_c = "") {
    Synthetic s;
    std::string tmpl = (std::filesystem::temp_directory_path() / "kforge_report_XXXXXX").string();
    s.dir = mkdtemp(tmpl.data());
    s.db_path = (s.dir / "kforge.db").string();
    auto store = Store::open(s.db_path);
    EXPECT_TRUE(store.ok());
    auto dev = *store->upsert_device({0, "NVIDIA H200", "GPU-report-1", "9.0", "580", "h200"});
    std::vector<std::string> names = {"softmax_short_rows_f32", "gemm_bf16_4096", "row_sum_f32"};
    int64_t pid[3];
    for (int i = 0; i < 3; ++i) {
        Problem p = load_suite_problem(names[i]);
        if (i == 2 && !description_c.empty()) p.description = description_c;
        s.tsol_ns[i] = tsol_ns(p);
        pid[i] = *store->upsert_problem(p.name, problem_to_json(p).dump());
    }
    NewRun run;
    run.suite = "report_test";
    run.device_id = dev;
    s.run_id = *store->create_run(run);
    auto cand = [&](int i, const std::string& text, std::vector<int64_t> parents,
                    const std::string& proposer) {
        NewCandidate c{s.run_id, pid[i], text, content_hash(text), parents, proposer, "m:" + text};
        return store->add_candidate(c)->id;
    };
    auto add = [&](const NewEvaluation& e) { EXPECT_TRUE(store->add_evaluation(e).ok()); };
    auto times = [](double t, std::vector<double> k) {
        for (double& x : k) x *= t;
        return k;
    };
    using T = EvalTier;
    using S = EvalStatus;
    double ta = s.tsol_ns[0], tb = s.tsol_ns[1], tc = s.tsol_ns[2];
    // Problem A: seed c1, child c2; the full-tier evaluation of c2 is the best (1.10 T_sol),
    // though its quick evaluation was faster (quick is ranked only without a full one).
    int64_t c1 = cand(0, "a1", {}, "human");
    int64_t c2 = cand(0, "a2", {c1}, "search:tile_sweep");
    add(make_eval(c1, dev, T::kQuick, S::kPassed, "candidate", times(ta, {1.4, 1.5, 1.6}),
                  s.compile_ns));
    add(make_eval(c2, dev, T::kQuick, S::kPassed, "candidate", times(ta, {1.0, 1.05, 1.2}),
                  s.compile_ns));
    add(make_eval(c2, dev, T::kFull, S::kPassed, "candidate",
                  times(ta, {1.08, 1.09, 1.10, 1.11, 1.12}), s.compile_ns,
                  R"(,"diagnosis":"memory-bound: dram 91% of peak")"));
    s.best_a = c2;
    int64_t ba = cand(0, "torch_a", {}, "baseline:pytorch");
    auto base_a = make_eval(ba, dev, T::kFull, S::kPassed, "baseline:eager",
                            times(ta, {2.9, 3.0, 3.1}), 0);
    for (double t : times(ta, {2.3, 2.3, 2.3}))
        base_a.measurements.push_back({"baseline:compile_default",
                                       static_cast<int64_t>(base_a.measurements.size()), t});
    add(base_a);
    // Problem B: c3 passes at 2.0 T_sol, eager at 1.6 T_sol (speedup 0.8); c4 passed quick at
    // 0.5 T_sol but was flagged as gaming at full tier, so it is disqualified.
    int64_t c3 = cand(1, "b1", {}, "human");
    int64_t c4 = cand(1, "b2", {c3}, "llm:test");
    add(make_eval(c3, dev, T::kFull, S::kPassed, "candidate", times(tb, {1.9, 2.0, 2.1}),
                  s.compile_ns));
    add(make_eval(c4, dev, T::kQuick, S::kPassed, "candidate", times(tb, {0.5, 0.5, 0.5}),
                  s.compile_ns));
    add(make_eval(c4, dev, T::kFull, S::kFlaggedGaming, "candidate", times(tb, {0.5, 0.5}),
                  s.compile_ns));
    s.best_b = c3;
    int64_t bb = cand(1, "torch_b", {}, "baseline:pytorch");
    add(make_eval(bb, dev, T::kFull, S::kPassed, "baseline:eager", times(tb, {1.6, 1.6, 1.6}),
                  0));
    // Problem C: only an incorrect candidate; eager measured.
    int64_t c5 = cand(2, "c1", {}, "human");
    add(make_eval(c5, dev, T::kQuick, S::kIncorrect, "candidate", {}, s.compile_ns));
    int64_t bc = cand(2, "torch_c", {}, "baseline:pytorch");
    add(make_eval(bc, dev, T::kFull, S::kPassed, "baseline:eager", times(tc, {3, 3, 3}), 0));
    EXPECT_TRUE(store->finish_run(s.run_id, RunStatus::kFinished).ok());

    // A simulated run over problem A without baselines.
    auto sim = *store->upsert_device({0, "simulated (h200 model)", "simulated-h200", "", "sim",
                                      "h200"});
    NewRun srun;
    srun.problem_id = pid[0];
    srun.device_id = sim;
    s.sim_run_id = *store->create_run(srun);
    NewCandidate sc{s.sim_run_id, pid[0], "s1", content_hash("s1"), {}, "human", "seed"};
    int64_t sc_id = store->add_candidate(sc)->id;
    auto se = make_eval(sc_id, sim, T::kQuick, S::kPassed, "candidate", times(ta, {1.3, 1.3}),
                        0);
    se.toolchain = "simulated";
    add(se);
    return s;
}

}  // namespace kforge::test
