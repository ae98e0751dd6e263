// driver/python_tool.h with stand-in interpreters: a $KFORGE_PYTHON path that is no executable
// and a source folder without .venv give the clear errors; a shell script standing in for
// Python sees `-m MODULE ARGS` and PYTHONPATH with the package folder first; an interpreter
// that cannot be run says to set KFORGE_PYTHON.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "driver/python_tool.h"

namespace kforge::driver {
namespace {

namespace fs = std::filesystem;

class PythonTool : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("kforge_python_tool_" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string script(const std::string& body) {
        const std::string path = (dir_ / "fake-python").string();
        std::ofstream(path) << "#!/bin/sh\n" << body;
        ::chmod(path.c_str(), 0700);
        return path;
    }
    fs::path dir_;
};

TEST_F(PythonTool, PythonPathThatIsNoExecutableIsAClearError) {
    PythonOptions o;
    o.python = (dir_ / "no-such-python").string();
    auto p = find_python(o);
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().where, "python");
    EXPECT_EQ(p.error().message, "KFORGE_PYTHON=" + o.python + " is not an executable file");
}

TEST_F(PythonTool, NoVenvAndNothingSetNamesBothPlaces) {
    PythonOptions o;
    o.source_dir = dir_.string();
    auto p = find_python(o);
    ASSERT_FALSE(p);
    EXPECT_NE(p.error().message.find(dir_.string() + "/.venv/bin/python does not exist"),
              std::string::npos) << p.error().message;
    EXPECT_NE(p.error().message.find("KFORGE_PYTHON is not set"), std::string::npos);
}

TEST_F(PythonTool, ABareNameIsLeftToPath) {
    PythonOptions o;
    o.python = "python3";
    auto p = find_python(o);
    ASSERT_TRUE(p);
    EXPECT_EQ(*p, "python3");
}

TEST_F(PythonTool, RunsTheModuleWithThePackageOnPythonPath) {
    PythonOptions o;
    o.source_dir = dir_.string();
    o.pythonpath = "/elsewhere";
    o.python = script("echo \"$PYTHONPATH|$*\"\nexit 5\n");
    auto run = run_python_tool(o, "kforge_py.baseline", {"--iters", "60"}, true);
    ASSERT_TRUE(run) << run.error().to_string();
    EXPECT_EQ(run->exit_code, 5);
    EXPECT_EQ(run->stdout_text,
              dir_.string() + "/python:/elsewhere|-m kforge_py.baseline --iters 60\n");
}

TEST_F(PythonTool, AnInterpreterThatCannotRunSaysSetKforgePython) {
    PythonOptions o;
    o.python = "kforge-no-such-python-interpreter";
    auto run = run_python_tool(o, "kforge_py.baseline", {}, true);
    ASSERT_FALSE(run);
    const std::string why = run.error().to_string();
    EXPECT_EQ(why.rfind("could not run kforge-no-such-python-interpreter (set KFORGE_PYTHON): ", 0),
              0u) << why;
    EXPECT_NE(why.find("No such file"), std::string::npos) << why;  // the exec's own reason
}

}  // namespace
}  // namespace kforge::driver
