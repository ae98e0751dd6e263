// Run summaries and the JSON export of a run.
#include <set>

#include "store/export.h"
#include "store/schema.h"

namespace kforge {

using ojson = nlohmann::ordered_json;

namespace {

template <typename T>
ojson opt(const std::optional<T>& v) {
    return v ? ojson(*v) : ojson(nullptr);
}

// JSON columns were validated on the way in; a database edited by hand may still hold bad text.
Expected<ojson> parse_stored(const std::string& text, const std::string& where) {
    ojson j = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return make_error(where, "stored JSON is not valid");
    return j;
}

ojson measurement_json(const MeasurementRecord& m) {
    return ojson{{"label", m.label},
                 {"sample_index", m.sample_index},
                 {"time_ns", m.time_ns},
                 {"sm_clock_mhz", opt(m.sm_clock_mhz)},
                 {"mem_clock_mhz", opt(m.mem_clock_mhz)},
                 {"temperature_c", opt(m.temperature_c)},
                 {"throttle_reasons", opt(m.throttle_reasons)}};
}

Expected<ojson> evaluation_json(const EvaluationRecord& e) {
    auto evidence = parse_stored(e.evidence_json, "evaluation " + std::to_string(e.id));
    if (!evidence) return evidence.error();
    ojson samples = ojson::array();
    for (const auto& m : e.measurements) samples.push_back(measurement_json(m));
    return ojson{{"id", e.id},
                 {"device_id", e.device_id},
                 {"toolchain", e.toolchain},
                 {"shapes_key", e.shapes_key},
                 {"tier", to_string(e.tier)},
                 {"status", to_string(e.status)},
                 {"error", e.error_text},
                 {"evidence", std::move(*evidence)},
                 {"flops", e.flops},
                 {"bytes", e.bytes},
                 {"created_at", e.created_at},
                 {"cached_from_id", opt(e.cached_from_id)},
                 {"median_time_ns", opt(median_time_ns(e.measurements))},
                 {"kernel_times_ns", e.kernel_times_ns},
                 {"measurements", std::move(samples)}};
}

}  // namespace

Expected<std::vector<RunSummary>> Store::list_runs() {
    auto sel = db_.prepare(
        "SELECT r.id, COALESCE(p.name, 'suite:' || r.suite), d.name, r.status, r.started_at, "
        "(SELECT count(*) FROM candidates c WHERE c.run_id = r.id), r.kforge_version, "
        "r.git_commit, r.toolchain "
        "FROM runs r JOIN devices d ON d.id = r.device_id "
        "LEFT JOIN problems p ON p.id = r.problem_id ORDER BY r.id");
    if (!sel) return sel.error();
    std::vector<RunSummary> out;
    for (;;) {
        auto row = sel->step();
        if (!row) return row.error();
        if (!*row) break;
        auto status = run_status_from_string(sel->column_text(3));
        if (!status) return make_error(path(), "run with unknown status");
        out.push_back(RunSummary{sel->column_int(0), sel->column_text(1), sel->column_text(2),
                                 *status, sel->column_text(4), sel->column_int(5), {},
                                 sel->column_text(6), sel->column_text(7), sel->column_text(8)});
    }
    // Best time: the smallest full-tier median among the run's passed evaluations (the search's
    // and the report's definition; a quick timing is on fewer samples, maybe smaller shapes).
    auto evals = db_.prepare(
        "SELECT e.id FROM evaluations e JOIN candidates c ON c.id = e.candidate_id "
        "WHERE c.run_id = ?1 AND e.status = 'passed' AND e.tier = 'full'");
    if (!evals) return evals.error();
    for (auto& run : out) {
        if (auto st = evals->reset(); !st) return st.error();
        evals->bind(1, run.id);
        std::vector<int64_t> ids;
        for (;;) {
            auto row = evals->step();
            if (!row) return row.error();
            if (!*row) break;
            ids.push_back(evals->column_int(0));
        }
        for (int64_t id : ids) {
            auto e = get_evaluation(id);
            if (!e) return e.error();
            auto t = median_time_ns(e->measurements);
            if (t && (!run.best_time_ns || *t < *run.best_time_ns)) run.best_time_ns = t;
        }
    }
    return out;
}

Expected<ojson> export_run_json(Store& store, int64_t run_id) {
    auto run = store.get_run(run_id);
    if (!run) return run.error();
    auto version = schema_version(store.db());
    if (!version) return version.error();
    auto candidates = store.list_candidates(run_id);
    if (!candidates) return candidates.error();

    std::set<int64_t> problem_ids, device_ids{run->device_id};
    if (run->problem_id) problem_ids.insert(*run->problem_id);
    ojson cands = ojson::array();
    for (const auto& c : *candidates) {
        problem_ids.insert(c.problem_id);
        auto artefacts = store.list_artefacts(c.id);
        if (!artefacts) return artefacts.error();
        auto evaluations = store.list_evaluations(c.id);
        if (!evaluations) return evaluations.error();
        ojson arts = ojson::array();
        for (const auto& a : *artefacts) {
            arts.push_back({{"kind", to_string(a.kind)}, {"hash", a.hash}, {"content", a.content}});
        }
        ojson evs = ojson::array();
        for (const auto& e : *evaluations) {
            device_ids.insert(e.device_id);
            auto ej = evaluation_json(e);
            if (!ej) return ej.error();
            evs.push_back(std::move(*ej));
        }
        cands.push_back(ojson{{"id", c.id},
                              {"problem_id", c.problem_id},
                              {"content_hash", c.content_hash},
                              {"proposer", c.proposer},
                              {"move", c.move},
                              {"parent_ids", c.parent_ids},
                              {"created_at", c.created_at},
                              {"program", c.program_text},
                              {"artefacts", std::move(arts)},
                              {"evaluations", std::move(evs)}});
    }

    ojson problems = ojson::array();
    std::string run_problem;
    for (int64_t id : problem_ids) {
        auto p = store.get_problem(id);
        if (!p) return p.error();
        if (run->problem_id == id) run_problem = p->name;
        auto spec = parse_stored(p->spec_json, "problem " + std::to_string(id));
        if (!spec) return spec.error();
        problems.push_back(ojson{{"id", p->id},
                                 {"name", p->name},
                                 {"content_hash", p->content_hash},
                                 {"created_at", p->created_at},
                                 {"spec", std::move(*spec)}});
    }
    ojson devices = ojson::array();
    for (int64_t id : device_ids) {
        auto d = store.get_device(id);
        if (!d) return d.error();
        devices.push_back(ojson{{"id", d->id},
                                {"name", d->name},
                                {"uuid", d->uuid},
                                {"compute_capability", d->compute_capability},
                                {"driver", d->driver},
                                {"datasheet_key", d->datasheet_key}});
    }
    auto options = parse_stored(run->options_json, "run " + std::to_string(run_id));
    if (!options) return options.error();
    ojson run_json{{"id", run->id},
                   {"problem", run->problem_id ? ojson(run_problem) : ojson(nullptr)},
                   {"suite", opt(run->suite)},
                   {"device_id", run->device_id},
                   {"status", to_string(run->status)},
                   {"started_at", run->started_at},
                   {"finished_at", opt(run->finished_at)},
                   {"kforge_version", run->kforge_version},
                   {"git_commit", run->git_commit},
                   {"toolchain", run->toolchain},
                   {"options", std::move(*options)}};
    return ojson{{"kforge_run_export", kRunExportVersion},
                 {"schema_version", *version},
                 {"run", std::move(run_json)},
                 {"devices", std::move(devices)},
                 {"problems", std::move(problems)},
                 {"candidates", std::move(cands)}};
}

}  // namespace kforge
