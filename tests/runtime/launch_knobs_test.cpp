// The runtime passes a kernel's launch knobs (codegen/launch_knobs.h) from its plan to the param
// builder at every launch, with the host ABI version the plan names (an older export's builder
// gets the version it was built against), and asks the builder for the workspace each time, so
// the workspace follows the run-time split. The builder here is a small C++ library compiled with
// the host compiler against codegen/host_abi.h (no GPU, no nvcc): it records what it was called
// with and asks for 4 KiB of workspace per split, as a split-K GEMM's partials grow with the
// split. Nothing here calls the CUDA driver (set_function_attributes off).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "runtime/launch.h"

namespace kforge::runtime {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBuilder = R"(#include <cstring>
#include "codegen/host_abi.h"
extern "C" int kforge_build_k0(const KforgeBuildArgs* in, KforgeBuiltLaunch* out) {
    if (in == nullptr || out == nullptr || in->abi_version < 1) return KFORGE_BUILD_BAD_ARGS;
    int32_t seen[7] = {in->abi_version, -1, -1, -1, -1, -1, in->sm_count};
    if (in->abi_version >= 2) {  // a version-1 builder knows only the prefix
        seen[1] = in->raster, seen[2] = in->swizzle, seen[3] = in->splits;
        seen[4] = in->decomposition, seen[5] = in->max_ctas;
    }
    out->workspace_bytes = in->abi_version >= 2 ? uint64_t(in->splits) * 4096 : 0;
    if (out->workspace_bytes > 0 && in->workspace == nullptr) return KFORGE_BUILD_NEED_WORKSPACE;
    if (out->params_capacity < sizeof seen) return KFORGE_BUILD_PARAMS_TOO_LARGE;
    std::memcpy(out->params, seen, sizeof seen);
    out->params_bytes = sizeof seen;
    for (int i = 0; i < 3; ++i) out->grid[i] = out->block[i] = out->cluster[i] = 1;
    if (in->abi_version >= 3) {  // a batch of 128 or more in three parts; grid x names the part
        out->parts = in->dims[0] >= 128 ? 3 : 1;
        if (in->part < 0 || in->part >= int32_t(out->parts)) return KFORGE_BUILD_BAD_ARGS;
        out->grid[0] = uint32_t(in->part) + 1;
    }
    return KFORGE_BUILD_OK;
}
)";

// The builder library, compiled once per process.
std::string builder_library() {
    static const std::string path = [] {
        fs::path dir = fs::temp_directory_path() / ("kforge_rt_knobs_" + std::to_string(getpid()));
        fs::create_directories(dir);
        std::ofstream(dir / "builder.cpp") << kBuilder;
        const std::string so = (dir / "builder.so").string();
        const std::string cc = std::string(KFORGE_HOST_CXX) + " -std=c++17 -shared -fPIC -I" +
                               KFORGE_SOURCE_DIR + " -o " + so + " " +
                               (dir / "builder.cpp").string();
        EXPECT_EQ(std::system(cc.c_str()), 0) << cc;
        return so;
    }();
    return path;
}

codegen::LaunchPlan plan_with(codegen::LaunchKnobs knobs, int host_abi_version) {
    codegen::LaunchPlan plan;
    plan.host_library = "builder.so";
    plan.host_abi_version = host_abi_version;
    codegen::KernelLaunch k;
    k.name = "k0";
    k.symbol = "kforge_k0";
    k.params = {codegen::KernelParam{codegen::ParamKind::kParamBlob, "", 0, 0.0}};
    k.param_builder = "kforge_build_k0";
    k.builder_tensors = {"A", "B", "C"};
    k.knobs = knobs;
    plan.kernels = {k};
    return plan;
}

struct Prepared {
    std::vector<int32_t> seen;
    uint64_t workspace_asked = 0;
    std::vector<unsigned> part_grids;  // grid x of each launch, in launch order
};

// What enqueue_launches issued: grid x and the params blob's first word of each launch.
std::vector<std::pair<unsigned, int32_t>> g_launched;
CUresult record_launch(const CUlaunchConfig* c, CUfunction, void** args, void**) {
    int32_t first = 0;
    std::memcpy(&first, args[0], sizeof first);
    g_launched.emplace_back(c->gridDimX, first);
    return CUDA_SUCCESS;
}

