// compile_cuda / compile_many: see compile.h. Cache layout: <cache>/<key[0:2]>/<key>/ holding
// kernels.cubin, kernels_host.so (with host code) and result.json (sealed with checksums:
// compile/cache_entry.h); a compile writes into <cache>/tmp/<unique>/ and renames it into place,
// so concurrent writers never see half a result (the loser of a rename race drops its copy and
// reads the winner's). Only the compiler's verdict on the source is cached: a timeout, a
// compiler killed by a signal or a full disk is compiled again next time (kAborted).
#include "compile/compile.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "common/install_paths.h"
#include "common/parallel.h"
#include "compile/cache_entry.h"
#include "compile/nvrtc_compile.h"
#include "common/process.h"

namespace kforge::compile {
namespace fs = std::filesystem;
namespace {

// The per-key lock of compile_cuda (a key's lock lives while any request for it does).
std::shared_ptr<std::mutex> key_lock(const std::string& key) {
    static std::mutex mu;
    static std::map<std::string, std::weak_ptr<std::mutex>> locks;
    std::lock_guard<std::mutex> g(mu);
    if (locks.size() > 4096)
        for (auto it = locks.begin(); it != locks.end();)
            it = it->second.expired() ? locks.erase(it) : std::next(it);
    std::weak_ptr<std::mutex>& w = locks[key];
    std::shared_ptr<std::mutex> l = w.lock();
    if (!l) w = l = std::make_shared<std::mutex>();
    return l;
}

constexpr const char* kCubin = "kernels.cubin";
constexpr const char* kHostLib = "kernels_host.so";

// arch "sm_90a" -> "90a"
std::string arch_digits(const std::string& arch) {
    return arch.rfind("sm_", 0) == 0 ? arch.substr(3) : arch;
}

// nvcc's flags, without input/output paths (they go into the cache key).
std::vector<std::string> nvcc_flags(const CompileOptions& o) {
    std::string a = arch_digits(o.arch);
    std::vector<std::string> f = {"-gencode=arch=compute_" + a + ",code=sm_" + a, "-std=c++17",
                                  "--expt-relaxed-constexpr", "-O3", "-DNDEBUG", "-Xptxas", "-v"};
    for (const auto& d : o.include_dirs) f.push_back("-I" + d);
    if (o.host_library) {
        f.insert(f.end(), {"-shared", "-Xcompiler", "-fPIC"});
    } else {
        f.push_back("-cubin");
    }
    for (const auto& x : o.extra_flags) f.push_back(x);
    return f;
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool write_text(const fs::path& p, std::string_view text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
    return static_cast<bool>(out);
}

nlohmann::json result_json(const CompileResult& r) {
    nlohmann::json j;
    j["status"] = to_string(r.status);
    j["backend"] = to_string(r.backend);
    j["log"] = r.log;
    j["command"] = r.command;
    j["time_compile_ns"] = r.time_compile_ns;
    j["host_library"] = !r.host_library_path.empty();
    j["kernels"] = nlohmann::json::array();
    for (const auto& k : r.kernels)
        j["kernels"].push_back({{"name", k.name}, {"arch", k.arch}, {"registers", k.registers},
                                {"barriers", k.barriers}, {"smem_bytes", k.smem_bytes},
                                {"cmem_bytes", k.cmem_bytes}, {"stack_bytes", k.stack_bytes},
                                {"spill_stores_bytes", k.spill_stores_bytes},
                                {"spill_loads_bytes", k.spill_loads_bytes}});
    return j;
}

// A checked entry's result.json back into a result whose paths point into `dir`.
CompileResult result_of(const nlohmann::json& j, const fs::path& dir) {
    CompileResult r;
    r.status = compile_status_from_string(j.value("status", "")).value_or(
        CompileStatus::kCompileFailed);
    r.backend = j.value("backend", "nvcc") == "nvrtc" ? CompileBackend::kNvrtc
                                                      : CompileBackend::kNvcc;
    r.log = j.value("log", "");
    r.command = j.value("command", "");
    for (const auto& k : j.value("kernels", nlohmann::json::array())) {
        KernelResources kr;
        kr.name = k.value("name", "");
        kr.arch = k.value("arch", "");
        kr.registers = k.value("registers", 0);
        kr.barriers = k.value("barriers", 0);
        kr.smem_bytes = k.value("smem_bytes", int64_t{0});
        kr.cmem_bytes = k.value("cmem_bytes", int64_t{0});
        kr.stack_bytes = k.value("stack_bytes", int64_t{0});
        kr.spill_stores_bytes = k.value("spill_stores_bytes", int64_t{0});
        kr.spill_loads_bytes = k.value("spill_loads_bytes", int64_t{0});
        r.kernels.push_back(kr);
    }
    if (r.status == CompileStatus::kOk) {
        r.cubin_path = (dir / kCubin).string();
        if (j.value("host_library", false)) r.host_library_path = (dir / kHostLib).string();
    }
    r.cache_hit = true;
    return r;
}

// A cached entry that is whole and says what a compile would say again, else nullopt.
std::optional<CompileResult> load_cached(const fs::path& dir) {
    OpenedEntry e = open_entry(dir);
    if (e.state != EntryState::kValid) return std::nullopt;
    auto st = compile_status_from_string(e.result.value("status", ""));
    if (st != CompileStatus::kOk && st != CompileStatus::kCompileFailed) return std::nullopt;
    if (st == CompileStatus::kOk) {  // the files a result points at are listed, so checked
        const auto& files = e.result["files"];
        if (!files.contains(kCubin) ||
            (e.result.value("host_library", false) && !files.contains(kHostLib)))
            return std::nullopt;
    }
    return result_of(e.result, dir);
}

// Why a failed nvcc run says nothing about the source ("" when it is the compiler's verdict):
// nvcc or one of its children (cicc, ptxas, gcc) killed by a signal (nvcc reports "'cicc' died
// due to signal 9" and exits with the signal's number), an exit status of 128 or more (a shell
// wrapper's child killed), memory or disk exhausted, or a failure with no message at all.
std::string abort_reason(const ProcessResult& p) {
    if (p.stopped) return "nvcc was stopped: the run was asked to stop (SIGTERM or SIGINT)";
    if (p.signaled) return "nvcc was killed by signal " + std::to_string(p.signal);
    if (p.exit_code >= 128)
        return "nvcc exited with status " + std::to_string(p.exit_code) +
               " (a process killed by signal " + std::to_string(p.exit_code - 128) + "?)";
    for (const char* sign : {"died due to signal", "Killed signal terminated program",
                             "internal compiler error: Killed", "No space left on device",
                             "Disk quota exceeded", "Cannot allocate memory",
                             "virtual memory exhausted", "std::bad_alloc"})
        if (p.output.find(sign) != std::string::npos)
            return std::string("the compile was cut short (\"") + sign + "\")";
    if (p.output.find_first_not_of(" \t\r\n") == std::string::npos)
        return "nvcc failed with status " + std::to_string(p.exit_code) + " and no message";
    return "";
}

// Compiles into `dir` (exists, empty). Never throws; statuses for compiler failures.
Expected<CompileResult> compile_into(std::string_view source, const CompileOptions& o,
                                     const fs::path& dir) {
    CompileResult r;
    auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - start).count();
    };
    if (o.try_nvrtc && !o.host_library) {
        auto n = nvrtc_compile_cubin(source, o);
        if (n.ok()) {
            if (!write_text(dir / kCubin, n->cubin))
                return make_error(dir.string(), "cannot write the cubin");
            r.status = CompileStatus::kOk;
            r.backend = CompileBackend::kNvrtc;
            r.log = n->log;
            r.kernels = parse_ptxas_report(n->log);
            r.cubin_path = (dir / kCubin).string();
            r.time_compile_ns = elapsed();
            return r;
        }
        r.log = "NVRTC failed, falling back to nvcc:\n" + n.error().to_string() + "\n";
    }
    if (!write_text(dir / "kernels.cu", source))
        return make_error(dir.string(), "cannot write the source");
    std::vector<std::string> argv = {o.nvcc};
    for (auto& f : nvcc_flags(o)) argv.push_back(std::move(f));
    fs::path keep = dir / "keep";
    if (o.host_library) {
        fs::create_directories(keep);
        argv.insert(argv.end(), {"--keep", "--keep-dir", keep.string(), "-o",
                                 (dir / kHostLib).string()});
    } else {
        argv.insert(argv.end(), {"-o", (dir / kCubin).string()});
    }
    argv.push_back((dir / "kernels.cu").string());
    for (const std::string& a : argv)
        r.command += (r.command.empty() ? "" : " ") +
                     (a.find(' ') == std::string::npos ? a : "'" + a + "'");
    auto p = run_process(argv, o.timeout_s, dir.string());
    r.backend = CompileBackend::kNvcc;
    if (!p) {
        r.status = CompileStatus::kToolchainMissing;
        r.log += p.error().to_string();
        return r;
    }
    r.log += p->output;
    r.time_compile_ns = elapsed();
    if (p->timed_out) {
        r.status = CompileStatus::kTimedOut;
        r.log += "\nnvcc timed out after " + std::to_string(o.timeout_s) + " s (killed)";
        return r;
    }
    if (p->exit_code != 0 || p->signaled) {
        const std::string aborted = abort_reason(*p);
        r.status = aborted.empty() ? CompileStatus::kCompileFailed : CompileStatus::kAborted;
        if (!aborted.empty()) r.log += "\n" + aborted + ": not cached, compiled again next time";
        return r;
    }
    if (o.host_library) {  // the cubin of the one device compile, kept by --keep
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(keep, ec))
            if (e.path().extension() == ".cubin") fs::rename(e.path(), dir / kCubin, ec);
        fs::remove_all(keep, ec);
        r.host_library_path = (dir / kHostLib).string();
    }
    if (!fs::exists(dir / kCubin)) {
        r.status = CompileStatus::kCompileFailed;
        r.log += "\nnvcc succeeded but produced no cubin";
        return r;
    }
    r.status = CompileStatus::kOk;
    r.cubin_path = (dir / kCubin).string();
    r.kernels = parse_ptxas_report(r.log);
    return r;
}

}  // namespace

