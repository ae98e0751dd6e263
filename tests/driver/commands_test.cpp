// The command-level driver calls without the binary, on the simulated device: run_suite over a
// folder of two tiny problems (their start programs beside them), run_optimize on one of them,
// their user errors, and run_baselines with a stand-in for the Python timer into a temporary
// store.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "driver/baseline.h"
#include "driver/optimize.h"
#include "driver/suite.h"
#include "report/baseline.h"
#include "store/store.h"

namespace kforge::driver {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Case {
    std::string problem;
    std::string start;
};

const Case kCases[] = {
    {"bias_gelu_mul_f32",
     "program p for \"bias_gelu_mul_f32\"\nkernel k0 = map(X[R,C]) block 64 vec 1 items 1\n"
     "    { add b[C]; gelu erf; mul G[R,C]; store Y[R,C] }\n"},
    {"layer_norm_f32",
     "program p for \"layer_norm_f32\"\nkernel k0 = rowwise layer_norm(X[R,C], w[C], b[C]) "
     "rows_per_block 1 threads 512 vec 1 passes 2 split 1\n    { store Y[R,C] }\n"},
};

// What the console received.
struct Captured {
    std::string printed;
    std::vector<std::string> notes;
    Console console() {
        return {[this](const std::string& t) { printed += t; },
                [this](const std::string& l) { notes.push_back(l); }};
    }
};

class DriverCommands : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("kforge_driver_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "tiny");
        // the suite problems at a small shape (R=256, C=1024), so the fp64 reference is cheap
        for (const Case& c : kCases) {
            std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/problems/" + c.problem + ".json");
            std::stringstream text;
            text << in.rdbuf();
            auto j = json::parse(text.str());
            j["dims"] = {{"R", 256}, {"C", 1024}};
            std::ofstream(dir_ / "tiny" / (c.problem + ".json")) << j.dump(2);
            std::ofstream(dir_ / "tiny" / (c.problem + ".kf")) << c.start;
        }
    }
    void TearDown() override {
        if (!HasFailure()) fs::remove_all(dir_);
    }
    SearchSessionOptions session() const {
        SearchSessionOptions s;
        s.backend.device = DeviceChoice::kSim;
        s.db = (dir_ / "db" / "kforge.db").string();
        return s;
    }
    search::SearchOptions search() const {
        search::SearchOptions o;
        o.stop.max_rounds = 1;
        o.proposals_per_round = 4;
        o.proposers = {"parameter"};
        return o;
    }
    fs::path dir_;
};

TEST_F(DriverCommands, SuiteSearchesEveryProblemAndWritesTheirOutputs) {
    SuiteRequest r;
    r.dir = (dir_ / "tiny").string();
    r.out = (dir_ / "out").string();
    r.session = session();
    r.search = search();
    r.profile.top = 0;
    Captured c;
    Outcome o = run_suite(r, c.console());
    EXPECT_EQ(o.exit, Exit::kOk) << o.message << "\n" << c.printed;
    EXPECT_NE(c.printed.find("suite tiny: 2 problems on "), std::string::npos) << c.printed;
    EXPECT_NE(c.printed.find("(simulated)"), std::string::npos);
    for (const Case& k : kCases)
        EXPECT_TRUE(fs::exists(dir_ / "out" / k.problem / "best.kf")) << k.problem;
    EXPECT_TRUE(fs::exists(dir_ / "db" / "kforge.db"));  // the store's folder was created
}

TEST_F(DriverCommands, ASuiteWithoutAPassingCandidateSaysWhichProblems) {
    SuiteRequest r;
    r.dir = (dir_ / "tiny").string();
    r.session = session();
    r.search = search();
    r.search.budget.wall_s = 0.05;  // the start phase times the starts quick: no full tier
    r.profile.top = 0;
    Captured c;
    Outcome o = run_suite(r, c.console());
    EXPECT_EQ(o.exit, Exit::kFailure) << c.printed;
    EXPECT_EQ(o.message.rfind("no candidate passed the full tier for: ", 0), 0u) << o.message;
    for (const Case& k : kCases) EXPECT_NE(o.message.find(k.problem), std::string::npos) << k.problem;
}

TEST_F(DriverCommands, SuiteOfAFileIsTheUsersError) {
    SuiteRequest r;
    r.dir = (dir_ / "tiny" / "layer_norm_f32.json").string();
    r.session = session();
    r.search = search();
    Captured c;
    Outcome o = run_suite(r, c.console());
    EXPECT_EQ(o.exit, Exit::kUserError);
    EXPECT_EQ(o.message, r.dir + " is not a folder");
}

