// Small helpers every subcommand shares (declared in cli/commands.h).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"

namespace kforge::cli {

std::string kforge_executable() {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "kforge";
}

bool read_file(const std::string& path, std::string& out) {
    std::ifstream in(path);
    if (!in) return false;
    std::stringstream s;
    s << in.rdbuf();
    out = s.str();
    return true;
}

std::string default_compile_cache_dir() {
    namespace fs = std::filesystem;
    if (const char* e = std::getenv("KFORGE_CACHE_DIR"); e && *e) return e;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
        return (fs::path(x) / "kforge" / "cubin").string();
    if (const char* h = std::getenv("HOME"); h && *h)
        return (fs::path(h) / ".cache" / "kforge" / "cubin").string();
    return (fs::temp_directory_path() / "kforge-cubin-cache").string();
}

driver::PythonOptions python_options() {
    driver::PythonOptions o;
    if (const char* p = std::getenv("KFORGE_PYTHON"); p && *p) o.python = p;
    if (const char* p = std::getenv("PYTHONPATH"); p && *p) o.pythonpath = p;
    return o;
}

}  // namespace kforge::cli
