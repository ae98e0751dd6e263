// Launch plan JSON: round trip, and malformed plans give user errors naming the JSON path.
#include <gtest/gtest.h>

#include "codegen/launch_plan.h"
#include "codegen/memory_plan.h"

namespace kforge::codegen {
namespace {

LaunchPlan sample_plan() {
    LaunchPlan p;
    p.program_hash = "abc123";
    p.host_library = "kernels_host.so";
    p.buffers.push_back(BufferDecl{"T", DType::kBF16, {128, 64}, false, false});
    p.buffers.push_back(BufferDecl{"k1_partials", DType::kF32, {4096}, true, true});
    KernelLaunch g;
    g.name = "k0";
    g.symbol = "kforge_k0";
    g.cluster = {2, 1, 1};
    g.params = {KernelParam{ParamKind::kParamBlob, "", 0, 0.0}};
    g.param_builder = "kforge_build_k0";
    g.builder_tensors = {"X", "W", "T"};
    KernelLaunch r;
    r.name = "k1";
    r.symbol = "kforge_k1";
    r.grid = {128, 1, 1};
    r.block = {256, 1, 1};
    r.smem_bytes = 4096;
    r.params = {KernelParam{ParamKind::kTensor, "T", 0, 0.0},
                KernelParam{ParamKind::kWorkspace, "k1_partials", 0, 0.0},
                KernelParam{ParamKind::kInt64, "", 4096, 0.0},
                KernelParam{ParamKind::kInt32, "", -3, 0.0},
                KernelParam{ParamKind::kFloat32, "", 0, 0.25}};
    p.kernels = {g, r};
    return p;
}

TEST(LaunchPlan, JsonRoundTripIsIdentity) {
    LaunchPlan p = sample_plan();
    assign_arena_offsets(p);  // a plan without offsets is placed on reading (memory_plan_test)
    auto j = to_json(p);
    auto back = launch_plan_from_json(nlohmann::json::parse(j.dump()));
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(to_json(*back).dump(), j.dump());
    EXPECT_EQ(back->kernels[1].params[4].float_value, 0.25);
    EXPECT_EQ(back->kernels[0].builder_tensors, p.kernels[0].builder_tensors);
    EXPECT_TRUE(back->buffers[1].zero_init);
}

TEST(LaunchPlan, ParamKindNamesRoundTrip) {
    for (ParamKind k : {ParamKind::kTensor, ParamKind::kInt64, ParamKind::kInt32,
                        ParamKind::kFloat32, ParamKind::kWorkspace, ParamKind::kParamBlob}) {
        auto back = param_kind_from_string(to_string(k));
        ASSERT_TRUE(back.ok());
        EXPECT_EQ(*back, k);
    }
    EXPECT_FALSE(param_kind_from_string("pointer").ok());
}

struct Malformed {
    const char* what;
    void (*mutate)(nlohmann::json&);
    const char* where;
};

TEST(LaunchPlanError, MalformedPlansNameThePath) {
    const Malformed cases[] = {
        {"version", [](nlohmann::json& j) { j["version"] = 99; }, ".version"},
        {"no kernels", [](nlohmann::json& j) { j.erase("kernels"); }, "kernels"},
        {"empty kernels", [](nlohmann::json& j) { j["kernels"] = nlohmann::json::array(); },
         ".kernels"},
        {"grid rank", [](nlohmann::json& j) { j["kernels"][1]["grid"] = {1, 2}; },
         ".kernels[1].grid"},
        {"grid zero", [](nlohmann::json& j) { j["kernels"][1]["grid"][0] = 0; },
         ".kernels[1].grid[0]"},
        {"param kind", [](nlohmann::json& j) { j["kernels"][1]["params"][0]["kind"] = "ptr"; },
         ".kernels[1].params[0].kind"},
        {"int32 range",
         [](nlohmann::json& j) { j["kernels"][1]["params"][3]["value"] = 1LL << 40; },
         ".kernels[1].params[3].value"},
        {"tensor name", [](nlohmann::json& j) { j["kernels"][1]["params"][0].erase("name"); },
         ".kernels[1].params[0]"},
        {"buffer dtype", [](nlohmann::json& j) { j["buffers"][0]["dtype"] = "f8"; },
         ".buffers[0].dtype"},
        {"buffer shape", [](nlohmann::json& j) { j["buffers"][0]["shape"] = {4, -1}; },
         ".buffers[0].shape"},
        {"builder with tensors",
         [](nlohmann::json& j) {
             j["kernels"][0]["params"].push_back({{"kind", "tensor"}, {"name", "X"}});
         },
         ".kernels[0].params"},
        {"not an object", [](nlohmann::json& j) { j = nlohmann::json::array(); }, "plan.json"},
    };
    for (const auto& c : cases) {
        nlohmann::json j = nlohmann::json::parse(to_json(sample_plan()).dump());
        c.mutate(j);
        auto plan = launch_plan_from_json(j);
        ASSERT_FALSE(plan.ok()) << c.what;
        EXPECT_NE(plan.error().where.find(c.where), std::string::npos)
            << c.what << ": " << plan.error().to_string();
    }
}

}  // namespace
}  // namespace kforge::codegen
