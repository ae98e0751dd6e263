// The RAII layer over sqlite3: pragmas on open, binding and reading, transactions.
#include <gtest/gtest.h>

#include <filesystem>

#include "store/sqlite.h"
#include "store_fixture.h"

namespace kforge {
namespace {

class SqliteTest : public ::testing::Test {
protected:
    void SetUp() override { dir_ = test::make_temp_dir(); }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string db_path() const { return (dir_ / "t.db").string(); }
    std::filesystem::path dir_;
};

TEST_F(SqliteTest, OpenSetsWalForeignKeysAndSynchronousNormal) {
    auto db = Database::open(db_path());
    ASSERT_TRUE(db.ok()) << db.error().to_string();
    EXPECT_EQ(*db->query_text("PRAGMA journal_mode"), "wal");
    EXPECT_EQ(*db->query_text("PRAGMA foreign_keys"), "1");
    EXPECT_EQ(*db->query_text("PRAGMA synchronous"), "1");  // NORMAL
    EXPECT_EQ(*db->query_text("PRAGMA busy_timeout"), "5000");
}

TEST_F(SqliteTest, BindStepAndColumnsRoundTrip) {
    auto db = Database::open(db_path());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec("CREATE TABLE t (i INTEGER, r REAL, s TEXT, n INTEGER)").ok());
    auto ins = db->prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4)");
    ASSERT_TRUE(ins.ok());
    std::optional<int64_t> none;
    ins->bind(1, int64_t{1} << 40).bind(2, 2.5).bind(3, std::string("a\0b", 3)).bind(4, none);
    ASSERT_TRUE(ins->run().ok());
    EXPECT_EQ(db->last_insert_rowid(), 1);
    EXPECT_EQ(db->changes(), 1);

    auto sel = db->prepare("SELECT i, r, s, n FROM t");
    ASSERT_TRUE(sel.ok());
    auto row = sel->step();
    ASSERT_TRUE(row.ok() && *row);
    EXPECT_EQ(sel->column_int(0), int64_t{1} << 40);
    EXPECT_DOUBLE_EQ(sel->column_double(1), 2.5);
    EXPECT_EQ(sel->column_text(2), std::string("a\0b", 3));  // embedded NUL survives
    EXPECT_TRUE(sel->column_is_null(3));
    EXPECT_FALSE(sel->column_opt_int(3).has_value());
    auto done = sel->step();
    ASSERT_TRUE(done.ok());
    EXPECT_FALSE(*done);
}

TEST_F(SqliteTest, TransactionRollsBackUnlessCommitted) {
    auto db = Database::open(db_path());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec("CREATE TABLE t (x INTEGER)").ok());
    {
        auto txn = Transaction::begin(*db);
        ASSERT_TRUE(txn.ok());
        ASSERT_TRUE(db->exec("INSERT INTO t VALUES (1)").ok());
    }  // no commit: rolled back
    EXPECT_EQ(*db->query_text("SELECT count(*) FROM t"), "0");
    {
        auto txn = Transaction::begin(*db);
        ASSERT_TRUE(txn.ok());
        ASSERT_TRUE(db->exec("INSERT INTO t VALUES (2)").ok());
        ASSERT_TRUE(txn->commit().ok());
        EXPECT_FALSE(txn->commit().ok());  // a finished transaction cannot commit again
    }
    EXPECT_EQ(*db->query_text("SELECT count(*) FROM t"), "1");
}

TEST_F(SqliteTest, ErrorsNameTheDatabaseAndCarrySqliteMessage) {
    auto db = Database::open(db_path());
    ASSERT_TRUE(db.ok());
    auto bad = db->prepare("SELEC 1");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().where, db_path());
    EXPECT_NE(bad.error().message.find("syntax error"), std::string::npos)
        << bad.error().message;
    ASSERT_TRUE(db->exec("CREATE TABLE t (x INTEGER NOT NULL)").ok());
    auto ins = db->prepare("INSERT INTO t VALUES (NULL)");
    ASSERT_TRUE(ins.ok());
    auto st = ins->run();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("NOT NULL"), std::string::npos) << st.error().message;
}

}  // namespace
}  // namespace kforge
