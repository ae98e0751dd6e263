// The conv2d lowering's one CUTLASS compile in CI: a problem with two convolutions (f32 under
// fp32_strict -> math tf32x3, f16 -> math f16) lowered to one translation unit (two
// DefaultConv2dFprop instantiations in their own namespaces, the layout kernels, the chain
// functors) and built with nvcc into a cubin and a host library (30-40 s on two cores); no
// kernel spills (a 3xTF32 conv at 64x32 warps did: lower_conv picks 32x32).
// Then each param builder runs on the host (it only encodes Params; device pointers are never
// dereferenced): the grid is the implicit GEMM's tiles, the block the kernel's warps, the
// shared memory the stages' tiles, a batch past 2 GiB split into parts, a too-large image or a
// wrong call refused. No GPU needed.
#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "codegen/host_abi.h"
#include "codegen/lower.h"
#include "compile/compile.h"
#include "dsl/parser.h"
#include "problem/spec.h"

namespace kforge::codegen {
namespace {

namespace fs = std::filesystem;

// y32 = conv2d(x32, w32) + b32 (stride 2, padding 1), y16 = relu(conv2d(x16, w16)) (dilation 2).
// N 2, C 3, H 17, W 19, K 10, R = S = 3.
constexpr const char* kProblem = R"({"name": "two_convs", "dims": {"N": 2, "C": 3, "H": 17,
      "W": 19, "K": 10, "R": 3, "S": 3},
  "inputs": {"x32": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
             "w32": {"shape": ["K", "C", "R", "S"], "dtype": "f32", "param": true},
             "b32": {"shape": ["K"], "dtype": "f32", "param": true},
             "x16": {"shape": ["N", "C", "H", "W"], "dtype": "f16"},
             "w16": {"shape": ["K", "C", "R", "S"], "dtype": "f16", "param": true}},
  "graph": [{"op": "conv2d", "inputs": ["x32", "w32", "b32"], "output": "y32", "stride": 2,
             "padding": 1, "out_dims": ["P", "Q"]},
            {"op": "conv2d", "inputs": ["x16", "w16"], "output": "h16", "dilation": 2,
             "out_dims": ["P2", "Q2"]},
            {"op": "relu", "inputs": ["h16"], "output": "y16"}],
  "outputs": ["y32", "y16"], "precision": {"policy": "fp32_strict"}})";

constexpr const char* kProgram = R"(program convs for "two_convs"
kernel k32 = conv2d(x32[N,C,H,W], w32[K,C,R,S]) tile 128x64x32 stages 3 math tf32x3
    { add b32[K]; store y32[N,K,P,Q] }
kernel k16 = conv2d(x16[N,C,H,W], w16[K,C,R,S]) tile 64x64x32 stages 4 math f16
    { relu; store y16[N,K,P2,Q2] }
)";

struct Built {
    int rc = -1;
    KforgeBuiltLaunch launch{};
};

Built build(void* lib, const char* symbol, const Problem& problem, int num_tensors = 3,
            int part = 0) {
    auto fn = reinterpret_cast<KforgeParamBuilderFn>(dlsym(lib, symbol));
    EXPECT_NE(fn, nullptr) << symbol;
    Built b;
    if (!fn) return b;
    std::vector<int64_t> dims;
    for (const auto& [name, value] : problem.dims) dims.push_back(value);
    // never dereferenced by a builder: distinct, 256-byte aligned addresses
    void* tensors[3] = {reinterpret_cast<void*>(0x10000), reinterpret_cast<void*>(0x20000),
                        reinterpret_cast<void*>(0x30000)};
    KforgeBuildArgs a{};
    a.abi_version = KFORGE_HOST_ABI_VERSION;
    a.num_tensors = num_tensors;
    a.tensors = tensors;
    a.num_dims = static_cast<int32_t>(dims.size());
    a.dims = dims.data();
    a.sm_count = 132;
    a.part = part;
    alignas(64) static unsigned char blob[8192];
    b.launch.params = blob;
    b.launch.params_capacity = sizeof blob;
    b.rc = fn(&a, &b.launch);
    return b;
}

