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
#include <string>
#include <optional>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "compile/ptxas_report.h"

namespace kforge::compile {

enum class CompileStatus { kOk, kCompileFailed, kTimedOut, kToolchainMissing };
std::string_view to_string(CompileStatus s);
std::optional<CompileStatus> compile_status_from_string(std::string_view s);

enum class CompileBackend { kNvcc, kNvrtc };
std::string_view to_string(CompileBackend b);

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
};

struct CompileResult {
    CompileStatus status = CompileStatus::kCompileFailed;
    CompileBackend backend = CompileBackend::kNvcc;
    std::string cubin_path;
    std::string host_library_path;  // empty unless options.host_library
    std::vector<KernelResources> kernels;
    std::string log;                // the compiler's output (errors, warnings, ptxas -v)
    int64_t time_compile_ns = 0;    // of the compile itself (0 on a cache hit)
    bool cache_hit = false;
    std::string key;                // the cache key (sha256 hex)
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
Expected<CompileResult> compile_cuda(std::string_view source, const CompileOptions& options);

// Compiles many sources with `workers` parallel jobs (0: one per core). Results in order.
std::vector<Expected<CompileResult>> compile_many(const std::vector<std::string>& sources,
                                                  const CompileOptions& options, int workers = 0);

}  // namespace kforge::compile
