#include "store/sqlite.h"

#include <sqlite3.h>

#include <chrono>
#include <thread>
#include <utility>

namespace kforge {
namespace {

Error sqlite_error(sqlite3* db, std::string_view what) {
    const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
    std::string where = (file && *file) ? file : ":memory:";
    std::string message(what);
    if (db) {
        message += ": ";
        message += sqlite3_errmsg(db);
    }
    return make_error(std::move(where), std::move(message));
}

}  // namespace

// ---- Database ----

Expected<Database> Database::open(const std::string& path, int busy_timeout_ms) {
    sqlite3* raw = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &raw,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             nullptr);
    if (rc != SQLITE_OK) {
        std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
        sqlite3_close_v2(raw);
        return make_error(path, "cannot open database: " + msg);
    }
    Database db(raw, path);
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, busy_timeout_ms);
    // The first read of the file: a file that is not an SQLite database fails here
    // ("file is not a database"), before anything is written to it.
    // Switching a fresh file to WAL takes an exclusive lock, and SQLite does not always call the
    // busy handler for it (processes racing to create one database see "database is locked"
    // at once). Retry within the same busy budget, with a short sleep between attempts.
    auto mode = db.query_text("PRAGMA journal_mode=WAL");
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
    while (!mode && (sqlite3_errcode(raw) & 0xff) == SQLITE_BUSY &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        mode = db.query_text("PRAGMA journal_mode=WAL");
    }
    if (!mode) {
        std::string text = std::string("cannot read the database: ") + sqlite3_errmsg(raw);
        if ((sqlite3_errcode(raw) & 0xff) == SQLITE_CORRUPT)  // damaged, as at quick_check
            text += "; nothing is written into it. Keep this file, then recover what it holds "
                    "into a new one: sqlite3 '" + path + "' .recover | sqlite3 '" + path +
                    ".recovered' and use that (or a backup)";
        return make_error(path, text);
    }
    if (*mode != "wal" && *mode != "memory") {
        return make_error(path, "cannot switch the database to WAL mode (journal_mode is '" +
                                    *mode + "')");
    }
    // In WAL mode synchronous=NORMAL syncs only at checkpoints, not at every commit. A process
    // crash (SIGKILL, segfault) loses nothing: committed transactions are in the WAL, which the
    // OS holds. A power loss or kernel panic may lose the last few commits, but never corrupts
    // the database. Evaluations are reproducible, so that trade for commit speed is right here.
    if (auto st = db.exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"); !st) {
        return st.error();
    }
    auto fk = db.query_text("PRAGMA foreign_keys");
    if (!fk) return fk.error();
    if (*fk != "1") return make_error(path, "SQLite was built without foreign key support");
    return db;
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        sqlite3_close_v2(db_);
        db_ = std::exchange(other.db_, nullptr);
        path_ = std::move(other.path_);
    }
    return *this;
}

Database::~Database() { sqlite3_close_v2(db_); }

Status Database::exec(std::string_view sql) {
    std::string text(sql);
    char* msg = nullptr;
    int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &msg);
    if (rc != SQLITE_OK) {
        std::string m = msg ? msg : sqlite3_errstr(rc);
        sqlite3_free(msg);
        return make_error(path_, "SQL failed: " + m);
    }
    return Ok{};
}

Expected<Statement> Database::prepare(std::string_view sql) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) return error("cannot prepare '" + std::string(sql) + "'");
    return Statement(stmt);
}

Expected<std::string> Database::query_text(std::string_view sql) {
    auto stmt = prepare(sql);
    if (!stmt) return stmt.error();
    auto row = stmt->step();
    if (!row) return row.error();
    if (!*row) return make_error(path_, "'" + std::string(sql) + "' returned no row");
    return stmt->column_text(0);
}

int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int Database::changes() const { return sqlite3_changes(db_); }
Error Database::error(std::string_view what) const { return sqlite_error(db_, what); }

// ---- Statement ----

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), bind_error_(std::move(other.bind_error_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(stmt_);
        stmt_ = std::exchange(other.stmt_, nullptr);
        bind_error_ = std::move(other.bind_error_);
    }
    return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Error Statement::error(std::string_view what) const {
    Error e = sqlite_error(sqlite3_db_handle(stmt_), what);
    if (const char* sql = sqlite3_sql(stmt_)) e.detail = std::string("in: ") + sql;
    return e;
}

void Statement::note_bind(int rc, int index) {
    if (rc != SQLITE_OK && !bind_error_) {
        bind_error_ = error("cannot bind parameter " + std::to_string(index));
    }
}

Statement& Statement::bind(int index, int64_t value) {
    note_bind(sqlite3_bind_int64(stmt_, index, value), index);
    return *this;
}

Statement& Statement::bind(int index, double value) {
    note_bind(sqlite3_bind_double(stmt_, index, value), index);
    return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
    note_bind(sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT,
                                  SQLITE_UTF8),
              index);
    return *this;
}

Statement& Statement::bind_null(int index) {
    note_bind(sqlite3_bind_null(stmt_, index), index);
    return *this;
}

Expected<bool> Statement::step() {
    if (bind_error_) return *bind_error_;
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return error("SQL step failed");
}

Status Statement::run() {
    auto row = step();
    if (!row) return row.error();
    if (*row) return error("statement returned rows where none were expected");
    return Ok{};
}

Status Statement::reset() {
    bind_error_.reset();
    sqlite3_clear_bindings(stmt_);
    if (sqlite3_reset(stmt_) != SQLITE_OK) return error("cannot reset statement");
    return Ok{};
}

bool Statement::column_is_null(int col) const {
    return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}
int64_t Statement::column_int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::column_double(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::column_text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    int n = sqlite3_column_bytes(stmt_, col);
    if (!p) return {};
    return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
}

std::optional<int64_t> Statement::column_opt_int(int col) const {
    if (column_is_null(col)) return std::nullopt;
    return column_int(col);
}
std::optional<double> Statement::column_opt_double(int col) const {
    if (column_is_null(col)) return std::nullopt;
    return column_double(col);
}
std::optional<std::string> Statement::column_opt_text(int col) const {
    if (column_is_null(col)) return std::nullopt;
    return column_text(col);
}

// ---- Transaction ----

Expected<Transaction> Transaction::begin(Database& db) {
    if (auto st = db.exec("BEGIN IMMEDIATE"); !st) return st.error();
    return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
    if (db_) (void)db_->exec("ROLLBACK");
}

Status Transaction::commit() {
    if (!db_) return make_error("", "transaction already finished");
    auto st = db_->exec("COMMIT");
    if (!st) return st;  // destructor rolls back
    db_ = nullptr;
    return Ok{};
}

}  // namespace kforge
