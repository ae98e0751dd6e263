// A small RAII layer over the sqlite3 C API: Database (one connection), Statement (prepare, bind,
// step, column) and Transaction (BEGIN IMMEDIATE, commit or roll back on scope exit). Every
// SQLite failure becomes a kforge::Error whose `where` is the database path and whose message
// carries SQLite's own text. Nothing here knows kforge's schema (store/schema.h does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kforge {

class Statement;

// One open connection, configured for kforge: WAL journal, foreign keys enforced, a busy timeout
// so that concurrent writers wait instead of failing, synchronous=NORMAL (see open()).
class Database {
public:
    // Opens (creating if absent) the database at `path`; ":memory:" gives a private in-memory
    // database. Fails with a user error when the file cannot be opened or is not a database.
    static Expected<Database> open(const std::string& path, int busy_timeout_ms = 5000);

    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    // Runs one or more statements that return no rows (DDL, PRAGMA writes, BEGIN/COMMIT).
    Status exec(std::string_view sql);
    Expected<Statement> prepare(std::string_view sql);
    // The value of the first column of the first row of `sql` (e.g. a PRAGMA), as text.
    Expected<std::string> query_text(std::string_view sql);

    int64_t last_insert_rowid() const;
    int changes() const;
    const std::string& path() const { return path_; }
    sqlite3* handle() const { return db_; }
    // An Error naming this database, with SQLite's last message appended to `what`.
    Error error(std::string_view what) const;

private:
    Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
    sqlite3* db_ = nullptr;
    std::string path_;
};

// A prepared statement. bind_*() take 1-based parameter indices, column_*() 0-based columns,
// as in the C API. step() returns true while a row is available, false when done.
class Statement {
public:
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    Statement& bind(int index, int64_t value);
    Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
    Statement& bind(int index, double value);
    Statement& bind(int index, std::string_view text);
    Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
    Statement& bind(int index, const std::string& text) {
        return bind(index, std::string_view(text));
    }
    Statement& bind_null(int index);
    template <typename T>
    Statement& bind(int index, const std::optional<T>& value) {
        return value ? bind(index, *value) : bind_null(index);
    }

    // Advances to the next row. Errors from binding surface here (the first one wins).
    Expected<bool> step();
    // Steps a statement that must not return rows (INSERT, UPDATE, DELETE).
    Status run();
    Status reset();  // rewinds for another execution; bindings are cleared

    bool column_is_null(int col) const;
    int64_t column_int(int col) const;
    double column_double(int col) const;
    std::string column_text(int col) const;
    std::optional<int64_t> column_opt_int(int col) const;
    std::optional<double> column_opt_double(int col) const;
    std::optional<std::string> column_opt_text(int col) const;

private:
    friend class Database;
    explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
    void note_bind(int rc, int index);
    Error error(std::string_view what) const;
    sqlite3_stmt* stmt_ = nullptr;
    std::optional<Error> bind_error_;
};

// BEGIN IMMEDIATE on construction (take the write lock up front, so two writers never deadlock
// upgrading a read lock), ROLLBACK on destruction unless commit() succeeded.
class Transaction {
public:
    static Expected<Transaction> begin(Database& db);
    Transaction(Transaction&& other) noexcept;
    Transaction& operator=(Transaction&&) = delete;
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    ~Transaction();

    Status commit();

private:
    explicit Transaction(Database* db) : db_(db) {}
    Database* db_ = nullptr;  // null once committed, rolled back or moved from
};

}  // namespace kforge