Prepared prepare(const codegen::LaunchPlan& plan, std::vector<int64_t> dims = {64, 64, 64}) {
    auto module = load_builders(plan, builder_library());
    EXPECT_TRUE(module.ok()) << (module.ok() ? "" : module.error().to_string());
    if (!module.ok()) return {};
    module->functions.assign(plan.kernels.size(), nullptr);
    Prepared out;
    Bindings b;
    b.pointer_of = [](const std::string&) -> Expected<CUdeviceptr> { return CUdeviceptr{1} << 20; };
    b.dims = dims;
    b.sm_count = 132;
    b.set_function_attributes = false;
    b.workspace = [&](size_t, uint64_t bytes) -> Expected<CUdeviceptr> {
        out.workspace_asked = bytes;
        return CUdeviceptr{2} << 20;
    };
    auto l = prepare_launch(DriverApi{}, *module, plan, 0, b);
    EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().to_string());
    if (l.ok()) {
        out.seen.resize(7);
        std::memcpy(out.seen.data(), l->storage.data(), 7 * sizeof(int32_t));
        DriverApi api;
        api.cuLaunchKernelEx = &record_launch;
        std::vector<PreparedLaunch> launches;
        launches.push_back(std::move(*l));  // moved, not copied: args point into its storage
        g_launched.clear();
        EXPECT_TRUE(enqueue_launches(api, launches, nullptr).ok());
        for (const auto& [grid, first] : g_launched) {
            out.part_grids.push_back(grid);
            EXPECT_EQ(first, out.seen[0]);  // each part's own blob, encoded by the same builder
        }
    }
    dlclose(module->host_library);
    return out;
}

TEST(RuntimeLaunchKnobs, TheBuilderGetsThePlansKnobsAndTheWorkspaceFollowsTheSplit) {
    codegen::LaunchKnobs knobs;
    knobs.raster = KFORGE_RASTER_ALONG_N;
    knobs.swizzle = 4;
    knobs.splits = 3;
    knobs.decomposition = KFORGE_DECOMPOSITION_SPLIT_K;
    knobs.max_ctas = 66;
    Prepared p = prepare(plan_with(knobs, KFORGE_HOST_ABI_VERSION));
    EXPECT_EQ(p.seen, (std::vector<int32_t>{KFORGE_HOST_ABI_VERSION, KFORGE_RASTER_ALONG_N, 4, 3,
                                            KFORGE_DECOMPOSITION_SPLIT_K, 66, 132}));
    EXPECT_EQ(p.workspace_asked, 3u * 4096);
    knobs.splits = 8;  // the same library, another split: a bigger workspace, asked again
    const codegen::LaunchPlan plan8 = plan_with(knobs, KFORGE_HOST_ABI_VERSION);
    EXPECT_EQ(prepare(plan8).workspace_asked, 8u * 4096);
    auto module = load_builders(plan8, builder_library());
    ASSERT_TRUE(module.ok());
    auto ws = builder_workspace_bytes(*module, plan8, 0, {64, 64, 64}, 132, 0);
    ASSERT_TRUE(ws.ok()) << ws.error().to_string();
    EXPECT_EQ(*ws, 8u * 4096);
    dlclose(module->host_library);
}

TEST(RuntimeLaunchKnobs, AnOlderExportIsCalledWithItsOwnAbiVersion) {
    Prepared p = prepare(plan_with(codegen::LaunchKnobs{}, 1));
    EXPECT_EQ(p.seen, (std::vector<int32_t>{1, -1, -1, -1, -1, -1, 132}));
    EXPECT_EQ(p.workspace_asked, 0u);
}

TEST(RuntimeLaunchKnobs, AProblemSplitIntoPartsLaunchesEachPartInOrder) {
    const codegen::LaunchPlan plan = plan_with(codegen::LaunchKnobs{}, KFORGE_HOST_ABI_VERSION);
    EXPECT_EQ(prepare(plan).part_grids, (std::vector<unsigned>{1}));  // under the split: one
    EXPECT_EQ(prepare(plan, {128, 64, 64}).part_grids, (std::vector<unsigned>{1, 2, 3}));
    // a version-2 export's builder never splits: one launch whatever its dims
    EXPECT_EQ(prepare(plan_with(codegen::LaunchKnobs{}, 2), {128, 64, 64}).part_grids,
              (std::vector<unsigned>{1}));
}

}  // namespace
}  // namespace kforge::runtime
