// Launch knobs (codegen/launch_knobs.h): an sm90 GEMM's raster, swizzle, split-K and stream-K
// are run-time arguments of its param builder, so programs that differ only in them lower to one
// source (one compile) with the knobs in the plan; compile_configuration() - the rule the search
// reads - agrees with the lowering over random knob settings; the baking switch brings back one
// source per value; plan.json carries the knobs and the host ABI version.
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "builder/build.h"
#include "codegen/launch_knobs.h"
#include "codegen/lower.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "tests/codegen/gemm_fixtures.h"

namespace kforge::codegen {
namespace {

using namespace gemm_testing;

// Bakes the launch knobs for the life of the object.
struct BakedScope {
    BakedScope() { set_launch_knobs_baked(true); }
    ~BakedScope() { set_launch_knobs_baked(false); }
};

Lowered lower_ok(const dsl::Program& program, const Problem& problem) {
    auto out = lower_program(program, problem, LowerOptions{});
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
    return out.ok() ? *out : Lowered{};
}

dsl::Program with(dsl::Program p, void (*set)(dsl::GemmConfig&)) {
    set(p.kernels[0].gemm);
    return p;
}

TEST(LaunchKnobs, RasterSwizzleAndSplitsLeaveTheSourceAlone) {
    const Problem problem = problem_gemm_bias_relu_bf16();
    const dsl::Program base = program_gemm_bias_relu_bf16();  // cooperative, along_n, swizzle 8
    const Lowered a = lower_ok(base, problem);
    const Lowered b = lower_ok(with(base, [](dsl::GemmConfig& c) {
                                   c.raster = dsl::Raster::kAlongM;
                                   c.swizzle = 1;
                               }),
                               problem);
    EXPECT_EQ(a.cuda_source, b.cuda_source);
    EXPECT_EQ(a.plan.kernels[0].knobs.raster, KFORGE_RASTER_ALONG_N);
    EXPECT_EQ(a.plan.kernels[0].knobs.swizzle, 8);
    EXPECT_EQ(b.plan.kernels[0].knobs.raster, KFORGE_RASTER_ALONG_M);
    EXPECT_EQ(b.plan.kernels[0].knobs.swizzle, 1);
    // no value in the source: the builder reads them
    EXPECT_EQ(a.cuda_source.find("max_swizzle_size = 8"), std::string::npos);
    EXPECT_NE(a.cuda_source.find("in->swizzle"), std::string::npos);
    EXPECT_NE(a.cuda_source.find("in->max_ctas"), std::string::npos);
    // a persistent-scheduler kernel refuses a split it was not compiled for
    EXPECT_NE(a.cuda_source.find("no stream-K scheduler compiled in"), std::string::npos);

    // stream-K and every split factor share the stream-K-scheduler kernel
    const Lowered sk = lower_ok(with(base, [](dsl::GemmConfig& c) { c.schedule = dsl::Schedule::kStreamK; }),
                                problem);
    const Lowered s2 = lower_ok(with(base, [](dsl::GemmConfig& c) { c.split_k = 2; }), problem);
    const Lowered s8 = lower_ok(with(base, [](dsl::GemmConfig& c) {
                                    c.split_k = 8;
                                    c.raster = dsl::Raster::kAuto;
                                }),
                                problem);
    EXPECT_EQ(sk.cuda_source, s2.cuda_source);
    EXPECT_EQ(s2.cuda_source, s8.cuda_source);
    EXPECT_NE(a.cuda_source, s2.cuda_source);  // the scheduler type is compile-time
    EXPECT_NE(s2.cuda_source.find("cutlass::gemm::StreamKScheduler"), std::string::npos);
    EXPECT_EQ(sk.plan.kernels[0].knobs.decomposition, KFORGE_DECOMPOSITION_STREAM_K);
    EXPECT_EQ(s8.plan.kernels[0].knobs.decomposition, KFORGE_DECOMPOSITION_SPLIT_K);
    EXPECT_EQ(s8.plan.kernels[0].knobs.splits, 8);
    EXPECT_EQ(s8.plan.kernels[0].knobs.raster, KFORGE_RASTER_HEURISTIC);
    EXPECT_EQ(a.plan.kernels[0].knobs.splits, 1);
    EXPECT_EQ(a.plan.kernels[0].knobs.decomposition, KFORGE_DECOMPOSITION_HEURISTIC);
    EXPECT_EQ(a.plan.host_abi_version, KFORGE_HOST_ABI_VERSION);
}

TEST(LaunchKnobs, BakedKnobsAreOneSourcePerValue) {
    BakedScope baked;
    const Problem problem = problem_gemm_bias_relu_bf16();
    const dsl::Program base = program_gemm_bias_relu_bf16();
    const Lowered a = lower_ok(base, problem);
    const Lowered b = lower_ok(with(base, [](dsl::GemmConfig& c) { c.swizzle = 4; }), problem);
    EXPECT_NE(a.cuda_source, b.cuda_source);
    EXPECT_NE(a.cuda_source.find("Raster::AlongN;"), std::string::npos);
    EXPECT_NE(a.cuda_source.find("max_swizzle_size = 8"), std::string::npos);
    EXPECT_EQ(a.cuda_source.find("in->swizzle"), std::string::npos);
    const dsl::Program s4 = with(base, [](dsl::GemmConfig& c) { c.split_k = 4; });
    EXPECT_NE(lower_ok(s4, problem).cuda_source.find("args.scheduler.splits = 4;"), std::string::npos);
    // nothing is free: the configuration is the program
    EXPECT_EQ(dsl::print_canonical(compile_configuration(s4)), dsl::print_canonical(s4));
}

// The search's rule against the lowering: random knob settings of the GEMM, grouped by their
// compile configuration; within a group one source, across groups different sources.
TEST(LaunchKnobs, CompileConfigurationAgreesWithTheLowering) {
    const Problem problem = problem_gemm_bias_relu_bf16();
    const dsl::Program base = program_gemm_bias_relu_bf16();
    std::mt19937 rng(27);
    auto pick = [&](std::initializer_list<int> v) {
        return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
    };
    std::map<std::string, std::string> source_of;  // configuration -> source
    std::set<std::string> sources;
    int lowered = 0, shared = 0;
    for (int i = 0; i < 300; ++i) {
        dsl::Program p = base;
        dsl::GemmConfig& c = p.kernels[0].gemm;
        c.tile_n = pick({128, 256});
        c.cluster_m = pick({1, 2});
        static const dsl::Schedule kSchedules[] = {dsl::Schedule::kTmaWarpSpecialized,
                                                   dsl::Schedule::kPingpong,
                                                   dsl::Schedule::kCooperative,
                                                   dsl::Schedule::kStreamK};
        c.schedule = kSchedules[pick({0, 1, 2, 3})];
        static const dsl::Raster kRasters[] = {dsl::Raster::kAuto, dsl::Raster::kAlongM,
                                               dsl::Raster::kAlongN};
        c.raster = kRasters[pick({0, 1, 2})];
        c.swizzle = pick({1, 2, 4, 8});
        c.split_k = pick({1, 1, 2, 3, 4, 8});
        auto out = lower_program(p, problem, LowerOptions{});
        if (!out) continue;  // a split with pingpong, a tile M the schedule cannot take
        ++lowered;
        EXPECT_EQ(out->plan.kernels.back().knobs, launch_knobs_of(c));
        const std::string config = dsl::print_canonical(compile_configuration(p));
        auto [it, fresh] = source_of.emplace(config, out->cuda_source);
        if (!fresh) {
            ++shared;
            EXPECT_EQ(it->second, out->cuda_source) << "one configuration, two sources:\n" << config;
        } else {
            EXPECT_TRUE(sources.insert(out->cuda_source).second)
                << "two configurations, one source:\n" << config;
        }
    }
    EXPECT_GT(lowered, 100);
    EXPECT_GT(shared, lowered / 2);  // most draws reuse a compile
}

TEST(LaunchKnobs, MultistageKernelsBakeTheirKnobs) {
    const Problem problem = problem_linear_f32();
    const dsl::Program p = program_linear_f32(dsl::Schedule::kMultistage, dsl::MathMode::kTf32x3);
    dsl::Program q = p;
    q.kernels[0].gemm.swizzle = p.kernels[0].gemm.swizzle == 1 ? 2 : 1;
    EXPECT_NE(lower_ok(p, problem).cuda_source, lower_ok(q, problem).cuda_source);
    EXPECT_NE(dsl::print_canonical(compile_configuration(p)),
              dsl::print_canonical(compile_configuration(q)));
}

TEST(LaunchKnobs, PlanJsonCarriesKnobsAndAbiVersion) {
    dsl::Program p = program_gemm_bias_relu_bf16();
    p.kernels[0].gemm.split_k = 4;
    const Lowered out = lower_ok(p, problem_gemm_bias_relu_bf16());
    auto j = nlohmann::json::parse(to_json(out.plan).dump());
    EXPECT_EQ(j["host_abi_version"], KFORGE_HOST_ABI_VERSION);
    EXPECT_EQ(j["kernels"][0]["launch_knobs"]["splits"], 4);
    auto back = launch_plan_from_json(j);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(back->kernels[0].knobs, out.plan.kernels[0].knobs);
    EXPECT_EQ(back->host_abi_version, KFORGE_HOST_ABI_VERSION);
    // an export written before launch knobs: ABI 1, default knobs
    j.erase("host_abi_version");
    j["kernels"][0].erase("launch_knobs");
    auto old = launch_plan_from_json(j);
    ASSERT_TRUE(old.ok()) << old.error().to_string();
    EXPECT_EQ(old->host_abi_version, 1);
    EXPECT_EQ(old->kernels[0].knobs, LaunchKnobs{});
    // out of range: a user error naming the field
    j["kernels"][0]["launch_knobs"] = {{"swizzle", 16}};
    auto bad = launch_plan_from_json(j);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().to_string().find("launch_knobs.swizzle"), std::string::npos);
    j["kernels"][0].erase("launch_knobs");
    j["host_abi_version"] = KFORGE_HOST_ABI_VERSION + 1;
    EXPECT_FALSE(launch_plan_from_json(j).ok());
}

// Through the build path: a suite program and its launch-knob variants (raster, swizzle,
// splitk, stream-K) are one compile unit - the key a precompile batch and the compile cache
// deduplicate by - so the second compiles nothing; a tile change is another unit; with the knobs
// baked, each variant is its own unit again.
TEST(LaunchKnobs, VariantsAreOneCompileUnit) {
    auto problem = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/gemm_large_k_bf16.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/problems/gemm_large_k_bf16.kf");
    std::stringstream text;
    text << in.rdbuf();
    auto base = dsl::parse_program(text.str(), "gemm_large_k_bf16.kf");
    ASSERT_TRUE(base.ok()) << base.error().to_string();
    builder::BuildOptions options;
    options.no_build = true;
    const Target target = find_target("h200").value();
    auto unit = [&](void (*set)(dsl::GemmConfig&)) {
        dsl::Program p = with(*base, set);
        builder::BuiltCandidate c = builder::build(dsl::print_canonical(p), *problem, target, options);
        EXPECT_EQ(c.status, builder::BuildStatus::kLowered) << c.message;
        return builder::compile_unit_key(c);
    };
    auto cooperative_split = [](dsl::GemmConfig& c) {
        c.schedule = dsl::Schedule::kCooperative;
        c.split_k = 2;
    };
    const std::string split2 = unit(cooperative_split);
    EXPECT_EQ(split2, unit([](dsl::GemmConfig& c) {
                  c.schedule = dsl::Schedule::kCooperative;
                  c.split_k = 4;
                  c.raster = dsl::Raster::kAlongM;
                  c.swizzle = 2;
              }));
    EXPECT_EQ(split2, unit([](dsl::GemmConfig& c) {
                  c.schedule = dsl::Schedule::kStreamK;
                  c.split_k = 1;
              }));
    EXPECT_NE(split2, unit([](dsl::GemmConfig& c) {
                  c.schedule = dsl::Schedule::kCooperative;
                  c.split_k = 2;
                  c.tile_n = c.tile_n == 128 ? 256 : 128;
              }));
    BakedScope baked;
    EXPECT_NE(unit(cooperative_split), unit([](dsl::GemmConfig& c) {
                  c.schedule = dsl::Schedule::kCooperative;
                  c.split_k = 4;
              }));
}

}  // namespace
}  // namespace kforge::codegen
