// Run-time paths of kforge's data (common/install_paths.h).
#include "common/install_paths.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <optional>
#include <vector>

namespace kforge {
namespace {

namespace fs = std::filesystem;

bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

bool is_executable(const fs::path& p) { return is_file(p) && ::access(p.c_str(), X_OK) == 0; }

bool holds_kforge_data(const fs::path& dir) { return is_file(dir / "kernels" / "cstdint.cuh"); }

// The CUTLASS include folder in or under `dir`: dir itself, dir/include (a CUTLASS checkout),
// dir/source/include (the cutlass_library package folder).
std::optional<fs::path> cutlass_include_in(const fs::path& dir) {
    for (const fs::path& d : {dir, dir / "include", dir / "source" / "include"})
        if (is_file(d / "cutlass" / "cutlass.h")) return d.lexically_normal();
    return std::nullopt;
}

// cutlass_library/source/include of a Python environment rooted at `prefix`
// (prefix/lib/python3.*/site-packages), newest Python first.
std::optional<fs::path> cutlass_in_python_env(const fs::path& prefix) {
    std::vector<fs::path> libs;
    std::error_code ec;
    for (fs::directory_iterator d(prefix / "lib", ec), end; !ec && d != end; d.increment(ec))
        if (d->path().filename().string().rfind("python3", 0) == 0) libs.push_back(d->path());
    std::sort(libs.rbegin(), libs.rend());
    for (const fs::path& lib : libs)
        for (const char* site : {"site-packages", "dist-packages"})
            if (auto inc = cutlass_include_in(lib / site / "cutlass_library"))
                return inc;
    return std::nullopt;
}

}  // namespace

std::string self_executable() {
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

Expected<InstallPaths> resolve_install_paths(const PathOverrides& overrides,
                                             const std::string& exe) {
    InstallPaths p;
    p.exe = exe;
    const fs::path exe_dir = exe.empty() ? fs::path() : fs::path(exe).parent_path();
    const fs::path prefix = exe_dir.empty() ? fs::path() : exe_dir.parent_path();

    if (!overrides.home.empty()) {
        if (!holds_kforge_data(overrides.home))
            return make_error("KFORGE_HOME", overrides.home + " holds no kforge data (expected "
                              "kernels/cstdint.cuh there: an installed share/kforge folder or a "
                              "kforge source tree)");
        p.data_dir = fs::path(overrides.home).lexically_normal().string();
        p.data_from = "KFORGE_HOME";
    } else if (!prefix.empty() && holds_kforge_data(prefix / "share" / "kforge")) {
        p.data_dir = (prefix / "share" / "kforge").string();
        p.data_from = "installed";
    } else {
        p.data_dir = KFORGE_SOURCE_DIR;
        p.data_from = "source tree";
    }
    p.python_dir = (fs::path(p.data_dir) / "python").string();

    if (!overrides.cutlass_dir.empty()) {
        auto inc = cutlass_include_in(overrides.cutlass_dir);
        if (!inc)
            return make_error("KFORGE_CUTLASS_DIR", overrides.cutlass_dir + " holds no CUTLASS "
                              "headers (expected cutlass/cutlass.h in it, in include/ or in "
                              "source/include/)");
        p.cutlass_include = inc->string();
        p.cutlass_from = "KFORGE_CUTLASS_DIR";
    } else if (auto env = prefix.empty() ? std::nullopt : cutlass_in_python_env(prefix)) {
        p.cutlass_include = env->string();
        p.cutlass_from = "python package";
    } else if (auto venv = cutlass_in_python_env(fs::path(p.data_dir) / ".venv")) {
        p.cutlass_include = venv->string();
        p.cutlass_from = "python package";
    } else if (const std::string configured = KFORGE_CUTLASS_INCLUDE;
               !configured.empty() && cutlass_include_in(configured)) {
        p.cutlass_include = configured;
        p.cutlass_from = "configured";
    } else {
        p.cutlass_from = "none";
    }

    if (!exe_dir.empty() && is_executable(exe_dir / "python3"))
        p.python = (exe_dir / "python3").string();

    if (is_executable(KFORGE_NVCC)) p.nvcc = KFORGE_NVCC;
    else if (is_executable("/usr/local/cuda/bin/nvcc")) p.nvcc = "/usr/local/cuda/bin/nvcc";
    else p.nvcc = "nvcc";
    return p;
}

namespace {
std::mutex& paths_mutex() {
    static std::mutex mu;
    return mu;
}
std::optional<InstallPaths>& paths_slot() {
    static std::optional<InstallPaths> slot;
    return slot;
}
}  // namespace

const InstallPaths& install_paths() {
    std::lock_guard<std::mutex> lock(paths_mutex());
    auto& slot = paths_slot();
    if (!slot) {
        auto r = resolve_install_paths({}, self_executable());  // no overrides: cannot fail
        slot = r ? *r : InstallPaths{};
    }
    return *slot;
}

void set_install_paths(InstallPaths paths) {
    std::lock_guard<std::mutex> lock(paths_mutex());
    paths_slot() = std::move(paths);
}

std::string describe(const InstallPaths& p) {
    return "executable: " + p.exe + "\n" +
           "data: " + p.data_dir + " (" + p.data_from + ")\n" +
           "python package: " + p.python_dir + "/kforge_py\n" +
           "cutlass: " + (p.cutlass_include.empty() ? "not found" : p.cutlass_include) + " (" +
           p.cutlass_from + ")\n" +
           "python: " + (p.python.empty() ? "none beside the binary" : p.python) + "\n" +
           "nvcc: " + p.nvcc + "\n";
}

}  // namespace kforge
