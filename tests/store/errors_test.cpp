// Bad input to the store gives the right user error: a newer schema, another application's
// database, a file that is not a database, a folder that does not exist.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "store/schema.h"
#include "store/store.h"
#include "store_fixture.h"

namespace kforge {
namespace {

class StoreErrorTest : public ::testing::Test {
protected:
    void SetUp() override { dir_ = test::make_temp_dir(); }
    void TearDown() override { std::filesystem::remove_all(dir_); }
    std::string db_path() const { return (dir_ / "kforge.db").string(); }
    std::filesystem::path dir_;
};

TEST_F(StoreErrorTest, RefusesANewerSchema) {
    {
        auto db = Database::open(db_path());
        ASSERT_TRUE(db.ok());
        ASSERT_TRUE(migrate(*db).ok());
        ASSERT_TRUE(db->exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1)).ok());
    }
    auto s = open_store(db_path());
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().where, db_path());
    EXPECT_NE(s.error().message.find("newer than this kforge"), std::string::npos)
        << s.error().to_string();
    // Refusing leaves the file alone.
    auto db = Database::open(db_path());
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(*schema_version(*db), kSchemaVersion + 1);
}

TEST_F(StoreErrorTest, RefusesADatabaseOfAnotherApplication) {
    {
        auto db = Database::open(db_path());
        ASSERT_TRUE(db.ok());
        ASSERT_TRUE(db->exec("CREATE TABLE customers (id INTEGER)").ok());
    }
    auto s = open_store(db_path());
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("not a kforge database"), std::string::npos)
        << s.error().to_string();
}

TEST_F(StoreErrorTest, OpenRejectsAFileThatIsNotADatabase) {
    std::ofstream(db_path()) << "this is not an SQLite database, just some text long enough "
                                "to fill the header of one........................";
    auto s = open_store(db_path());
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().where, db_path());
    EXPECT_EQ(s.error().message, "cannot read the database: file is not a database");
}

TEST_F(StoreErrorTest, OpenFailsInAMissingFolder) {
    auto db = Database::open((dir_ / "no" / "such" / "dir" / "x.db").string());
    ASSERT_FALSE(db.ok());
    EXPECT_NE(db.error().message.find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace kforge
