// kforge's store: SQLite is the single source of truth of every run and the evaluation cache
// (DESIGN.md decision 8). A Store holds one open connection whose schema is at kSchemaVersion;
// every write that spans rows is one transaction, so a killed process leaves whole records.
// JSON columns are validated on the way in and handed back as text. Throughput and %SOL are
// never stored: they are derived from the time, FLOPs and bytes kept here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "store/enums.h"
#include "store/records.h"
#include "store/sqlite.h"

namespace kforge {

class Store {
public:
    // Opens (creating if absent) the store at `path` and migrates it to the current schema.
    // ":memory:" gives a private in-memory store. The parent folder must exist. A store that
    // fails PRAGMA quick_check (up to 512 MiB; store.cpp) is an Error naming the file and how to
    // recover it (sqlite3 .recover), before anything is written to it.
    static Expected<Store> open(const std::string& path);

    Database& db() { return db_; }
    const std::string& path() const { return db_.path(); }

    // ---- problems, devices, calibrations (store.cpp) ----
    // Inserts a problem spec (JSON text) or returns the id of the identical one already stored.
    // A changed spec under the same name is a new row; older runs keep the spec they ran.
    Expected<int64_t> upsert_problem(std::string_view name, std::string_view spec_json);
    Expected<ProblemRecord> get_problem(int64_t problem_id);
    // Inserts a device or updates its name/driver/datasheet key; identity is the uuid.
    Expected<int64_t> upsert_device(const DeviceRecord& device);
    Expected<DeviceRecord> get_device(int64_t device_id);
    Expected<int64_t> save_calibration(int64_t device_id, std::string_view calibration_json);
    // The newest calibration of the device, or nullopt when it was never calibrated.
    Expected<std::optional<CalibrationRecord>> load_latest_calibration(int64_t device_id);

    // ---- runs, candidates, lineage, artefacts (store_runs.cpp) ----
    Expected<int64_t> create_run(const NewRun& run);
    Status finish_run(int64_t run_id, RunStatus status);
    // A run taken up again (--resume): status back to running, finished_at cleared.
    Status resume_run(int64_t run_id);
    Expected<RunRecord> get_run(int64_t run_id);
    // Idempotent by (run, content hash): adding the same program twice to a run returns the
    // first row (created = false) and leaves it unchanged.
    Expected<CandidateInsert> add_candidate(const NewCandidate& candidate);
    Expected<CandidateRecord> get_candidate(int64_t candidate_id);
    Expected<std::vector<CandidateRecord>> list_candidates(int64_t run_id);
    // Ancestors of a candidate through candidate_parents, nearest first (depth 1 = parents),
    // each once at its smallest depth; the candidate itself comes first at depth 0.
    Expected<std::vector<LineageEntry>> lineage(int64_t candidate_id);
    // Idempotent by (candidate, kind, content); the hash is computed here.
    Expected<int64_t> add_artefact(int64_t candidate_id, ArtefactKind kind,
                                   std::string_view content);
    Expected<std::vector<ArtefactRecord>> list_artefacts(int64_t candidate_id);
    Expected<int64_t> add_llm_request(const NewLlmRequest& request);

    // ---- evaluations and the cache (store_evals.cpp) ----
    // Writes the evaluation and all its measurements in one transaction.
    Expected<int64_t> add_evaluation(const NewEvaluation& evaluation);
    Expected<EvaluationRecord> get_evaluation(int64_t evaluation_id);
    Expected<std::vector<EvaluationRecord>> list_evaluations(int64_t candidate_id);
    // The newest evaluation of a program with this content hash (in any run) on the same
    // device, toolchain, shapes key and tier whose status is_cacheable(); nullopt if none.
    Expected<std::optional<EvaluationRecord>> find_cached_evaluation(
        std::string_view candidate_hash, int64_t device_id, std::string_view toolchain,
        std::string_view shapes_key, EvalTier tier);

    // ---- summaries (store_export.cpp) ----
    Expected<std::vector<RunSummary>> list_runs();

private:
    explicit Store(Database db) : db_(std::move(db)) {}
    Database db_;
};

// Free-function spelling of Store::open.
Expected<Store> open_store(const std::string& path);

// Content hash used for problems and artefacts: "fnv1a64:" and 16 hex digits. It identifies
// content for de-duplication; it is not a cryptographic digest.
std::string content_hash(std::string_view text);

// The median of the samples labelled `label` (nullopt when there are none).
std::optional<double> median_time_ns(const std::vector<MeasurementRecord>& samples,
                                     std::string_view label = "candidate");

}  // namespace kforge
