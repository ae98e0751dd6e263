// attention's `impl cutlass_mea` (CUTLASS's memory-efficient attention from the installed
// package's examples/41_fused_multi_head_attention) lowered and compiled with nvcc for sm_90a into
// a cubin and a host library, whose param builder then runs on the host (it fills the kernel's
// Params and launch geometry without touching a GPU): the grid folds every batch dim into z, the
// 16-bit kernel with head dims past its key tile asks for its f32 accumulator as workspace, a
// misaligned pointer is refused by the kernel's own check_supported and a grid past 65535 batch
// entries by the builder. Label bench: about a minute per compile on two cores, never in CI; no
// GPU needed. The GPU run is bench/attention/run.sh.
#include <dlfcn.h>

#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

#include "codegen/host_abi.h"
#include "codegen/lower.h"
#include "compile/compile.h"
#include "dsl/parser.h"
#include "problem/spec.h"

namespace kforge::codegen {
namespace {

namespace fs = std::filesystem;

struct Built {
    fs::path dir;
    void* lib = nullptr;
    KforgeParamBuilderFn builder = nullptr;
    ~Built() {
        if (lib) dlclose(lib);
        fs::remove_all(dir);
    }
};

// Compiles `program` for `spec` and opens its host library; the kernel is kforge_k0.
void build(const std::string& spec, const std::string& program, Built& b) {
    auto problem = parse_problem(spec, "sdpa.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto parsed = dsl::parse_program(program, "p.kf");
    ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
    auto lowered = lower_program(*parsed, *problem, LowerOptions{});
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    // a folder (and so a library path) of its own per build: dlopen of a path another test
    // opened and closed may hand back that library
    static int builds = 0;
    b.dir = fs::temp_directory_path() / ("kforge_mea_compile_" + std::to_string(getpid()) + "_" +
                                         std::to_string(builds++));
    fs::remove_all(b.dir);
    compile::CompileOptions o = compile::default_compile_options("sm_90a");
    o.host_library = lowered->has_host_code;
    o.out_dir = b.dir.string();
    o.timeout_s = 900;
    auto r = compile::compile_cuda(lowered->cuda_source, o);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_EQ(r->status, compile::CompileStatus::kOk) << r->log;
    std::printf("compile time: %.1f s\n%s", r->time_compile_ns / 1e9,
                compile::format_ptxas_report(r->kernels).c_str());
    ASSERT_EQ(r->kernels.size(), 1u) << r->log;
    EXPECT_EQ(r->kernels[0].name, "kforge_k0");
    b.lib = dlopen(r->host_library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(b.lib, nullptr) << dlerror();
    b.builder = reinterpret_cast<KforgeParamBuilderFn>(dlsym(b.lib, "kforge_build_k0"));
    ASSERT_NE(b.builder, nullptr);
}

std::string spec(const std::string& dtype, int64_t d, bool mask) {
    return R"({"name": "sdpa", "dims": {"B": 2, "D": )" + std::to_string(d) +
           R"(, "H": 4, "L": 256, "S": 200},
        "inputs": {"q": {"shape": ["B", "H", "S", "D"], "dtype": ")" + dtype + R"("},
                   "k": {"shape": ["B", "H", "L", "D"], "dtype": ")" + dtype + R"("},
                   "v": {"shape": ["B", "H", "L", "D"], "dtype": ")" + dtype + R"("})" +
           (mask ? R"(, "m": {"shape": ["B", "H", "S", "L"], "dtype": ")" + dtype + R"("})" : "") + R"(},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "scale", "inputs": ["s"], "value": 0.125, "output": "t"},)" +
           (mask ? R"({"op": "add", "inputs": ["t", "m"], "output": "u"},)"
                 : R"({"op": "masked_fill", "inputs": ["t"], "mask": "triu", "diagonal": 1, "output": "u", "value": "-inf"},)") +
           R"({"op": "softmax", "inputs": ["u"], "output": "p", "axis": -1},
                  {"op": "matmul", "inputs": ["p", "v"], "output": "o"}],
        "outputs": ["o"], "precision": {"policy": ")" + (dtype == "f32" ? "fp32_strict" : dtype) + R"("}})";
}

// The builder's call with dims B, D, H, L, S (sorted by name) and fake, aligned device pointers.
int call(const Built& b, std::vector<int64_t> dims, int tensors, KforgeBuiltLaunch& out,
         void* workspace = nullptr, uintptr_t misalign = 0) {
    alignas(256) static unsigned char blob[4096];
    std::vector<void*> ptrs;
    for (int i = 0; i < tensors; ++i)
        ptrs.push_back(reinterpret_cast<void*>(uintptr_t{0x7f0000000000} + uintptr_t(i) * 0x10000000 +
                                               (i == 0 ? misalign : 0)));
    KforgeBuildArgs a{};
    a.abi_version = KFORGE_HOST_ABI_VERSION;
    a.num_tensors = tensors;
    a.tensors = ptrs.data();
    a.num_dims = static_cast<int32_t>(dims.size());
    a.dims = dims.data();
    a.workspace = workspace;
    a.sm_count = 132;
    out = KforgeBuiltLaunch{};
    out.params = blob;
    out.params_capacity = sizeof blob;
    return b.builder(&a, &out);
}

TEST(AttentionMeaCompile, Bf16MaskedWideHeadBuildsAndAsksForItsAccumulator) {
    Built b;
    // head dim 160 past the 32x128 tile's key rows: kMaxK unbounded, O accumulated in f32
    build(spec("bf16", 160, true),
          "program p for \"sdpa\"\nkernel k0 = attention(q[B,H,S,D], k[B,H,L,D], v[B,H,L,D], "
          "m[B,H,S,L]) scale 0.125 impl cutlass_mea mea_tile 32x128\n    { cast bf16; store o[B,H,S,D] }\n",
          b);
    if (!b.builder) return;
    KforgeBuiltLaunch l;
    ASSERT_EQ(call(b, {2, 160, 4, 256, 200}, 5, l), KFORGE_BUILD_NEED_WORKSPACE);
    EXPECT_EQ(l.workspace_bytes, uint64_t{2 * 4 * 200 * 160 * 4});
    ASSERT_EQ(call(b, {2, 160, 4, 256, 200}, 5, l, reinterpret_cast<void*>(0x7e0000000000)),
              KFORGE_BUILD_OK);
    EXPECT_EQ(l.grid[0], 7u);  // ceil(200 / 32) query tiles
    EXPECT_EQ(l.grid[1], 1u);
    EXPECT_EQ(l.grid[2], 8u);  // B x H batch entries
    EXPECT_EQ(l.block[0], 32u);
    EXPECT_EQ(l.block[1], 4u);  // 32 x 128 / (32 x 32) warps
    EXPECT_GT(l.smem_bytes, 0u);
    EXPECT_LE(l.smem_bytes, 227u * 1024u);
    EXPECT_GT(l.params_bytes, 0u);
    // a run-time shape: the grid follows the dims (one compile serves every shape)
    ASSERT_EQ(call(b, {1, 160, 2, 64, 64}, 5, l, reinterpret_cast<void*>(0x7e0000000000)),
              KFORGE_BUILD_OK);
    EXPECT_EQ(l.grid[0], 2u);
    EXPECT_EQ(l.grid[2], 2u);
    // Q 2 bytes off its 16-byte vectors: the kernel's check_supported refuses it
    EXPECT_EQ(call(b, {2, 160, 4, 256, 200}, 5, l, reinterpret_cast<void*>(0x7e0000000000), 2),
              KFORGE_BUILD_CANNOT_IMPLEMENT);
    EXPECT_EQ(call(b, {2, 160, 4, 256, 200}, 4, l), KFORGE_BUILD_BAD_ARGS);  // no mask pointer
    EXPECT_EQ(call(b, {300, 160, 300, 256, 200}, 5, l), KFORGE_BUILD_BAD_ARGS);  // grid z
}

TEST(AttentionMeaCompile, F32CausalBuildsWithoutWorkspace) {
    Built b;
    build(spec("f32", 64, false),
          "program p for \"sdpa\"\nkernel k0 = attention(q[B,H,S,D], k[B,H,L,D], v[B,H,L,D]) "
          "scale 0.125 impl cutlass_mea mea_tile 64x64 mask triu diagonal 1\n"
          "    { store o[B,H,S,D] }\n",
          b);
    if (!b.builder) return;
    KforgeBuiltLaunch l;
    ASSERT_EQ(call(b, {2, 64, 4, 256, 200}, 4, l), KFORGE_BUILD_OK);
    EXPECT_EQ(l.workspace_bytes, 0u);
    EXPECT_EQ(l.grid[0], 4u);  // ceil(200 / 64)
    EXPECT_EQ(l.grid[2], 8u);
    EXPECT_EQ(l.block[1], 4u);  // 64 x 64 / (32 x 32)
}

}  // namespace
}  // namespace kforge::codegen
