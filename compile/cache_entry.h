// The compile cache's entries on disk (compile_cuda's cache; trim_compile_cache in compile.h):
// <cache>/<key[0:2]>/<key>/ holds the compile's files (kernels.cubin, kernels_host.so) and
// result.json, which lists each file with its size and sha256 and carries the sha256 of its own
// text. An entry is used only when all of it checks: a truncated or corrupted one (a full disk,
// a crash mid-write, a bad sector) is reported damaged, never loaded.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"

namespace kforge::compile {

inline constexpr const char* kEntryResultFile = "result.json";
inline constexpr const char* kEntryFormat = "kforge-compile-entry-v2";

// Writes `result` as dir/result.json with "files" (the size and sha256 of each of `files`, names
// relative to dir), "format" and "sha256" (of the rest) added. An Error when a file cannot be
// read or the JSON cannot be written whole (ENOSPC): such an entry must not be installed.
Status seal_entry(const std::filesystem::path& dir, nlohmann::json result,
                  const std::vector<std::string>& files);

enum class EntryState { kMissing, kDamaged, kValid };

struct OpenedEntry {
    EntryState state = EntryState::kMissing;
    nlohmann::json result;  // result.json without the checksums (when kValid)
    std::string why;        // what failed the check (when kDamaged)
};

// Reads and checks the entry in `dir`: result.json's own checksum, the format, and the size and
// sha256 of every file it lists.
OpenedEntry open_entry(const std::filesystem::path& dir);

// Moves the entry in `dir` out of the cache (an atomic rename into <cache>/tmp/) and removes it.
// Errors are ignored: another process may have moved it first.
void discard_entry(const std::filesystem::path& cache_root, const std::filesystem::path& dir);

// Marks the entry as used now (result.json's modification time: the LRU order of eviction).
void touch_entry(const std::filesystem::path& dir);

// Pins the entry of `key` in this process while the returned handle (or a copy) lives.
std::shared_ptr<const void> pin_entry(const std::string& key);
bool entry_pinned(const std::string& key);

// A name no other thread or process uses and no one can guess ahead (a compile's and an evicted
// entry's folder under <cache>/tmp/): "<pid>.<thread>.<counter>.<64 random bits>".
std::string unique_suffix();

}  // namespace kforge::compile
