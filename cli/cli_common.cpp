// Small helpers every subcommand shares (declared in cli/commands.h).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
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

std::string runtime_library(const std::string& given) {
    namespace fs = std::filesystem;
    if (!given.empty()) return given;
    if (const char* env = std::getenv("KFORGE_RUNTIME_LIB"); env && *env) return env;
    std::error_code ec;
    fs::path bin = fs::path(kforge_executable()).parent_path();
    for (const fs::path& p : {bin / ".." / "runtime" / "libkforge_runtime.so",
                              bin / ".." / "lib" / "libkforge_runtime.so",
                              bin / "libkforge_runtime.so"})
        if (fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
    return "";
}

driver::PythonOptions python_options() {
    driver::PythonOptions o;
    if (const char* p = std::getenv("KFORGE_PYTHON"); p && *p) o.python = p;
    if (const char* p = std::getenv("PYTHONPATH"); p && *p) o.pythonpath = p;
    return o;
}

namespace {

struct JsonMode {
    bool on = false;
    bool printed = false;
    int real_stdout = -1;  // the terminal or pipe stdout was before the capture
    int capture = -1;      // a memory file stdout writes into meanwhile
    std::string errors;
};

JsonMode& jm() {
    static JsonMode m;
    return m;
}

void write_all(int fd, const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n <= 0) return;
        done += static_cast<size_t>(n);
    }
}

}  // namespace

bool json_mode() { return jm().on; }

void begin_json_mode() {
    JsonMode& m = jm();
    if (m.on) return;
    std::fflush(stdout);
    m.capture = memfd_create("kforge-stdout", 0);
    m.real_stdout = m.capture >= 0 ? dup(STDOUT_FILENO) : -1;
    if (m.real_stdout < 0 || dup2(m.capture, STDOUT_FILENO) < 0) {
        // no capture: stdout stays as it is (the JSON still comes last)
        if (m.capture >= 0) close(m.capture);
        if (m.real_stdout >= 0) close(m.real_stdout);
        m.capture = m.real_stdout = -1;
    }
    m.on = true;
}

std::string end_json_mode() {
    JsonMode& m = jm();
    std::string text;
    if (!m.on) return text;
    std::fflush(stdout);
    if (m.capture >= 0) {
        dup2(m.real_stdout, STDOUT_FILENO);
        close(m.real_stdout);
        m.real_stdout = -1;
        char buf[4096];
        off_t at = 0;
        for (ssize_t n; (n = pread(m.capture, buf, sizeof buf, at)) > 0; at += n)
            text.append(buf, static_cast<size_t>(n));
        close(m.capture);
        m.capture = -1;
    }
    m.on = false;
    return text;
}

bool json_printed() { return jm().printed; }

void print_json(const nlohmann::ordered_json& j) {
    JsonMode& m = jm();
    const std::string text =
        j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (m.on && m.real_stdout >= 0) {
        write_all(m.real_stdout, text);
    } else {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
    }
    m.printed = true;
}

void print_json(const nlohmann::json& j) { print_json(nlohmann::ordered_json(j)); }

void eprintf(const char* format, ...) {
    // any length: a compiler's log runs past any fixed buffer (the error lines last)
    va_list ap, again;
    va_start(ap, format);
    va_copy(again, ap);
    const int n = std::vsnprintf(nullptr, 0, format, ap);
    va_end(ap);
    std::string buf(n > 0 ? static_cast<size_t>(n) : 0, '\0');
    if (n > 0) std::vsnprintf(buf.data(), buf.size() + 1, format, again);
    va_end(again);
    std::fputs(buf.c_str(), stderr);
    std::string& e = jm().errors;
    e += buf;
    if (e.size() > 65536) e.erase(0, e.size() - 65536);
}

const std::string& error_lines() { return jm().errors; }

std::string& invoked_as() {
    static std::string name = "kforge";
    return name;
}

}  // namespace kforge::cli
