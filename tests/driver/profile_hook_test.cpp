// driver/profile_hook.h on the simulated device, without ncu or the binary: the hook diagnoses a
// candidate of a started search through the ptxas + SOL fallback and says why in its log; a
// program of a problem no state owns gets no diagnosis.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "device/device.h"
#include "driver/profile_hook.h"
#include "driver/search_session.h"
#include "eval/evaluator.h"
#include "problem/spec.h"

namespace kforge::driver {
namespace {

namespace fs = std::filesystem;

const char* kStart =
    "program p for \"bias_gelu_mul_f32\"\nkernel k0 = map(X[R,C]) block 64 vec 1 items 1\n"
    "    { add b[C]; gelu erf; mul G[R,C]; store Y[R,C] }\n";

TEST(ProfileHook, SimulatedDeviceFallsBackToPtxasAndSol) {
    std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/problems/bias_gelu_mul_f32.json");
    std::stringstream text;
    text << in.rdbuf();
    auto j = nlohmann::json::parse(text.str());
    j["dims"] = {{"R", 256}, {"C", 1024}};
    auto problem = parse_problem(j.dump(), "bias_gelu_mul_f32");
    ASSERT_TRUE(problem) << problem.error().to_string();
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device);
    eval::InProcessEvaluator evaluator(**device);
    auto store = open_store(":memory:");
    ASSERT_TRUE(store);
    auto state = search::start_search(evaluator, *store, *problem, kStart, {});
    ASSERT_TRUE(state) << state.error().to_string();

    const fs::path work = fs::temp_directory_path() / ("kforge_profile_hook_" + std::to_string(::getpid()));
    ProfileHookOptions o;
    o.use_ncu = false;
    o.work_dir = work.string();
    o.compile_cache_dir = (work / "cache").string();
    std::vector<std::string> log;
    o.log = [&log](const std::string& line) { log.push_back(line); };
    const search::SearchState* st = &*state;
    auto hook = make_profile_hook(
        [st](const std::string& name) { return name == st->problem.name ? st : nullptr; }, o);

    Diagnosis d = hook(kStart);
    ASSERT_FALSE(d.kernels.empty());
    EXPECT_FALSE(d.kernels.front().from_profile);
    ASSERT_EQ(log.size(), 1u);
    EXPECT_NE(log[0].find("[ptxas + SOL fallback: simulated device: no profiler"),
              std::string::npos) << log[0];

    // a program over a problem no state owns: nothing to place it in
    Diagnosis none = hook("program p for \"other\"\nkernel k0 = map(X[R,C]) block 64 vec 1 "
                          "items 1\n    { store Y[R,C] }\n");
    EXPECT_TRUE(none.empty());
    fs::remove_all(work);
}

// The profiling hook's folder (optimize and suite pass work_dir_for's) is made by mkdtemp: a
// fresh unpredictable name each time, mode 0700, not the fixed kforge-<command>-<pid> another
// user could pre-create (issue 31, item 9).
TEST(ProfileHook, WorkFolderIsFreshAndPrivate) {
    const std::string a = work_dir_for("optimize"), b = work_dir_for("optimize");
    ASSERT_FALSE(a.empty());
    ASSERT_FALSE(b.empty());
    EXPECT_NE(a, b);
    for (const std::string& d : {a, b}) {
        const std::string name = fs::path(d).filename().string();
        EXPECT_EQ(name.rfind("kforge-optimize-", 0), 0u) << name;
        EXPECT_NE(name, "kforge-optimize-" + std::to_string(::getpid()));
        struct stat st {};
        ASSERT_EQ(::lstat(d.c_str(), &st), 0) << d;
        EXPECT_TRUE(S_ISDIR(st.st_mode)) << d;
        EXPECT_EQ(st.st_mode & 0777, 0700u) << d;
        EXPECT_EQ(st.st_uid, ::getuid());
        EXPECT_TRUE(fs::is_empty(d));
        fs::remove_all(d);
    }
}

}  // namespace
}  // namespace kforge::driver
