#include "store/schema.h"

#include <array>
#include <string>

namespace kforge {
namespace {

#define KFORGE_NOW "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"

// Version 1: problems, devices, calibrations, runs, candidates and their evaluations.
// The enum CHECK lists are the to_string values of store/enums.h.
constexpr const char* kMigration1 = R"sql(
CREATE TABLE problems (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT )sql" KFORGE_NOW R"sql(,
    UNIQUE (name, content_hash)
) STRICT;

CREATE TABLE devices (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    uuid TEXT NOT NULL UNIQUE,
    compute_capability TEXT NOT NULL,
    driver TEXT NOT NULL,
    datasheet_key TEXT NOT NULL
) STRICT;

CREATE TABLE calibrations (
    id INTEGER PRIMARY KEY,
    device_id INTEGER NOT NULL REFERENCES devices(id),
    calibration_json TEXT NOT NULL,
    measured_at TEXT NOT NULL DEFAULT )sql" KFORGE_NOW R"sql(
) STRICT;
CREATE INDEX calibrations_by_device ON calibrations (device_id, measured_at);

CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    problem_id INTEGER REFERENCES problems(id),
    suite TEXT,
    device_id INTEGER NOT NULL REFERENCES devices(id),
    started_at TEXT NOT NULL DEFAULT )sql" KFORGE_NOW R"sql(,
    finished_at TEXT,
    options_json TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'finished', 'failed', 'interrupted')),
    CHECK (problem_id IS NOT NULL OR suite IS NOT NULL)
) STRICT;

CREATE TABLE candidates (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    problem_id INTEGER NOT NULL REFERENCES problems(id),
    program_text TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    proposer TEXT NOT NULL,
    move TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL DEFAULT )sql" KFORGE_NOW R"sql(,
    UNIQUE (run_id, content_hash)
) STRICT;
CREATE INDEX candidates_by_hash ON candidates (content_hash);

CREATE TABLE candidate_parents (
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    parent_id INTEGER NOT NULL REFERENCES candidates(id),
    position INTEGER NOT NULL,
    PRIMARY KEY (candidate_id, parent_id)
) STRICT;

CREATE TABLE evaluations (
    id INTEGER PRIMARY KEY,
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    device_id INTEGER NOT NULL REFERENCES devices(id),
    toolchain TEXT NOT NULL,
    shapes_key TEXT NOT NULL,
    tier TEXT NOT NULL
        CHECK (tier IN ('static', 'cost_model', 'compile', 'quick', 'full', 'profile')),
    status TEXT NOT NULL
        CHECK (status IN ('passed', 'incorrect', 'compile_failed', 'launch_failed', 'timed_out',
                          'crashed', 'resources_exceeded', 'invalid_program', 'flagged_gaming',
                          'not_supported')),
    error_text TEXT NOT NULL DEFAULT '',
    evidence_json TEXT NOT NULL DEFAULT '{}',
    flops INTEGER NOT NULL CHECK (flops >= 0),
    bytes INTEGER NOT NULL CHECK (bytes >= 0),
    created_at TEXT NOT NULL DEFAULT )sql" KFORGE_NOW R"sql(
) STRICT;
CREATE INDEX evaluations_by_candidate ON evaluations (candidate_id);
CREATE INDEX evaluations_by_key ON evaluations (device_id, toolchain, shapes_key, tier);

CREATE TABLE measurements (
    evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    sample_index INTEGER NOT NULL,
    time_ns REAL NOT NULL,
    sm_clock_mhz INTEGER,
    mem_clock_mhz INTEGER,
    temperature_c INTEGER,
    throttle_reasons INTEGER,
    PRIMARY KEY (evaluation_id, label, sample_index)
) STRICT;

CREATE TABLE artefacts (
    id INTEGER PRIMARY KEY,
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    kind TEXT NOT NULL
        CHECK (kind IN ('cuda_source', 'launch_plan', 'cubin_hash', 'ptxas_report')),
    content TEXT NOT NULL,
    hash TEXT NOT NULL,
    UNIQUE (candidate_id, kind, hash)
) STRICT;
)sql";

// Version 2: the LLM request log (token and cost accounting, reply cache by request hash), and
// evaluations that reuse a cached result name the evaluation they were copied from.
constexpr const char* kMigration2 = R"sql(
CREATE TABLE llm_requests (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES runs(id),
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    prompt TEXT NOT NULL,
    reply TEXT NOT NULL,
    tokens_in INTEGER NOT NULL CHECK (tokens_in >= 0),
    tokens_out INTEGER NOT NULL CHECK (tokens_out >= 0),
    cost_usd REAL NOT NULL DEFAULT 0,
    latency_ms REAL NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT )sql" KFORGE_NOW R"sql(
) STRICT;
CREATE INDEX llm_requests_by_hash ON llm_requests (request_hash);
CREATE INDEX llm_requests_by_run ON llm_requests (run_id);

ALTER TABLE evaluations ADD COLUMN cached_from_id INTEGER REFERENCES evaluations(id);
)sql";

// Version 3: what produced a run (kforge version, git commit, compiler toolchain), so results
// can be told apart after an upgrade; '' in runs made before.
constexpr const char* kMigration3 = R"sql(
ALTER TABLE runs ADD COLUMN kforge_version TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN git_commit TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN toolchain TEXT NOT NULL DEFAULT '';
)sql";

// Version 4: per-kernel times of an evaluation (a JSON array of nanoseconds, one per program
// kernel in the program's order: the median of each kernel), for the reports' per-kernel
// breakdown; '[]' where unknown and in evaluations made before.
constexpr const char* kMigration4 = R"sql(
ALTER TABLE evaluations ADD COLUMN kernel_times_json TEXT NOT NULL DEFAULT '[]';
)sql";

#undef KFORGE_NOW

constexpr std::array<const char*, kSchemaVersion> kMigrations{kMigration1, kMigration2,
                                                              kMigration3, kMigration4};

}  // namespace

Expected<int> schema_version(Database& db) {
    auto v = db.query_text("PRAGMA user_version");
    if (!v) return v.error();
    return std::stoi(*v);
}

Status migrate(Database& db, int target_version) {
    auto current = schema_version(db);
    if (!current) return current.error();
    if (*current > kSchemaVersion) {
        return make_error(db.path(),
                          "database schema version " + std::to_string(*current) +
                              " is newer than this kforge supports (" +
                              std::to_string(kSchemaVersion) +
                              "); use a newer kforge or another database file");
    }
    for (int next = *current + 1; next <= target_version; ++next) {
        auto txn = Transaction::begin(db);
        if (!txn) return txn.error();
        // Another process may have migrated while we waited for the write lock.
        auto now = schema_version(db);
        if (!now) return now.error();
        if (*now >= next) continue;
        if (*now == 0) {
            auto tables = db.query_text("SELECT count(*) FROM sqlite_master");
            if (!tables) return tables.error();
            if (*tables != "0") {
                return make_error(db.path(), "not a kforge database (it has tables but no "
                                             "kforge schema version)");
            }
        }
        if (auto st = db.exec(kMigrations[next - 1]); !st) {
            Error e = st.error();
            e.message = "migration to schema version " + std::to_string(next) + " failed: " +
                        e.message;
            return e;
        }
        if (auto st = db.exec("PRAGMA user_version = " + std::to_string(next)); !st) return st;
        if (auto st = txn->commit(); !st) return st;
    }
    return Ok{};
}

}  // namespace kforge
