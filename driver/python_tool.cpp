// Running kforge's Python side (driver/python_tool.h).
#include "driver/python_tool.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kforge::driver {

Expected<std::string> find_python(const PythonOptions& options) {
    const std::string venv = options.source_dir + "/.venv/bin/python";
    if (!options.python.empty()) {
        const std::string& p = options.python;
        if (p.find('/') == std::string::npos) return p;  // a name, looked up in PATH by exec
        if (::access(p.c_str(), X_OK) == 0) return p;
        return make_error("python", "KFORGE_PYTHON=" + p + " is not an executable file");
    }
    if (!options.beside_python.empty() && ::access(options.beside_python.c_str(), X_OK) == 0)
        return options.beside_python;
    if (::access(venv.c_str(), X_OK) == 0) return venv;
    return make_error("python", "no Python found: " + venv +
                                    " does not exist (run scripts/setup.sh) and KFORGE_PYTHON "
                                    "is not set (e.g. KFORGE_PYTHON=python3 where torch is "
                                    "installed system-wide)");
}

Expected<PythonRun> run_python_module(const PythonOptions& options, const std::string& python,
                                      const std::string& module,
                                      const std::vector<std::string>& args, bool capture_stdout) {
    std::vector<std::string> argv_s{python, "-m", module};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& s : argv_s) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::string pythonpath = options.source_dir + "/python";
    if (!options.pythonpath.empty()) pythonpath += ":" + options.pythonpath;

    int fds[2] = {-1, -1};
    if (capture_stdout && ::pipe(fds) != 0)
        return make_error("python", std::string("pipe: ") + std::strerror(errno));
    std::fflush(stdout);
    pid_t pid = ::fork();
    if (pid < 0) return make_error("python", std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        if (capture_stdout) {
            ::dup2(fds[1], STDOUT_FILENO);
            ::close(fds[0]);
            ::close(fds[1]);
        }
        ::setenv("PYTHONPATH", pythonpath.c_str(), 1);
        ::execvp(argv[0], argv.data());
        std::fprintf(stderr, "kforge: cannot run %s: %s\n", argv[0], std::strerror(errno));
        ::_exit(127);
    }
    PythonRun run;
    if (capture_stdout) {
        ::close(fds[1]);
        char buf[65536];
        ssize_t n;
        while ((n = ::read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
            if (n > 0) run.stdout_text.append(buf, static_cast<size_t>(n));
        }
        ::close(fds[0]);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return run;
}

Expected<PythonRun> run_python_tool(const PythonOptions& options, const std::string& module,
                                    const std::vector<std::string>& args, bool capture_stdout) {
    auto python = find_python(options);
    if (!python) return python.error();
    auto run = run_python_module(options, *python, module, args, capture_stdout);
    if (!run) return run.error();
    if (run->exit_code == 127) return make_error("", "could not run " + *python + " (set KFORGE_PYTHON)");
    return run;
}

}  // namespace kforge::driver
