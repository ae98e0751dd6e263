// The compile cache against what goes wrong on a real machine, with the real nvcc and real
// processes (no mocks): a compiler killed by a signal (itself, or a child as nvcc reports it), a
// full disk and a timeout leave nothing cached, and the next compile with the real nvcc builds;
// a truncated or corrupted entry is detected and compiled again; the size bound evicts the least
// recently used entries but never one in use. Integration: needs the CUDA toolkit, no GPU.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "compile/cache_entry.h"
#include "compile/compile.h"
#include "tests/compile/compile_fixture.h"
#include "common/hash.h"

namespace kforge::compile {
namespace {
namespace fs = std::filesystem;
using testing::kKernel;

fs::path fresh_dir(const std::string& name) { return testing::fresh_dir("cache_test", name); }

CompileOptions options_in(const fs::path& cache) {
    CompileOptions o = testing::options_in(cache);
    o.cache_max_bytes = 0;  // no eviction unless a test sets a bound
    return o;
}

// An executable "nvcc": `--version` answers as the real one does (so the cache key is the real
// compile's key, and a cached failure would be served to the real nvcc), anything else runs
// `body`.
std::string fake_nvcc(const fs::path& dir, const std::string& body) {
    const fs::path path = dir / "fake-nvcc.sh";
    std::ofstream(path) << "#!/bin/sh\n"
                        << "if [ \"$1\" = \"--version\" ]; then exec \"" << KFORGE_NVCC
                        << "\" --version; fi\n"
                        << body << "\n";
    fs::permissions(path, fs::perms::owner_all);
    return path.string();
}

// Files under the cache's <xx>/<key>/ entries (not tmp/).
int cached_entries(const fs::path& cache) {
    int n = 0;
    for (const auto& d : fs::directory_iterator(cache))
        if (d.is_directory() && d.path().filename() != "tmp")
            for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.path())) ++n;
    return n;
}

// Compiles with the fake nvcc (expecting `status`), then with the real one: the real compile
// must run (no cached failure is served) and succeed.
void expect_not_cached(const std::string& name, const std::string& body, CompileStatus status,
                       const std::string& in_log) {
    fs::path cache = fresh_dir(name);
    CompileOptions o = options_in(cache);
    const fs::path bin = fresh_dir(name + "_bin");
    o.nvcc = fake_nvcc(bin, body);
    if (status == CompileStatus::kTimedOut) o.timeout_s = 1;
    auto dying = compile_cuda(kKernel, o);
    ASSERT_TRUE(dying.ok()) << dying.error().to_string();
    EXPECT_EQ(dying->status, status) << dying->log;
    EXPECT_NE(dying->log.find(in_log), std::string::npos) << dying->log;
    EXPECT_EQ(cached_entries(cache), 0) << "a " << to_string(status) << " compile was cached";

    auto again = compile_cuda(kKernel, o);  // the same fake: compiled again, not served
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->cache_hit);

    CompileOptions real = options_in(cache);
    auto ok = compile_cuda(kKernel, real);
    ASSERT_TRUE(ok.ok()) << ok.error().to_string();
    EXPECT_EQ(ok->key, dying->key);  // the same entry the dying compile would have poisoned
    EXPECT_EQ(ok->status, CompileStatus::kOk) << ok->log;
    EXPECT_FALSE(ok->cache_hit);
    EXPECT_TRUE(fs::exists(ok->cubin_path));
    fs::remove_all(cache);
    fs::remove_all(bin);
}

TEST(CompileCache, CompilerKilledBySignalIsNotCached) {
    // the compiler process itself dies (what the OOM killer does to it)
    expect_not_cached("self_kill", "kill -KILL $$", CompileStatus::kAborted, "signal 9");
}

TEST(CompileCache, ChildKilledBySignalIsNotCached) {
    // a child dies by a real SIGKILL and the driver reports it as nvcc does ("'cicc' died due to
    // signal 9 (Kill signal)", exit status = the signal number)
    expect_not_cached("child_kill",
                      "sh -c 'kill -KILL $$'; s=$(( $? - 128 ))\n"
                      "echo \"nvcc error   : 'cicc' died due to signal $s (Kill signal)\"\n"
                      "exit $s",
                      CompileStatus::kAborted, "died due to signal 9");
}

TEST(CompileCache, ShellWrapperOfAKilledCompilerIsNotCached) {
    // a wrapper script (ccache-like) whose compiler was killed exits 128 + signal, silently
    expect_not_cached("wrapper_kill", "sh -c 'kill -KILL $$'; exit $?", CompileStatus::kAborted,
                      "status 137");
}

TEST(CompileCache, FullDiskIsNotCached) {
    // a real ENOSPC: the write goes to /dev/full
    expect_not_cached("enospc", "cat \"$0\" > /dev/full || exit 1", CompileStatus::kAborted,
                      "No space left on device");
}

TEST(CompileCache, TimeoutIsNotCached) {
    expect_not_cached("timeout", "sleep 30", CompileStatus::kTimedOut, "timed out");
}

