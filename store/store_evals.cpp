// Evaluations with their measurements and per-kernel times, and the evaluation cache.
#include <cmath>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "store/store_internal.h"

namespace kforge {

using store_detail::check_json;
using store_detail::not_found;

namespace {

constexpr const char* kEvaluationColumns =
    "SELECT e.id, e.candidate_id, e.device_id, e.toolchain, e.shapes_key, e.tier, e.status, "
    "e.error_text, e.evidence_json, e.flops, e.bytes, e.created_at, e.cached_from_id, "
    "e.kernel_times_json FROM evaluations e ";

// The kernel_times_json column: a JSON array of non-negative numbers.
std::string kernel_times_json(const std::vector<double>& times) {
    return nlohmann::json(times).dump();
}

Expected<std::vector<double>> kernel_times_from(const std::string& text,
                                                const std::string& where) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_array()) return make_error(where, "kernel_times_json is not a JSON array");
    std::vector<double> out;
    for (const auto& v : j) {
        if (!v.is_number()) return make_error(where, "kernel_times_json holds a non-number");
        out.push_back(v.get<double>());
    }
    return out;
}

Expected<EvaluationRecord> read_evaluation(const Statement& s, const std::string& where) {
    auto tier = eval_tier_from_string(s.column_text(5));
    auto status = eval_status_from_string(s.column_text(6));
    if (!tier || !status) {
        return make_error(where, "evaluation " + std::to_string(s.column_int(0)) +
                                     " has an unknown tier or status");
    }
    EvaluationRecord e;
    e.id = s.column_int(0);
    e.candidate_id = s.column_int(1);
    e.device_id = s.column_int(2);
    e.toolchain = s.column_text(3);
    e.shapes_key = s.column_text(4);
    e.tier = *tier;
    e.status = *status;
    e.error_text = s.column_text(7);
    e.evidence_json = s.column_text(8);
    e.flops = s.column_int(9);
    e.bytes = s.column_int(10);
    e.created_at = s.column_text(11);
    e.cached_from_id = s.column_opt_int(12);
    auto kernels = kernel_times_from(s.column_text(13),
                                     where + ": evaluation " + std::to_string(e.id));
    if (!kernels) return kernels.error();
    e.kernel_times_ns = std::move(*kernels);
    return e;
}

Status load_measurements(Database& db, EvaluationRecord& e) {
    auto sel = db.prepare(
        "SELECT label, sample_index, time_ns, sm_clock_mhz, mem_clock_mhz, temperature_c, "
        "throttle_reasons FROM measurements WHERE evaluation_id = ?1 "
        "ORDER BY label, sample_index");
    if (!sel) return sel.error();
    sel->bind(1, e.id);
    for (;;) {
        auto row = sel->step();
        if (!row) return row.error();
        if (!*row) return Ok{};
        e.measurements.push_back(MeasurementRecord{
            sel->column_text(0), sel->column_int(1), sel->column_double(2),
            sel->column_opt_int(3), sel->column_opt_int(4), sel->column_opt_int(5),
            sel->column_opt_int(6)});
    }
}

// Runs a SELECT of kEvaluationColumns and reads every row with its measurements.
Expected<std::vector<EvaluationRecord>> read_evaluations(Database& db, Statement& sel) {
    std::vector<EvaluationRecord> out;
    for (;;) {
        auto row = sel.step();
        if (!row) return row.error();
        if (!*row) break;
        auto e = read_evaluation(sel, db.path());
        if (!e) return e.error();
        out.push_back(std::move(*e));
    }
    for (auto& e : out) {
        if (auto st = load_measurements(db, e); !st) return st.error();
    }
    return out;
}

// "'passed', 'incorrect', ..." for every status that is_cacheable().
std::string cacheable_statuses_sql() {
    std::string list;
    for (int i = 0; i <= static_cast<int>(EvalStatus::kNotSupported); ++i) {
        auto s = static_cast<EvalStatus>(i);
        if (!is_cacheable(s)) continue;
        if (!list.empty()) list += ", ";
        list += "'" + std::string(to_string(s)) + "'";
    }
    return list;
}

}  // namespace

