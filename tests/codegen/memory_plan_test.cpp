// Unit: the memory plan (codegen/memory_plan.h) - lifetimes over launches, the greedy best-fit
// arena, the check that no two live buffers share bytes, and plan.json's offsets and totals.
#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "codegen/memory_plan.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "problem/spec.h"
#include "sol/device.h"
#include "tests/codegen/memory_plan_fixtures.h"

namespace kforge::codegen {
namespace {

KernelLaunch launch(const std::string& name, std::vector<std::string> tensors) {
    KernelLaunch k;
    k.name = name;
    k.symbol = name;
    for (auto& t : tensors) k.params.push_back({ParamKind::kTensor, t, 0, 0.0});
    return k;
}

BufferDecl f32(const std::string& name, int64_t n, bool zero_init = false) {
    return BufferDecl{name, DType::kF32, {n}, zero_init, false};
}

int64_t offset_of(const LaunchPlan& p, const std::string& name) {
    for (const BufferDecl& b : p.buffers)
        if (b.name == name) return b.offset;
    ADD_FAILURE() << "no buffer " << name;
    return -1;
}

TEST(MemoryPlan, AChainOfFiveMapKernelsHoldsTwoBuffersNotFour) {
    auto problem = parse_problem(memplan::kChain5Problem, "chain5.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto prog = dsl::parse_program(memplan::kChain5Program, "chain5.kf");
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    const dsl::CheckResult checked =
        dsl::check_program(*prog, *problem, dsl::device_limits(find_device("h200").value()));
    ASSERT_TRUE(checked.ok()) << checked.errors.front().to_string();
    auto low = lower_program(*prog, *problem, {});
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    const LaunchPlan& plan = low->plan;
    ASSERT_EQ(plan.kernels.size(), 5u);
    ASSERT_EQ(plan.buffers.size(), 4u);  // a, b, c, d
    const int64_t one = 4 * 1024 * 4;     // R x C f32, a multiple of 256
    EXPECT_EQ(plan.memory.arena_bytes, 2 * one);
    EXPECT_EQ(plan.memory.unshared_bytes, 4 * one);
    EXPECT_EQ(plan.memory.io_bytes, 2 * one);  // x and y
    EXPECT_EQ(plan.memory.peak_bytes, 4 * one);
    // a and c alternate with b and d: neighbours in the chain never share
    EXPECT_EQ(offset_of(plan, "a"), offset_of(plan, "c"));
    EXPECT_EQ(offset_of(plan, "b"), offset_of(plan, "d"));
    EXPECT_NE(offset_of(plan, "a"), offset_of(plan, "b"));
    EXPECT_TRUE(check_memory_plan(plan).ok());
    EXPECT_NE(describe_memory_plan(plan).find("without reuse"), std::string::npos);
}

TEST(MemoryPlan, AKernelNeverFindsItsInputAndOutputAliased) {
    // k1 reads A and writes B: A's last read and B's first write are the same launch
    LaunchPlan p;
    p.kernels = {launch("k0", {"x", "A"}), launch("k1", {"A", "B"}), launch("k2", {"B", "C"}),
                 launch("k3", {"C", "y"})};
    p.buffers = {f32("A", 1000), f32("B", 1000), f32("C", 1000)};
    assign_arena_offsets(p);
    EXPECT_NE(offset_of(p, "A"), offset_of(p, "B"));
    EXPECT_NE(offset_of(p, "B"), offset_of(p, "C"));
    EXPECT_EQ(offset_of(p, "A"), offset_of(p, "C"));  // A is dead when C is first written
    EXPECT_TRUE(check_memory_plan(p).ok());
    const auto life = buffer_lifetimes(p);
    EXPECT_EQ(life[0].first_launch, 0u);
    EXPECT_EQ(life[0].last_launch, 1u);
    EXPECT_EQ(life[2].first_launch, 2u);
}

TEST(MemoryPlan, ParamBuilderTensorsAndWorkspacesCountAsUses) {
    LaunchPlan p;
    KernelLaunch g;
    g.name = g.symbol = "gemm";
    g.param_builder = "build_gemm";
    g.params = {{ParamKind::kParamBlob, "", 0, 0.0}};
    g.builder_tensors = {"A", "x", "B"};
    KernelLaunch s = launch("k2", {"B", "y"});
    s.params.push_back({ParamKind::kWorkspace, "scratch", 0, 0.0});
    p.kernels = {launch("k0", {"x", "A"}), g, s};
    p.buffers = {f32("A", 64), f32("B", 64), f32("scratch", 64)};
    assign_arena_offsets(p);
    EXPECT_NE(offset_of(p, "A"), offset_of(p, "B"));
    EXPECT_NE(offset_of(p, "B"), offset_of(p, "scratch"));
    EXPECT_EQ(offset_of(p, "A"), offset_of(p, "scratch"));
    EXPECT_TRUE(check_memory_plan(p).ok());
}

TEST(MemoryPlan, ZeroInitAndUnnamedBuffersLiveOverTheWholeSequence) {
    // a zero_init buffer is zeroed before the first launch: nothing may write its bytes before
    // its own kernel runs, so it shares with nobody
    LaunchPlan p;
    p.kernels = {launch("k0", {"x", "A"}), launch("k1", {"A", "B"}), launch("k2", {"B", "Z"}),
                 launch("k3", {"Z", "y"})};
    p.buffers = {f32("A", 256), f32("B", 256), f32("Z", 256, true), f32("unused", 256)};
    assign_arena_offsets(p);
    const auto life = buffer_lifetimes(p);
    EXPECT_EQ(life[2].first_launch, 0u);
    EXPECT_EQ(life[2].last_launch, 3u);
    EXPECT_EQ(life[3].last_launch, 3u);
    for (const char* other : {"A", "B", "unused"}) EXPECT_NE(offset_of(p, "Z"), offset_of(p, other));
    EXPECT_EQ(p.memory.arena_bytes, 4 * 1024);
    EXPECT_TRUE(check_memory_plan(p).ok());
}

TEST(MemoryPlan, OffsetsAreAlignedAndLaterBuffersReuseFreedSpace) {
    // big, mid and odd live together at k1; small and odd2 come after and take their space
    LaunchPlan p;
    p.kernels = {launch("k0", {"x", "big", "mid"}), launch("k1", {"big", "mid", "odd"}),
                 launch("k2", {"small", "odd2"}), launch("k3", {"small", "y"})};
    p.buffers = {f32("big", 4096), f32("mid", 1024), f32("odd", 3), f32("small", 100),
                 f32("odd2", 5)};
    assign_arena_offsets(p);
    for (const BufferDecl& b : p.buffers) EXPECT_EQ(b.offset % kArenaAlignment, 0) << b.name;
    EXPECT_EQ(p.memory.arena_bytes, 16384 + 4096 + 256);  // big, mid, odd: live together
    EXPECT_EQ(offset_of(p, "small"), 0);
    EXPECT_EQ(offset_of(p, "odd2"), 512);
    EXPECT_NE(offset_of(p, "small"), offset_of(p, "odd2"));
    EXPECT_TRUE(check_memory_plan(p).ok());
}

TEST(MemoryPlan, CheckRejectsLiveBuffersSharingBytes) {
    LaunchPlan p;
    p.kernels = {launch("k0", {"x", "A"}), launch("k1", {"A", "B"}), launch("k2", {"B", "y"})};
    p.buffers = {f32("A", 1000), f32("B", 1000)};
    assign_arena_offsets(p);
    ASSERT_TRUE(check_memory_plan(p).ok());
    p.buffers[1].offset = p.buffers[0].offset + 256;  // B starts inside A while k1 reads A
    Status s = check_memory_plan(p);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message.find("shares arena bytes with A"), std::string::npos)
        << s.error().to_string();
    p.buffers[1].offset = 100;
    EXPECT_NE(check_memory_plan(p).error().message.find("aligned"), std::string::npos);
    p.buffers[1].offset = p.memory.arena_bytes;
    EXPECT_NE(check_memory_plan(p).error().message.find("past the arena"), std::string::npos);
}

TEST(MemoryPlan, PlanJsonKeepsOffsetsAndTotalsAndRefusesAliasing) {
    LaunchPlan p;
    p.kernels = {launch("k0", {"x", "A"}), launch("k1", {"A", "B"}), launch("k2", {"B", "C"}),
                 launch("k3", {"C", "y"})};
    p.buffers = {f32("A", 1000), f32("B", 1000), f32("C", 1000)};
    p.memory.io_bytes = 8000;
    assign_arena_offsets(p);
    p.launch_mode = LaunchMode::kGraph;
    nlohmann::json j = to_json(p);
    EXPECT_EQ(j["memory"]["arena_bytes"], 8192);
    EXPECT_EQ(j["memory"]["peak_bytes"], 8000 + 8192);
    EXPECT_EQ(j["launch_mode"], "graph");
    auto back = launch_plan_from_json(j);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(back->launch_mode, LaunchMode::kGraph);
    EXPECT_EQ(back->memory.peak_bytes, p.memory.peak_bytes);
    for (size_t i = 0; i < p.buffers.size(); ++i) EXPECT_EQ(back->buffers[i].offset, p.buffers[i].offset);

    nlohmann::json old = j;  // a plan.json from before the memory plan: placed on reading
    old.erase("memory");
    old.erase("launch_mode");
    for (auto& b : old["buffers"]) b.erase("offset");
    auto placed = launch_plan_from_json(old);
    ASSERT_TRUE(placed.ok()) << placed.error().to_string();
    EXPECT_EQ(placed->memory.arena_bytes, 8192);
    EXPECT_EQ(placed->launch_mode, LaunchMode::kStream);
    EXPECT_TRUE(check_memory_plan(*placed).ok());

    nlohmann::json aliased = j;
    aliased["buffers"][1]["offset"] = aliased["buffers"][0]["offset"];
    auto refused = launch_plan_from_json(aliased);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().to_string().find("shares arena bytes"), std::string::npos);

    nlohmann::json partial = old;
    partial["buffers"][0]["offset"] = 0;
    EXPECT_FALSE(launch_plan_from_json(partial).ok());
    nlohmann::json huge = j;  // sizes the arena's arithmetic could overflow on are refused
    huge["buffers"][0]["shape"] = {int64_t{1} << 40, int64_t{1} << 30};
    EXPECT_NE(launch_plan_from_json(huge).error().to_string().find("2^50"), std::string::npos);
    nlohmann::json mode = j;
    mode["launch_mode"] = "graphs";
    auto bad_mode = launch_plan_from_json(mode);
    ASSERT_FALSE(bad_mode.ok());
    EXPECT_NE(bad_mode.error().to_string().find("launch_mode"), std::string::npos);
}

}  // namespace
}  // namespace kforge::codegen