TEST(CompileCache, CompileErrorIsStillCached) {
    fs::path cache = fresh_dir("verdict");
    const std::string bad = "extern \"C\" __global__ void k() { undefined_name = 1; }\n";
    auto first = compile_cuda(bad, options_in(cache));
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(first->status, CompileStatus::kCompileFailed) << first->log;
    EXPECT_EQ(cached_entries(cache), 1);
    auto again = compile_cuda(bad, options_in(cache));
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->cache_hit);
    EXPECT_EQ(again->status, CompileStatus::kCompileFailed);
    fs::remove_all(cache);
}

std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Two requests for one source at once (a launch-knob variant precompiled beside its
// configuration's first compile): one nvcc run, the other request waits and takes the entry.
TEST(CompileCache, ConcurrentRequestsForOneSourceCompileOnce) {
    fs::path cache = fresh_dir("inflight");
    fs::path bin = fresh_dir("inflight_bin");
    const fs::path count = bin / "count";
    CompileOptions o = options_in(cache);
    o.nvcc = fake_nvcc(bin, "echo x >> \"" + count.string() + "\"\nexec \"" + KFORGE_NVCC +
                                "\" \"$@\"");
    Expected<CompileResult> a = make_error("", ""), b = make_error("", "");
    std::thread ta([&] { a = compile_cuda(kKernel, o); });
    std::thread tb([&] { b = compile_cuda(kKernel, o); });
    ta.join();
    tb.join();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->status, CompileStatus::kOk) << a->log;
    EXPECT_EQ(b->status, CompileStatus::kOk) << b->log;
    EXPECT_NE(a->cache_hit, b->cache_hit);  // one compiled, the other was served
    EXPECT_EQ(read(count).size(), 2u) << "nvcc ran " << read(count).size() / 2 << " times";
    fs::remove_all(cache);
    fs::remove_all(bin);
}

// Damages the cached entry of `o` with `damage`, then compiles again: the damage is detected,
// the entry compiled again (no hit), and the files returned are whole again.
void expect_rebuilt(const std::string& name, bool host_library,
                    const std::function<void(const CompileResult&)>& damage) {
    fs::path cache = fresh_dir(name);
    CompileOptions o = options_in(cache);
    o.host_library = host_library;
    auto first = compile_cuda(kKernel, o);
    ASSERT_TRUE(first.ok()) << first.error().to_string();
    ASSERT_EQ(first->status, CompileStatus::kOk) << first->log;
    const std::string cubin = read(first->cubin_path);
    const std::string lib = host_library ? read(first->host_library_path) : "";
    if (host_library) ASSERT_FALSE(lib.empty());
    damage(*first);
    auto second = compile_cuda(kKernel, o);
    ASSERT_TRUE(second.ok()) << second.error().to_string();
    ASSERT_EQ(second->status, CompileStatus::kOk) << second->log;
    EXPECT_FALSE(second->cache_hit) << "a damaged entry was served";
    EXPECT_EQ(sha256_hex(read(second->cubin_path)), sha256_hex(cubin));
    if (host_library) EXPECT_EQ(sha256_hex(read(second->host_library_path)), sha256_hex(lib));
    auto third = compile_cuda(kKernel, o);  // and the rebuilt entry is a hit again
    ASSERT_TRUE(third.ok());
    EXPECT_TRUE(third->cache_hit);
    fs::remove_all(cache);
}

TEST(CompileCache, TruncatedHostLibraryIsRebuiltNotLoaded) {
    expect_rebuilt("trunc_so", true, [](const CompileResult& r) {
        fs::resize_file(r.host_library_path, fs::file_size(r.host_library_path) / 2);
    });
}