Expected<int64_t> Store::add_evaluation(const NewEvaluation& ev) {
    std::string where = "evaluation of candidate " + std::to_string(ev.candidate_id);
    if (ev.flops < 0 || ev.bytes < 0) return make_error(where, "flops and bytes must be >= 0");
    if (auto st = check_json(ev.evidence_json, where + ": evidence"); !st) return st.error();
    for (const auto& m : ev.measurements) {
        if (m.label.empty()) return make_error(where, "a measurement has an empty label");
        if (!(m.time_ns >= 0.0)) return make_error(where, "a measurement has a negative time");
    }
    for (double k : ev.kernel_times_ns)
        if (!(k >= 0.0) || !std::isfinite(k))
            return make_error(where, "a kernel time is negative or not finite");
    auto txn = Transaction::begin(db_);
    if (!txn) return txn.error();
    if (auto c = get_candidate(ev.candidate_id); !c) return c.error();
    if (auto d = get_device(ev.device_id); !d) return d.error();
    if (ev.cached_from_id) {
        if (auto src = get_evaluation(*ev.cached_from_id); !src) return src.error();
    }
    auto ins = db_.prepare(
        "INSERT INTO evaluations (candidate_id, device_id, toolchain, shapes_key, tier, status, "
        "error_text, evidence_json, flops, bytes, cached_from_id, kernel_times_json) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
    if (!ins) return ins.error();
    ins->bind(1, ev.candidate_id).bind(2, ev.device_id).bind(3, ev.toolchain);
    ins->bind(4, ev.shapes_key).bind(5, to_string(ev.tier)).bind(6, to_string(ev.status));
    ins->bind(7, ev.error_text).bind(8, ev.evidence_json).bind(9, ev.flops).bind(10, ev.bytes);
    ins->bind(11, ev.cached_from_id).bind(12, kernel_times_json(ev.kernel_times_ns));
    if (auto st = ins->run(); !st) return st.error();
    int64_t id = db_.last_insert_rowid();

    auto meas = db_.prepare(
        "INSERT INTO measurements (evaluation_id, label, sample_index, time_ns, sm_clock_mhz, "
        "mem_clock_mhz, temperature_c, throttle_reasons) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    if (!meas) return meas.error();
    for (const auto& m : ev.measurements) {
        meas->bind(1, id).bind(2, m.label).bind(3, m.sample_index).bind(4, m.time_ns);
        meas->bind(5, m.sm_clock_mhz).bind(6, m.mem_clock_mhz).bind(7, m.temperature_c);
        meas->bind(8, m.throttle_reasons);
        if (auto st = meas->run(); !st) {
            Error e = st.error();
            e.message = where + ": " + e.message;  // e.g. a repeated (label, sample_index)
            return e;
        }
        if (auto st = meas->reset(); !st) return st.error();
    }
    if (auto st = txn->commit(); !st) return st.error();
    return id;
}

Expected<EvaluationRecord> Store::get_evaluation(int64_t evaluation_id) {
    auto sel = db_.prepare(std::string(kEvaluationColumns) + "WHERE e.id = ?1");
    if (!sel) return sel.error();
    sel->bind(1, evaluation_id);
    auto all = read_evaluations(db_, *sel);
    if (!all) return all.error();
    if (all->empty()) return not_found(path(), "evaluation", evaluation_id);
    return std::move(all->front());
}

Expected<std::vector<EvaluationRecord>> Store::list_evaluations(int64_t candidate_id) {
    auto sel = db_.prepare(std::string(kEvaluationColumns) +
                           "WHERE e.candidate_id = ?1 ORDER BY e.id");
    if (!sel) return sel.error();
    sel->bind(1, candidate_id);
    return read_evaluations(db_, *sel);
}

Expected<std::optional<EvaluationRecord>> Store::find_cached_evaluation(
    std::string_view candidate_hash, int64_t device_id, std::string_view toolchain,
    std::string_view shapes_key, EvalTier tier) {
    auto sel = db_.prepare(std::string(kEvaluationColumns) +
                           "JOIN candidates c ON c.id = e.candidate_id "
                           "WHERE c.content_hash = ?1 AND e.device_id = ?2 AND e.toolchain = ?3 "
                           "AND e.shapes_key = ?4 AND e.tier = ?5 "
                           "AND e.status IN (" + cacheable_statuses_sql() + ") "
                           "ORDER BY e.id DESC LIMIT 1");
    if (!sel) return sel.error();
    sel->bind(1, candidate_hash).bind(2, device_id).bind(3, toolchain).bind(4, shapes_key);
    sel->bind(5, to_string(tier));
    auto all = read_evaluations(db_, *sel);
    if (!all) return all.error();
    if (all->empty()) return std::optional<EvaluationRecord>{};
    return std::optional<EvaluationRecord>{std::move(all->front())};
}

}  // namespace kforge
