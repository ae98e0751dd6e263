// Running kforge's Python side (driver/python_tool.h).
#include "driver/python_tool.h"

#include <unistd.h>

#include <cstdio>

#include "common/process.h"

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
    std::vector<std::string> argv{python, "-m", module};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string pythonpath = options.source_dir + "/python";
    if (!options.pythonpath.empty()) pythonpath += ":" + options.pythonpath;
    RunOptions o;
    o.env = {{"PYTHONPATH", pythonpath}};
    o.capture = capture_stdout ? Capture::kStdout : Capture::kNone;
    std::fflush(stdout);  // ours before the tool's
    auto p = run_process(argv, o);
    if (!p) return make_error("python", p.error().to_string());
    PythonRun run;
    run.stdout_text = std::move(p->output);
    run.exit_code = p->exit_code >= 0 ? p->exit_code : 128 + p->signal;
    return run;
}

Expected<PythonRun> run_python_tool(const PythonOptions& options, const std::string& module,
                                    const std::vector<std::string>& args, bool capture_stdout) {
    auto python = find_python(options);
    if (!python) return python.error();
    auto run = run_python_module(options, *python, module, args, capture_stdout);
    if (!run) return make_error("", "could not run " + *python + " (set KFORGE_PYTHON): " +
                                        run.error().to_string());
    if (run->exit_code == 127) return make_error("", "could not run " + *python + " (set KFORGE_PYTHON)");
    return run;
}

}  // namespace kforge::driver