// nvcc for sm_90a into `out`: a cubin holding every launch's symbol, no kernel spilling, and the
// host library opened (nullptr and a failure otherwise; the caller dlcloses it).
void* build_without_spills(const Lowered& lowered, const fs::path& out) {
    fs::remove_all(out);
    compile::CompileOptions o = compile::default_compile_options("sm_90a");
    o.host_library = lowered.has_host_code;
    o.out_dir = out.string();
    o.timeout_s = 900;
    auto r = compile::compile_cuda(lowered.cuda_source, o);
    if (!r.ok()) {
        ADD_FAILURE() << r.error().to_string();
        return nullptr;
    }
    std::printf("compile time: %.1f s\n%s", r->time_compile_ns / 1e9,
                compile::format_ptxas_report(r->kernels).c_str());
    std::set<std::string> names;
    for (const auto& k : r->kernels) names.insert(k.name);
    for (const KernelLaunch& l : lowered.plan.kernels) EXPECT_TRUE(names.count(l.symbol)) << l.symbol;
    for (const auto& k : r->kernels) EXPECT_FALSE(k.spills()) << k.name;
    void* lib = r->status == compile::CompileStatus::kOk
                    ? dlopen(r->host_library_path.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
    if (lib == nullptr)
        ADD_FAILURE() << (r->status == compile::CompileStatus::kOk ? dlerror() : r->log);
    return lib;
}

TEST(ConvCompile, TwoConvolutionsBuildAndTheirBuildersEncodeParams) {
    auto problem = parse_problem(kProblem, "<test>");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto program = dsl::parse_program(kProgram, "convs.kf");
    ASSERT_TRUE(program.ok()) << program.error().to_string();
    auto lowered = lower_program(*program, *problem, LowerOptions{});
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    ASSERT_EQ(lowered->plan.kernels.size(), 8u);

    const fs::path out = fs::temp_directory_path() / ("kforge_conv_compile_" + std::to_string(getpid()));
    void* lib = build_without_spills(*lowered, out);
    ASSERT_NE(lib, nullptr);
    // k32: M = N P Q = 2 * 9 * 10 = 180 -> 2 tiles of 128; N = Kp = 12 -> 1 tile of 64;
    // 3xTF32 at 32x32 warps: 8 warps; 3 stages of (128 + 64) x 32 f32
    Built b32 = build(lib, "kforge_build_k32", *problem);
    EXPECT_EQ(b32.rc, KFORGE_BUILD_OK);
    EXPECT_EQ(b32.launch.grid[0], 2u);
    EXPECT_EQ(b32.launch.grid[1], 1u);
    EXPECT_EQ(b32.launch.grid[2], 1u);
    EXPECT_EQ(b32.launch.block[0], 256u);
    EXPECT_EQ(b32.launch.smem_bytes, 3u * (128 + 64) * 32 * 4);
    EXPECT_EQ(b32.launch.workspace_bytes, 0u);
    EXPECT_GT(b32.launch.params_bytes, 0u);
    // k16: dilation 2 -> P = 17 - 4 = 13, Q = 15: M = 2 * 13 * 15 = 390 -> 7 tiles of 64
    Built b16 = build(lib, "kforge_build_k16", *problem);
    EXPECT_EQ(b16.rc, KFORGE_BUILD_OK);
    EXPECT_EQ(b16.launch.grid[0], 7u);
    EXPECT_EQ(b16.launch.grid[1], 1u);
    EXPECT_EQ(b16.launch.block[0], 128u);
    EXPECT_EQ(b16.launch.smem_bytes, 4u * (64 + 64) * 32 * 2);
    // the same library at another shape (dims from the harness): N 64 -> grid 64x
    Problem big = *problem;
    big.dims["N"] = 64;
    EXPECT_EQ(build(lib, "kforge_build_k32", big).launch.grid[0], 45u);  // 64*9*10 / 128
    // a batch past CUTLASS's 2 GiB a tensor is launched in parts (codegen/host_abi.h): N 2048
    // at 512 x 512 is 4 MiB an image staged (Cp 4 f32) and 3 MiB of output (256 x 256 x Kp 12
    // f32): 511 images a part, 5 parts, the last of 4 images
    Problem many = *problem;
    many.dims["N"] = 2048;
    many.dims["H"] = 512;
    many.dims["W"] = 512;
    Built first = build(lib, "kforge_build_k32", many);
    EXPECT_EQ(first.rc, KFORGE_BUILD_OK);
    EXPECT_EQ(first.launch.parts, 5u);
    EXPECT_EQ(first.launch.grid[0], 511u * 256 * 256 / 128);
    Built last = build(lib, "kforge_build_k32", many, 3, 4);
    EXPECT_EQ(last.rc, KFORGE_BUILD_OK);
    EXPECT_EQ(last.launch.parts, 5u);
    EXPECT_EQ(last.launch.grid[0], 4u * 256 * 256 / 128);
    EXPECT_EQ(build(lib, "kforge_build_k32", many, 3, 5).rc, KFORGE_BUILD_BAD_ARGS);
    EXPECT_EQ(b32.launch.parts, 1u);  // a problem under the limit: one launch
    // a wrong call and one image past 2^31 bytes are refused, not encoded
    EXPECT_EQ(build(lib, "kforge_build_k32", *problem, 2).rc, KFORGE_BUILD_BAD_ARGS);
    Problem huge = *problem;
    huge.dims["H"] = 1 << 16;
    huge.dims["W"] = 1 << 12;
    EXPECT_EQ(build(lib, "kforge_build_k32", huge).rc, KFORGE_BUILD_CANNOT_IMPLEMENT);
    dlclose(lib);
    fs::remove_all(out);
}

// schedule tma_ws (codegen/lower_conv_sm90.cpp): CUTLASS 3.x's sm90 fprop on 3xTF32 chunks
// builds for sm_90a without spills beside its split staging kernels and, in the same source, an
// sm80 GEMM (CUTLASS 2.x's GemmUniversal specialization beside the conv's: ResNet-18 did not
// compile while the conv's scheduler was void) (~50 s on two cores). Its
// builder encodes TMA descriptors through the CUDA driver, so on a machine without one only the
// refusals before that are run here: a wrong ABI, a part past the chunks (C 96 at 5x5: 3).
TEST(ConvCompile, HopperFormBuildsAndItsBuilderRefusesBadCalls) {
    auto problem = parse_problem(R"({"name": "c", "dims": {"N": 4, "C": 96, "H": 27, "W": 27,
        "K": 64, "R": 5, "S": 5},
      "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
                 "w": {"shape": ["K", "C", "R", "S"], "dtype": "f32", "param": true},
                 "b": {"shape": ["K"], "dtype": "f32", "param": true},
                 "a": {"shape": [256, 512], "dtype": "f32"}, "v": {"shape": [512, 128], "dtype": "f32"}},
      "graph": [{"op": "conv2d", "inputs": ["x", "w", "b"], "output": "y", "padding": 2,
                 "out_dims": ["P", "Q"]},
                {"op": "matmul", "inputs": ["a", "v"], "output": "g"}],
      "outputs": ["y", "g"], "precision": {"policy": "fp32_strict"}})", "<test>");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto program = dsl::parse_program(
        "program p for \"c\"\nkernel k0 = conv2d(x[N,C,H,W], w[K,C,R,S]) tile 128x128x32 "
        "schedule tma_ws math tf32x3 { add b[K]; store y[N,K,P,Q] }\n"
        "kernel k1 = gemm(a[256,512], v[512,128]) tile 64x64x32 stages 3 schedule multistage "
        "math tf32x3 { store g[256,128] }\n", "p.kf");
    ASSERT_TRUE(program.ok()) << program.error().to_string();
    auto lowered = lower_program(*program, *problem, LowerOptions{});
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    const fs::path out = fs::temp_directory_path() / ("kforge_conv_sm90_" + std::to_string(getpid()));
    void* lib = build_without_spills(*lowered, out);
    ASSERT_NE(lib, nullptr);
    EXPECT_EQ(build(lib, "kforge_build_k0", *problem, 2).rc, KFORGE_BUILD_BAD_ARGS);
    EXPECT_EQ(build(lib, "kforge_build_k0", *problem, 3, 3).rc, KFORGE_BUILD_BAD_ARGS);
    EXPECT_EQ(build(lib, "kforge_build_k0", *problem, 3, -1).rc, KFORGE_BUILD_BAD_ARGS);
    dlclose(lib);
    fs::remove_all(out);
}

}  // namespace
}  // namespace kforge::codegen