TEST(CompileCache, FlippedByteInTheCubinIsRebuilt) {
    expect_rebuilt("flip_cubin", false, [](const CompileResult& r) {
        std::fstream f(r.cubin_path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekg(100);
        char c = 0;
        f.read(&c, 1);
        c = static_cast<char>(c ^ 0x5a);
        f.seekp(100);
        f.write(&c, 1);
    });
}

TEST(CompileCache, DamagedResultJsonIsRebuilt) {
    expect_rebuilt("trunc_json", false, [](const CompileResult& r) {
        const fs::path j = fs::path(r.cubin_path).parent_path() / "result.json";
        fs::resize_file(j, fs::file_size(j) / 2);
    });
    expect_rebuilt("edited_json", false, [](const CompileResult& r) {
        const fs::path j = fs::path(r.cubin_path).parent_path() / "result.json";
        std::string text = read(j);
        auto at = text.find("\"registers\": ");
        ASSERT_NE(at, std::string::npos) << text;
        text.insert(at + 13, "9");  // still JSON, no longer what the compile said
        std::ofstream(j, std::ios::binary | std::ios::trunc) << text;
    });
}

// Sets the entry's last use `age_s` seconds back.
void age_entry(const CompileResult& r, int age_s) {
    const fs::path j = fs::path(r.cubin_path).parent_path() / "result.json";
    fs::last_write_time(j, fs::file_time_type::clock::now() - std::chrono::seconds(age_s));
}

bool present(const CompileResult& r) { return fs::exists(fs::path(r.cubin_path).parent_path()); }

TEST(CompileCache, SizeBoundEvictsLeastRecentlyUsedButNeverAnEntryInUse) {
    fs::path cache = fresh_dir("evict");
    CompileOptions o = options_in(cache);
    auto variant = [](int i) { return std::string(kKernel) + "// variant " + std::to_string(i); };
    auto compile = [&](int i) {
        auto r = compile_cuda(variant(i), o);
        EXPECT_TRUE(r.ok() && r->status == CompileStatus::kOk);
        return *r;
    };
    // Four entries, last used (oldest first): 0 (still held by this process), 1, 2, 3.
    CompileResult in_use = compile(0);
    CompileResult r1 = compile(1), r2 = compile(2), r3 = compile(3);
    age_entry(in_use, 4000);
    age_entry(r1, 3000);
    age_entry(r2, 2000);
    age_entry(r3, 1000);
    const CacheTrimReport all = trim_compile_cache(cache.string(), 0);
    EXPECT_EQ(all.entries, 4);
    EXPECT_EQ(all.evicted_entries, 0);
    const int64_t entry_bytes = all.bytes / 4;
    // A hit is a use: 1 becomes the most recently used.
    { auto hit = compile_cuda(variant(1), o); ASSERT_TRUE(hit.ok() && hit->cache_hit); }
    // Dropping the results releases them (0 stays held by `in_use`); p* keep the paths only.
    auto unpinned = [](CompileResult r) {
        r.cache_pin.reset();
        return r;
    };
    const CompileResult p1 = unpinned(r1), p2 = unpinned(r2), p3 = unpinned(r3);
    r1 = r2 = r3 = CompileResult{};

    // Room for about three entries: the fifth compile must evict two: 2 and 3 (least recently
    // used), not 0 (older, but in use here) and not 1 (just hit) or 4 (just written).
    o.cache_max_bytes = entry_bytes * 3 + entry_bytes / 2;
    CompileResult r4 = compile(4);
    EXPECT_TRUE(present(in_use)) << "evicted an entry this process holds";
    EXPECT_TRUE(fs::exists(in_use.cubin_path));
    EXPECT_TRUE(present(p1)) << "evicted the most recently used entry";
    EXPECT_FALSE(present(p2));
    EXPECT_FALSE(present(p3));
    EXPECT_TRUE(present(r4));
    const CacheTrimReport after = trim_compile_cache(cache.string(), 0);
    EXPECT_EQ(after.entries, 3);
    EXPECT_LE(after.bytes, o.cache_max_bytes);

    // Entries used within min_idle_s are kept even over the limit (another process may be
    // loading them); released and old enough, they go.
    in_use = CompileResult{};
    const CacheTrimReport recent = trim_compile_cache(cache.string(), 1, 600);
    EXPECT_TRUE(present(p1));  // hit a moment ago
    EXPECT_TRUE(present(r4));  // written a moment ago
    EXPECT_EQ(recent.evicted_entries, 1);  // 0: released and 4000 s old
    r4 = CompileResult{};
    const CacheTrimReport none = trim_compile_cache(cache.string(), 1, 0);
    EXPECT_EQ(none.entries, 0);
    EXPECT_EQ(none.evicted_entries, 2);
    // An evicted entry is simply compiled again.
    CompileResult back = compile(2);
    EXPECT_FALSE(back.cache_hit);
    EXPECT_TRUE(fs::exists(back.cubin_path));
    fs::remove_all(cache);
}

TEST(CompileCache, DefaultLimitIsSetOnce) {
    EXPECT_EQ(default_cache_max_bytes(), kDefaultCacheMaxBytes);
    EXPECT_EQ(CompileOptions{}.cache_max_bytes, kDefaultCacheMaxBytes);
    set_default_cache_max_bytes(12345);
    EXPECT_EQ(CompileOptions{}.cache_max_bytes, 12345);
    set_default_cache_max_bytes(kDefaultCacheMaxBytes);
}

// A compile's folder under <cache>/tmp/ carries 64 random bits beside pid, thread and counter,
// so no one can create it ahead of the compile (issue 31, item 9): two names of one thread
// differ in more than the counter.
TEST(CompileCache, TemporaryNamesAreUnguessable) {
    const std::string a = unique_suffix(), b = unique_suffix();
    const std::string pid = std::to_string(::getpid()) + ".";
    ASSERT_EQ(a.rfind(pid, 0), 0u) << a;
    const std::string secret_a = a.substr(a.rfind('.') + 1), secret_b = b.substr(b.rfind('.') + 1);
    EXPECT_GE(secret_a.size(), 8u) << a;
    EXPECT_NE(secret_a, secret_b) << a << " " << b;
}

}  // namespace
}  // namespace kforge::compile
