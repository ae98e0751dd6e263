#include "store/store.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "common/stats.h"
#include "store/schema.h"
#include "store/store_internal.h"

namespace kforge {

namespace store_detail {

Status check_json(std::string_view text, std::string_view what) {
    if (!nlohmann::json::accept(text)) {
        return make_error(std::string(what), "is not valid JSON");
    }
    return Ok{};
}

Error not_found(std::string_view where, std::string_view table, int64_t id) {
    return make_error(std::string(where),
                      std::string(table) + " " + std::to_string(id) + " not found");
}

}  // namespace store_detail

using store_detail::check_json;
using store_detail::not_found;

std::string content_hash(std::string_view text) {
    uint64_t h = 14695981039346656037ull;  // FNV-1a 64-bit offset basis
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;  // FNV prime
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
    return buf;
}

std::optional<double> median_time_ns(const std::vector<MeasurementRecord>& samples,
                                     std::string_view label) {
    std::vector<double> t;
    for (const auto& m : samples) {
        if (m.label == label) t.push_back(m.time_ns);
    }
    if (t.empty()) return std::nullopt;
    return median(std::move(t));
}

namespace {

// Stores up to this size are checked at every open (PRAGMA quick_check reads every page: about
// 0.1 s per 100 MiB); a larger one opens unchecked, so that opening stays fast.
constexpr int64_t kQuickCheckMaxBytes = int64_t{512} << 20;

// An Error naming the store and the way out when `db` fails SQLite's quick_check (b-tree
// structure, page and record formats, NOT NULL and the like; not the slower index-content
// cross-check of integrity_check): a damaged store is never written into.
Status check_integrity(Database& db) {
    if (db.path() == ":memory:" || db.path().empty()) return Ok{};
    auto pages = db.query_text("PRAGMA page_count");
    auto page_size = db.query_text("PRAGMA page_size");
    if (pages && page_size &&
        std::stoll(*pages) * std::stoll(*page_size) > kQuickCheckMaxBytes)
        return Ok{};
    std::string findings;
    auto check = db.prepare("PRAGMA quick_check(5)");
    if (check) {
        while (true) {
            auto row = check->step();
            if (!row) {
                findings = row.error().message;
                break;
            }
            if (!*row) break;
            std::string line = check->column_text(0);
            if (line == "ok") return Ok{};
            findings += (findings.empty() ? "" : "; ") + line;
        }
    } else {
        findings = check.error().message;
    }
    const std::string& p = db.path();
    return make_error(p, "the store is damaged (PRAGMA quick_check: " + findings +
                             "); kforge does not write into a damaged store. Keep this file, "
                             "then recover what it holds into a new one: sqlite3 '" + p +
                             "' .recover | sqlite3 '" + p + ".recovered' and use that (or a "
                             "backup) with --db");
}

}  // namespace

Expected<Store> Store::open(const std::string& path) {
    auto db = Database::open(path);
    if (!db) return db.error();
    if (auto st = check_integrity(*db); !st) return st.error();
    if (auto st = migrate(*db); !st) return st.error();
    return Store(std::move(*db));
}

Expected<Store> open_store(const std::string& path) { return Store::open(path); }

// ---- problems ----

Expected<int64_t> Store::upsert_problem(std::string_view name, std::string_view spec_json) {
    if (name.empty()) return make_error("problem", "name is empty");
    if (!nlohmann::json::accept(spec_json)) {
        return make_error("problem '" + std::string(name) + "'", "spec is not valid JSON");
    }
    // Hash the canonical form (keys sorted, no whitespace), so formatting does not matter.
    std::string canonical = nlohmann::json::parse(spec_json).dump();
    std::string hash = content_hash(canonical);
    auto ins = db_.prepare(
        "INSERT INTO problems (name, spec_json, content_hash) VALUES (?1, ?2, ?3) "
        "ON CONFLICT (name, content_hash) DO NOTHING");
    if (!ins) return ins.error();
    if (auto st = ins->bind(1, name).bind(2, spec_json).bind(3, hash).run(); !st) {
        return st.error();
    }
    auto sel = db_.prepare("SELECT id FROM problems WHERE name = ?1 AND content_hash = ?2");
    if (!sel) return sel.error();
    auto row = sel->bind(1, name).bind(2, hash).step();
    if (!row) return row.error();
    return sel->column_int(0);
}

Expected<ProblemRecord> Store::get_problem(int64_t problem_id) {
    auto sel = db_.prepare(
        "SELECT id, name, spec_json, content_hash, created_at FROM problems WHERE id = ?1");
    if (!sel) return sel.error();
    auto row = sel->bind(1, problem_id).step();
    if (!row) return row.error();
    if (!*row) return not_found(path(), "problem", problem_id);
    return ProblemRecord{sel->column_int(0), sel->column_text(1), sel->column_text(2),
                         sel->column_text(3), sel->column_text(4)};
}

// ---- devices ----

Expected<int64_t> Store::upsert_device(const DeviceRecord& d) {
    if (d.uuid.empty()) return make_error("device '" + d.name + "'", "uuid is empty");
    auto ins = db_.prepare(
        "INSERT INTO devices (name, uuid, compute_capability, driver, datasheet_key) "
        "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (uuid) DO UPDATE SET name = excluded.name, "
        "compute_capability = excluded.compute_capability, driver = excluded.driver, "
        "datasheet_key = excluded.datasheet_key");
    if (!ins) return ins.error();
    ins->bind(1, d.name).bind(2, d.uuid).bind(3, d.compute_capability).bind(4, d.driver);
    if (auto st = ins->bind(5, d.datasheet_key).run(); !st) return st.error();
    auto sel = db_.prepare("SELECT id FROM devices WHERE uuid = ?1");
    if (!sel) return sel.error();
    auto row = sel->bind(1, d.uuid).step();
    if (!row) return row.error();
    return sel->column_int(0);
}

Expected<DeviceRecord> Store::get_device(int64_t device_id) {
    auto sel = db_.prepare(
        "SELECT id, name, uuid, compute_capability, driver, datasheet_key FROM devices "
        "WHERE id = ?1");
    if (!sel) return sel.error();
    auto row = sel->bind(1, device_id).step();
    if (!row) return row.error();
    if (!*row) return not_found(path(), "device", device_id);
    return DeviceRecord{sel->column_int(0),  sel->column_text(1), sel->column_text(2),
                        sel->column_text(3), sel->column_text(4), sel->column_text(5)};
}

// ---- calibrations ----

Expected<int64_t> Store::save_calibration(int64_t device_id, std::string_view calibration_json) {
    if (auto st = check_json(calibration_json, "calibration"); !st) return st.error();
    if (auto dev = get_device(device_id); !dev) return dev.error();
    auto ins = db_.prepare(
        "INSERT INTO calibrations (device_id, calibration_json) VALUES (?1, ?2)");
    if (!ins) return ins.error();
    if (auto st = ins->bind(1, device_id).bind(2, calibration_json).run(); !st) {
        return st.error();
    }
    return db_.last_insert_rowid();
}

Expected<std::optional<CalibrationRecord>> Store::load_latest_calibration(int64_t device_id) {
    // measured_at has millisecond resolution; the id breaks ties between equal times.
    auto sel = db_.prepare(
        "SELECT id, device_id, calibration_json, measured_at FROM calibrations "
        "WHERE device_id = ?1 ORDER BY measured_at DESC, id DESC LIMIT 1");
    if (!sel) return sel.error();
    auto row = sel->bind(1, device_id).step();
    if (!row) return row.error();
    if (!*row) return std::optional<CalibrationRecord>{};
    return std::optional<CalibrationRecord>{CalibrationRecord{
        sel->column_int(0), sel->column_int(1), sel->column_text(2), sel->column_text(3)}};
}

}  // namespace kforge
