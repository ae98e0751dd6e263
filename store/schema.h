// kforge's SQLite schema, versioned by PRAGMA user_version. Migrations are an ordered list of
// SQL steps; step i brings a database from version i-1 to i, each in its own transaction, so a
// crash mid-migration leaves the database at the last completed version.
#pragma once

#include "common/expected.h"
#include "store/sqlite.h"

namespace kforge {

// The schema version this build of kforge writes and reads.
inline constexpr int kSchemaVersion = 4;

// The version stored in the database (0 for a new, empty file).
Expected<int> schema_version(Database& db);

// Brings `db` to `target_version` (default: current), applying each missing step in its own
// IMMEDIATE transaction. Fails with a user error if the database is newer than this kforge,
// or if it holds tables but no kforge version (some other application's database).
// A `target_version` below kSchemaVersion exists for tests of the migration path.
Status migrate(Database& db, int target_version = kSchemaVersion);

}  // namespace kforge
