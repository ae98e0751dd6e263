// Cache entries: sealing (sizes and sha256 into result.json), checking before use, discarding a
// damaged one, LRU stamps and in-process pins. See cache_entry.h.
#include "compile/cache_entry.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "common/hash.h"

namespace kforge::compile {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return ss.str();
}

// The text whose sha256 result.json carries: the JSON without its "sha256" member.
std::string sealed_text(const nlohmann::json& body) { return body.dump(); }

struct Pins {
    std::mutex mu;
    std::map<std::string, int> count;
};

Pins& pins() {
    static Pins p;
    return p;
}

}  // namespace

std::string unique_suffix() {
    static std::atomic<uint64_t> counter{0};
    std::random_device random;  // the OS's entropy: a name no one can guess ahead of the compile
    const uint64_t secret = (uint64_t{random()} << 32) ^ random();
    std::ostringstream s;
    s << getpid() << "." << std::hash<std::thread::id>{}(std::this_thread::get_id()) << "."
      << counter++ << "." << std::hex << secret;
    return s.str();
}

Status seal_entry(const fs::path& dir, nlohmann::json result,
                  const std::vector<std::string>& files) {
    nlohmann::json listed = nlohmann::json::object();
    for (const std::string& name : files) {
        auto bytes = read_all(dir / name);
        if (!bytes) return make_error((dir / name).string(), "cannot read the compiled file");
        listed[name] = {{"bytes", bytes->size()}, {"sha256", sha256_hex(*bytes)}};
    }
    result["files"] = std::move(listed);
    result["format"] = kEntryFormat;
    result.erase("sha256");
    result["sha256"] = sha256_hex(sealed_text(result));
    const fs::path path = dir / kEntryResultFile;
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << result.dump(2) << "\n";
        out.flush();
        if (!out) return make_error(path.string(), "cannot write the cache entry (disk full?)");
    }
    // Read back: a short write (ENOSPC after the buffer was accepted) must not be installed.
    auto back = read_all(path);
    if (!back || *back != result.dump(2) + "\n")
        return make_error(path.string(), "the cache entry did not reach the disk whole");
    return Ok{};
}

OpenedEntry open_entry(const fs::path& dir) {
    OpenedEntry e;
    std::error_code ec;
    if (!fs::exists(dir, ec)) return e;
    e.state = EntryState::kDamaged;
    auto text = read_all(dir / kEntryResultFile);
    if (!text) {
        e.why = "no result.json";
        return e;
    }
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("sha256") || !j["sha256"].is_string()) {
        e.why = "result.json is not a sealed JSON object";
        return e;
    }
    const std::string sealed = j["sha256"].get<std::string>();
    j.erase("sha256");
    if (sha256_hex(sealed_text(j)) != sealed) {
        e.why = "result.json fails its checksum";
        return e;
    }
    if (j.value("format", "") != kEntryFormat || !j.contains("files") || !j["files"].is_object()) {
        e.why = "result.json has another format";
        return e;
    }
    for (const auto& [name, f] : j["files"].items()) {
        if (name.find('/') != std::string::npos || name.find("..") != std::string::npos) {
            e.why = "result.json lists a file outside the entry";
            return e;
        }
        auto bytes = read_all(dir / name);
        if (!bytes) {
            e.why = name + " is missing";
            return e;
        }
        if (!f.is_object() || f.value("bytes", int64_t{-1}) != static_cast<int64_t>(bytes->size())) {
            e.why = name + " has the wrong size (truncated?)";
            return e;
        }
        if (f.value("sha256", "") != sha256_hex(*bytes)) {
            e.why = name + " fails its checksum";
            return e;
        }
    }
    e.state = EntryState::kValid;
    e.result = std::move(j);
    return e;
}

void discard_entry(const fs::path& cache_root, const fs::path& dir) {
    std::error_code ec;
    const fs::path away = cache_root / "tmp" / (dir.filename().string() + ".discarded." +
                                                unique_suffix());
    fs::create_directories(away.parent_path(), ec);
    fs::rename(dir, away, ec);
    if (!ec) fs::remove_all(away, ec);
}

void touch_entry(const fs::path& dir) {
    std::error_code ec;  // a read-only cache is still usable: no stamp then
    fs::last_write_time(dir / kEntryResultFile, fs::file_time_type::clock::now(), ec);
}

std::shared_ptr<const void> pin_entry(const std::string& key) {
    {
        std::lock_guard lock(pins().mu);
        ++pins().count[key];
    }
    return std::shared_ptr<const void>(new std::string(key), [](const void* p) {
        const auto* k = static_cast<const std::string*>(p);
        {
            std::lock_guard lock(pins().mu);
            auto it = pins().count.find(*k);
            if (it != pins().count.end() && --it->second <= 0) pins().count.erase(it);
        }
        delete k;
    });
}

bool entry_pinned(const std::string& key) {
    std::lock_guard lock(pins().mu);
    return pins().count.count(key) > 0;
}

}  // namespace kforge::compile