std::string_view to_string(CompileStatus s) {
    switch (s) {
        case CompileStatus::kOk: return "ok";
        case CompileStatus::kCompileFailed: return "compile_failed";
        case CompileStatus::kTimedOut: return "timed_out";
        case CompileStatus::kToolchainMissing: return "toolchain_missing";
        case CompileStatus::kAborted: return "aborted";
    }
    return "?";
}

std::optional<CompileStatus> compile_status_from_string(std::string_view s) {
    for (auto st : {CompileStatus::kOk, CompileStatus::kCompileFailed, CompileStatus::kTimedOut,
                    CompileStatus::kToolchainMissing, CompileStatus::kAborted})
        if (to_string(st) == s) return st;
    return std::nullopt;
}

std::string_view to_string(CompileBackend b) {
    return b == CompileBackend::kNvrtc ? "nvrtc" : "nvcc";
}

CompileOptions default_compile_options(const std::string& arch) {
    CompileOptions o;
    const InstallPaths& paths = install_paths();  // resolved at start-up (common/install_paths.h)
    o.nvcc = paths.nvcc;
    o.arch = arch;
    const std::string& cutlass = paths.cutlass_include;  // "" when none was found
    if (!cutlass.empty()) {
        o.include_dirs.push_back(cutlass);
        o.include_dirs.push_back((fs::path(cutlass).parent_path() / "tools/util/include").string());
        // CUTLASS's examples: the Hopper FMHA (88_hopper_fmha) and the memory-efficient
        // attention (41_fused_multi_head_attention) that attention's `impl cutlass_fmha` and
        // `impl cutlass_mea` instantiate (codegen/lower_attention_fmha.cpp, _mea.cpp)
        o.include_dirs.push_back((fs::path(cutlass).parent_path() / "examples").string());
    }
    o.include_dirs.push_back(paths.data_dir);
    return o;
}

