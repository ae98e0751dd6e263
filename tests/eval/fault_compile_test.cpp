// Every fault-suite kernel (tests/faults/*.cu named by scenarios.json) compiles with nvcc for
// sm_90a into a cubin that exports fault_kernel, so the GPU run (run_faults.sh) cannot fail on a
// compile error. Needs nvcc only, no GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/process.h"

namespace kforge {
namespace {

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(FaultKernels, EveryScenarioSourceCompilesForSm90a) {
    std::string faults = std::string(KFORGE_SOURCE_DIR) + "/tests/faults/";
    auto manifest = nlohmann::json::parse(read_bytes(faults + "scenarios.json"));
    std::set<std::string> sources;
    for (const auto& s : manifest["scenarios"]) sources.insert(s["source"].get<std::string>());
    ASSERT_EQ(sources.size(), 8u);
    char dir[] = "/tmp/kforge-fault-cubins-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    for (const std::string& source : sources) {
        std::string out = std::string(dir) + "/" + source + ".cubin";
        auto r = run_process({KFORGE_NVCC, "-cubin", "-arch=sm_90a", "-O3", "-o", out,
                                       faults + source}, 300);
        ASSERT_TRUE(r.ok()) << source << ": " << r.error().to_string();
        EXPECT_EQ(r->exit_code, 0) << source << ":\n" << r->output;
        std::string cubin = read_bytes(out);
        EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF") << source;
        EXPECT_NE(cubin.find("fault_kernel"), std::string::npos) << source;
        unlink(out.c_str());
    }
    rmdir(dir);
}

}  // namespace
}  // namespace kforge
