// The CUDA compile driver: one .cu translation unit -> a cubin for the driver API (and, when the
// source holds kforge's host param builders, a host shared library), with the ptxas resource
// report per kernel. Content-addressed cache so no source is compiled twice; a parallel pool.
//
// How nvcc is driven (one invocation per candidate; measured, see docs in compile.cpp):
//   device only:  nvcc -cubin -o kernels.cubin kernels.cu -Xptxas -v ...
//   with host:    nvcc -shared -Xcompiler -fPIC --keep --keep-dir K -o kernels_host.so kernels.cu
//                 -Xptxas -v ...   and the cubin is taken from K (the device code is compiled
//                 once; a separate -cubin run would compile the CUTLASS device code twice).
// NVRTC is tried first for sources without host code and without CUTLASS (options.try_nvrtc);
// when NVRTC fails, nvcc compiles it and decides.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "compile/ptxas_report.h"

namespace kforge::compile {

// kCompileFailed is the compiler's verdict on the source (cached: compiling again gives it
// again). kTimedOut and kAborted say nothing about the source and are never cached: kAborted is
// a compiler (or one of its children: cicc, ptxas, gcc) killed by a signal, e.g. the OOM killer,
// an exit status of 128 or more, a failure with no message, or a full disk (ENOSPC, quota).
enum class CompileStatus { kOk, kCompileFailed, kTimedOut, kToolchainMissing, kAborted };
std::string_view to_string(CompileStatus s);
std::optional<CompileStatus> compile_status_from_string(std::string_view s);

enum class CompileBackend { kNvcc, kNvrtc };
std::string_view to_string(CompileBackend b);

// The cache size limit new CompileOptions start with: kDefaultCacheMaxBytes unless the program
// set another (cli/ does, from $KFORGE_CACHE_MAX_BYTES, at start-up: the worker processes it
// starts read the same variable). 0: no limit.
inline constexpr int64_t kDefaultCacheMaxBytes = int64_t{10} << 30;  // 10 GiB
int64_t default_cache_max_bytes();
void set_default_cache_max_bytes(int64_t bytes);

struct CompileOptions {
    std::string nvcc = "nvcc";                // path of nvcc
    std::string arch = "sm_90a";              // -gencode=arch=compute_XX,code=sm_XX
    std::vector<std::string> include_dirs;    // -I (CUTLASS, CUTLASS util, kforge root)
    std::vector<std::string> extra_flags;     // appended to nvcc's command line
    bool host_library = false;                // also build the host shared library
    bool try_nvrtc = false;                   // NVRTC first (plain kernels only)
    std::string cache_dir;                    // content-addressed cache; empty: none
    std::string out_dir;                      // without a cache: where outputs go
    int timeout_s = 600;
    // Size limit of the cache in bytes (0: none). After a new entry is written, the least
    // recently used entries are evicted until the cache fits, never one in use (see
    // trim_compile_cache). Defaults to default_cache_max_bytes(); not part of the cache key.
    int64_t cache_max_bytes = default_cache_max_bytes();
};

struct CompileResult {
    CompileStatus status = CompileStatus::kCompileFailed;
    CompileBackend backend = CompileBackend::kNvcc;
    std::string cubin_path;
    std::string host_library_path;  // empty unless options.host_library
    std::vector<KernelResources> kernels;
    std::string log;                // the compiler's output (errors, warnings, ptxas -v)
    std::string command;            // the nvcc command line that ran ("" for NVRTC alone)
    int64_t time_compile_ns = 0;    // of the compile itself (0 on a cache hit)
    bool cache_hit = false;
    std::string key;                // the cache key (sha256 hex)
    // Holds the cache entry in use while any copy of this result lives: trim_compile_cache in
    // this process never evicts it (null without a cache).
    std::shared_ptr<const void> cache_pin;
};

// The default options for kforge's generated sources: include dirs for CUTLASS (headers and
// tools/util) and the kforge source root (codegen/host_abi.h, kernels/*.cuh), -O3, C++17.
CompileOptions default_compile_options(const std::string& arch);

// `nvcc --version` text (memoized per nvcc path); an Error if nvcc cannot be run.
Expected<std::string> nvcc_version(const std::string& nvcc);

// sha256 of the kforge headers generated sources include from `include_dir` (its kernels/*.cuh,
// kernels/*.h, codegen/*.h, names and contents; memoized per process), or "" when it has none.
std::string kforge_headers_digest(const std::string& include_dir);

// The cache key: sha256 of the source, the nvcc version, the command-line flags, the arch and
// the digests of kforge's headers in the include dirs.
std::string compile_key(std::string_view source, const std::string& nvcc_version_text,
                        const CompileOptions& options);

// Compiles `source`. Compiler errors and timeouts are statuses with the log attached; an
// Error only for an unusable setup (e.g. no cache_dir and no out_dir, unwritable directory).
// A cache entry holds the sha256 of each of its files and of its result.json; an entry that
// fails the check (truncated, corrupted, half written) is moved out of the way and compiled
// again, so no damaged cubin or host library is ever returned (and dlopen()ed).
Expected<CompileResult> compile_cuda(std::string_view source, const CompileOptions& options);

// The compile cache's contents after a trim.
struct CacheTrimReport {
    int64_t entries = 0;          // entries kept
    int64_t bytes = 0;            // their size (and of unfinished compiles under tmp/)
    int64_t evicted_entries = 0;
    int64_t evicted_bytes = 0;
};

// Evicts least recently used entries (a hit or a write is a use) of the cache in `cache_dir`
// until it holds at most `max_bytes` (0: evicts nothing). Never evicted: an entry pinned by a
// live CompileResult of this process, and one used in the last `min_idle_s` seconds (another
// process may be loading it). An entry goes by an atomic rename out of the cache, so a
// concurrent reader finds it whole or not at all. Unfinished compiles left under tmp/ by a
// killed process are removed after a day. One trim at a time per cache (a lock file).
CacheTrimReport trim_compile_cache(const std::string& cache_dir, int64_t max_bytes,
                                   int64_t min_idle_s = 600);

// Compiles many sources with `workers` parallel jobs (0: one per core). Results in order.
std::vector<Expected<CompileResult>> compile_many(const std::vector<std::string>& sources,
                                                  const CompileOptions& options, int workers = 0);

}  // namespace kforge::compile