Expected<std::string> nvcc_version(const std::string& nvcc) {
    static std::mutex mu;
    static std::map<std::string, std::string> memo;
    {
        std::lock_guard<std::mutex> lock(mu);
        auto it = memo.find(nvcc);
        if (it != memo.end()) return it->second;
    }
    auto p = run_process({nvcc, "--version"}, 60);
    if (!p) return make_error(nvcc, "nvcc not found: " + p.error().message);
    if (p->exit_code != 0) return make_error(nvcc, "`nvcc --version` failed: " + p->output);
    std::lock_guard<std::mutex> lock(mu);
    memo[nvcc] = p->output;
    return p->output;
}

std::string kforge_headers_digest(const std::string& include_dir) {
    static std::mutex mu;
    static std::map<std::string, std::string> memo;
    std::lock_guard<std::mutex> lock(mu);
    auto it = memo.find(include_dir);
    if (it != memo.end()) return it->second;
    std::vector<fs::path> files;
    std::error_code ec;
    for (const char* sub : {"kernels", "codegen"})
        for (fs::directory_iterator d(fs::path(include_dir) / sub, ec), end; !ec && d != end;
             d.increment(ec)) {
            const std::string ext = d->path().extension().string();
            if (ext == ".cuh" || ext == ".h") files.push_back(d->path());
        }
    std::sort(files.begin(), files.end());
    std::string all;
    for (const fs::path& f : files) {
        std::ifstream in(f, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        all += f.lexically_relative(include_dir).generic_string() + "\n" + text.str() + "\n";
    }
    return memo[include_dir] = files.empty() ? std::string() : sha256_hex(all);
}

std::string compile_key(std::string_view source, const std::string& version,
                        const CompileOptions& o) {
    std::string k = "kforge-compile-v2\n" + version + "\narch=" + o.arch + "\nnvrtc=" +
                    (o.try_nvrtc ? "1" : "0") + "\n";
    for (const auto& f : nvcc_flags(o)) k += f + "\n";
    // kforge's own headers are not versioned like CUTLASS's: a changed kernels/*.cuh must not
    // be served a cubin built from the old one (the generated source alone does not change)
    for (const auto& d : o.include_dirs)
        if (std::string h = kforge_headers_digest(d); !h.empty()) k += "headers " + d + "=" + h + "\n";
    k += "--source--\n";
    k.append(source);
    return sha256_hex(k);
}

Expected<CompileResult> compile_cuda(std::string_view source, const CompileOptions& options) {
    CompileOptions o = options;
    auto version = nvcc_version(o.nvcc);
    if (!version) {
        CompileResult r;
        r.status = CompileStatus::kToolchainMissing;
        r.log = version.error().to_string();
        return r;
    }
    std::string key = compile_key(source, *version, o);
    std::error_code ec;
    // nvcc runs in its own working directory: every path it is given must be absolute, or a
    // relative cache would fail to compile and, worse, cache that failure.
    if (!o.cache_dir.empty()) o.cache_dir = fs::absolute(o.cache_dir, ec).string();
    if (!o.out_dir.empty()) o.out_dir = fs::absolute(o.out_dir, ec).string();
    if (o.cache_dir.empty()) {
        if (o.out_dir.empty()) return make_error("compile", "no cache_dir and no out_dir");
        fs::create_directories(o.out_dir, ec);
        if (ec) return make_error(o.out_dir, "cannot create: " + ec.message());
        auto r = compile_into(source, o, o.out_dir);
        if (r) r->key = key;
        return r;
    }
    const fs::path root = o.cache_dir;
    const fs::path final_dir = root / key.substr(0, 2) / key;
    // One compile of a key at a time in this process: a request for a source that is being
    // compiled (a launch-knob variant precompiled beside its configuration's first compile, one
    // source under two programs) waits for it and takes the entry, rather than run nvcc on the
    // same source again.
    auto inflight = key_lock(key);
    std::lock_guard<std::mutex> one_compile(*inflight);
    auto pin = pin_entry(key);  // before the lookup: a trim must not take it from under us
    if (auto hit = load_cached(final_dir)) {
        touch_entry(final_dir);
        hit->key = key;
        hit->cache_pin = pin;
        return *hit;
    }
    // Present but not usable (damaged, or a result that must not be cached): out of the way, so
    // the fresh compile below can take its place.
    if (fs::exists(final_dir, ec)) discard_entry(root, final_dir);
    fs::path tmp = root / "tmp" / (key + "." + unique_suffix());
    fs::create_directories(tmp, ec);
    if (ec) return make_error(tmp.string(), "cannot create: " + ec.message());
    auto r = compile_into(source, o, tmp);
    if (!r) {
        fs::remove_all(tmp, ec);
        return r;
    }
    bool cacheable = r->status == CompileStatus::kOk || r->status == CompileStatus::kCompileFailed;
    if (!cacheable) {  // load-dependent outcomes are not cached; keep the log, drop the files
        fs::remove_all(tmp, ec);
        r->cubin_path.clear();
        r->host_library_path.clear();
        r->key = key;
        return r;
    }
    std::vector<std::string> files;
    if (r->status == CompileStatus::kOk) {
        files.push_back(kCubin);
        if (!r->host_library_path.empty()) files.push_back(kHostLib);
    }
    if (Status sealed = seal_entry(tmp, result_json(*r), files); !sealed) {
        fs::remove_all(tmp, ec);  // a full disk: nothing half-written goes into the cache
        return sealed.error();
    }
    fs::create_directories(final_dir.parent_path(), ec);
    fs::rename(tmp, final_dir, ec);
    const bool installed = !ec;
    if (!installed) fs::remove_all(tmp, ec);  // another writer won the race: use its copy
    auto stored = load_cached(final_dir);
    if (!stored) return make_error(final_dir.string(), "cache entry unreadable after write");
    stored->cache_hit = false;
    stored->time_compile_ns = r->time_compile_ns;
    stored->backend = r->backend;
    stored->key = key;
    stored->cache_pin = pin;
    if (installed && o.cache_max_bytes > 0) trim_compile_cache(o.cache_dir, o.cache_max_bytes);
    return *stored;
}

std::vector<Expected<CompileResult>> compile_many(const std::vector<std::string>& sources,
                                                  const CompileOptions& o, int workers) {
    std::vector<Expected<CompileResult>> out(sources.size(), make_error("", "not compiled"));
    parallel_for(sources.size(), workers, [&](size_t i) { out[i] = compile_cuda(sources[i], o); });
    return out;
}

}  // namespace kforge::compile