TEST_F(DriverCommands, OptimizeFindsAPassingCandidate) {
    OptimizeRequest r;
    r.spec = (dir_ / "tiny" / "layer_norm_f32.json").string();
    r.out = (dir_ / "out").string();
    r.session = session();
    r.search = search();
    r.profile.top = 0;
    Captured c;
    Outcome o = run_optimize(r, c.console());
    EXPECT_EQ(o.exit, Exit::kOk) << o.message << "\n" << c.printed;
    EXPECT_EQ(c.printed.rfind("run 1 on ", 0), 0u) << c.printed;
    EXPECT_TRUE(fs::exists(dir_ / "out" / "best.kf"));
}

TEST_F(DriverCommands, OptimizeWithAnUnknownProposerIsTheUsersError) {
    OptimizeRequest r;
    r.spec = (dir_ / "tiny" / "layer_norm_f32.json").string();
    r.session = session();
    r.search = search();
    r.search.proposers = {"parameter", "oracle"};
    Captured c;
    Outcome o = run_optimize(r, c.console());
    EXPECT_EQ(o.exit, Exit::kUserError);
    EXPECT_NE(o.message.find("unknown proposer 'oracle'"), std::string::npos) << o.message;
    EXPECT_FALSE(fs::exists(dir_ / "db"));  // nothing opened
}

TEST_F(DriverCommands, AnLlmFactoryErrorIsTheUsersError) {
    OptimizeRequest r;
    r.spec = (dir_ / "tiny" / "layer_norm_f32.json").string();
    r.session = session();
    r.session.make_llm = [](Store&) -> Expected<std::unique_ptr<llm::LlmProposer>> {
        return make_error("api_key_env", "$KEY is not set");
    };
    r.search = search();
    Captured c;
    Outcome o = run_optimize(r, c.console());
    EXPECT_EQ(o.exit, Exit::kUserError);
    EXPECT_EQ(o.message, "api_key_env: $KEY is not set");
}

TEST_F(DriverCommands, BaselinesFromAStandInTimerAreStored) {
    const std::string spec = (dir_ / "tiny" / "layer_norm_f32.json").string();
    json samples = json::array();
    for (int i = 0; i < 60; ++i) samples.push_back(10000 + i);
    json doc{{"device", {{"name", "NVIDIA H200"}, {"uuid", "GPU-0000"}}},
             {"torch", "2.15.0"},
             {"results", {{{"problem", "layer_norm_f32"},
                           {"modes", {{"eager", {{"status", "ok"}, {"samples_ns", samples}}}}}}}}};
    std::ofstream(dir_ / "doc.json") << doc.dump();
    const std::string python = (dir_ / "fake-python").string();
    std::ofstream(python) << "#!/bin/sh\ncat " << (dir_ / "doc.json").string() << "\n";
    ::chmod(python.c_str(), 0700);

    BaselineRequest r;
    r.specs = {spec};
    r.python.python = python;
    r.db = (dir_ / "db" / "kforge.db").string();
    BaselineResult b = run_baselines(r);
    ASSERT_EQ(b.outcome.exit, Exit::kOk) << b.outcome.message;
    const json& stored = b.doc["results"][0]["stored"];
    EXPECT_EQ(stored["db"], r.db);
    auto store = open_store(r.db);
    ASSERT_TRUE(store);
    auto ev = store->get_evaluation(stored["evaluation_id"].get<int64_t>());
    ASSERT_TRUE(ev) << ev.error().to_string();
    EXPECT_EQ(ev->shapes_key, "C=1024,R=256");
    ASSERT_EQ(ev->measurements.size(), 60u);
    EXPECT_EQ(ev->measurements[0].label, report::baseline_label("eager"));
}

TEST_F(DriverCommands, BaselinesWithoutPythonAreTheEnvironmentsFailure) {
    BaselineRequest r;
    r.specs = {(dir_ / "tiny" / "layer_norm_f32.json").string()};
    r.python.python = (dir_ / "no-python").string();
    r.db = (dir_ / "db" / "kforge.db").string();
    BaselineResult b = run_baselines(r);
    EXPECT_EQ(b.outcome.exit, Exit::kEnvironment);
    EXPECT_NE(b.outcome.message.find("is not an executable file"), std::string::npos);
    EXPECT_TRUE(b.doc.is_null());
}

}  // namespace
}  // namespace kforge::driver
