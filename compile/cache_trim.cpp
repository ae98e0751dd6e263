// trim_compile_cache (compile.h): the compile cache's size bound, least recently used first.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <vector>

#include "compile/cache_entry.h"
#include "compile/compile.h"

namespace kforge::compile {
namespace fs = std::filesystem;
namespace {

std::atomic<int64_t> g_default_max_bytes{kDefaultCacheMaxBytes};

// Unfinished compiles under tmp/ older than this belong to a process that died.
constexpr auto kStaleTmp = std::chrono::hours(24);

struct Entry {
    fs::path dir;
    std::string key;
    int64_t bytes = 0;
    fs::file_time_type last_used;
};

int64_t tree_bytes(const fs::path& dir) {
    int64_t n = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec)) n += static_cast<int64_t>(it->file_size(ec));
    return n;
}

fs::file_time_type last_used(const fs::path& dir) {
    std::error_code ec;
    auto t = fs::last_write_time(dir / kEntryResultFile, ec);
    if (ec) t = fs::last_write_time(dir, ec);
    return ec ? fs::file_time_type::min() : t;
}

bool hex_name(const std::string& s, size_t n) {
    return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

// flock on <cache>/.trim.lock for the trim's duration (threads and processes).
class TrimLock {
public:
    explicit TrimLock(const fs::path& root) {
        fd_ = ::open((root / ".trim.lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
        if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    ~TrimLock() {
        if (fd_ >= 0) ::close(fd_);  // releases the lock
    }
    bool held() const { return fd_ >= 0; }

private:
    int fd_ = -1;
};

}  // namespace

int64_t default_cache_max_bytes() { return g_default_max_bytes.load(); }
void set_default_cache_max_bytes(int64_t bytes) { g_default_max_bytes.store(std::max<int64_t>(0, bytes)); }

CacheTrimReport trim_compile_cache(const std::string& cache_dir, int64_t max_bytes,
                                   int64_t min_idle_s) {
    CacheTrimReport report;
    std::error_code ec;
    const fs::path root = fs::absolute(cache_dir, ec).lexically_normal();
    if (ec || !fs::is_directory(root, ec)) return report;
    TrimLock lock(root);
    if (!lock.held()) return report;
    const auto now = fs::file_time_type::clock::now();

    std::vector<Entry> entries;
    for (fs::directory_iterator d(root, ec), end; !ec && d != end; d.increment(ec)) {
        const std::string name = d->path().filename().string();
        if (name == "tmp") {
            std::error_code e2;
            for (fs::directory_iterator t(d->path(), e2); !e2 && t != end; t.increment(e2)) {
                std::error_code e3;
                if (now - fs::last_write_time(t->path(), e3) > kStaleTmp && !e3)
                    fs::remove_all(t->path(), e3);
                else
                    report.bytes += tree_bytes(t->path());
            }
            continue;
        }
        if (!hex_name(name, 2) || !d->is_directory()) continue;
        std::error_code e2;
        for (fs::directory_iterator k(d->path(), e2); !e2 && k != end; k.increment(e2)) {
            const std::string key = k->path().filename().string();
            if (!hex_name(key, 64)) continue;
            entries.push_back({k->path(), key, tree_bytes(k->path()), last_used(k->path())});
            report.bytes += entries.back().bytes;
        }
    }
    report.entries = static_cast<int64_t>(entries.size());
    if (max_bytes <= 0 || report.bytes <= max_bytes) return report;

    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.last_used < b.last_used; });
    const auto min_idle = std::chrono::seconds(std::max<int64_t>(0, min_idle_s));
    for (const Entry& e : entries) {
        if (report.bytes <= max_bytes) break;
        if (entry_pinned(e.key)) continue;                      // in use by this process
        if (e.last_used != fs::file_time_type::min() && now - e.last_used < min_idle)
            continue;                                           // maybe in use by another one
        if (last_used(e.dir) != e.last_used) continue;         // used since the walk
        discard_entry(root, e.dir);
        if (fs::exists(e.dir, ec)) continue;
        report.bytes -= e.bytes;
        --report.entries;
        ++report.evicted_entries;
        report.evicted_bytes += e.bytes;
    }
    return report;
}

}  // namespace kforge::compile
