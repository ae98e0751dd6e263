// The C API of libkforge_runtime.so (runtime/kforge_runtime.h), compiled and linked as a user
// would: only the header and the shared library. An exported folder is made with the kforge
// binary (`kforge export`, a softmax: kforge's own row-wise kernel, compiled with NVRTC/nvcc in
// seconds, no CUTLASS). Without a GPU, opening it reports KFORGE_RT_NO_GPU with the driver's
// reason; on a GPU the program is launched on a stream and checked against a CPU softmax.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/kforge_runtime.h"

namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const char* name) {
    fs::path d = fs::temp_directory_path() / (std::string("kforge-rt-test-") + name + "-" +
                                              std::to_string(::getpid()));
    fs::remove_all(d);
    return d;
}

int run(const std::string& cmd) { return std::system((cmd + " > /dev/null 2>&1").c_str()); }

std::string spec_path() { return std::string(KFORGE_SOURCE_DIR) + "/problems/softmax_short_rows_f32.json"; }

std::string package_of(const fs::path& out) {
    for (const auto& e : fs::directory_iterator(out))
        if (e.path().filename().string().rfind("kforge_", 0) == 0) return (e.path() / "program").string();
    return "";
}

TEST(RuntimeCApi, BadFolderIsBadPackage) {
    kforge_rt_program* p = reinterpret_cast<kforge_rt_program*>(1);
    EXPECT_EQ(kforge_rt_open("/nonexistent/kforge/export", &p), KFORGE_RT_BAD_PACKAGE);
    EXPECT_EQ(p, nullptr);
    EXPECT_NE(std::string(kforge_rt_last_error()).find("runtime.json"), std::string::npos)
        << kforge_rt_last_error();
    EXPECT_EQ(kforge_rt_open(nullptr, &p), KFORGE_RT_INVALID_ARGUMENT);
    EXPECT_EQ(kforge_rt_launch(nullptr, nullptr, nullptr, 0, nullptr, 0),
              KFORGE_RT_INVALID_ARGUMENT);
    EXPECT_STREQ(kforge_rt_status_name(KFORGE_RT_NO_GPU), "no_gpu");
    EXPECT_EQ(kforge_rt_abi_version(), KFORGE_RT_ABI_VERSION);
}

TEST(RuntimeCApi, NoBuildExportIsNotBuilt) {
    fs::path out = fresh_dir("nobuild");
    ASSERT_EQ(run(std::string(KFORGE_CLI_PATH) + " export " + spec_path() + " -o " +
                  out.string() + " --no-build"), 0);
    kforge_rt_program* p = nullptr;
    EXPECT_EQ(kforge_rt_open(package_of(out).c_str(), &p), KFORGE_RT_NOT_BUILT);
    EXPECT_NE(std::string(kforge_rt_last_error()).find("--no-build"), std::string::npos);
    fs::remove_all(out);
}

TEST(RuntimeCApi, BuiltExportOpensOrSaysNoGpu) {
    fs::path out = fresh_dir("built");
    ASSERT_EQ(run(std::string(KFORGE_CLI_PATH) + " export " + spec_path() + " -o " +
                  out.string()), 0);
    kforge_rt_program* p = nullptr;
    kforge_rt_status s = kforge_rt_open(package_of(out).c_str(), &p);
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        EXPECT_EQ(s, KFORGE_RT_NO_GPU) << kforge_rt_last_error();
        EXPECT_STRNE(kforge_rt_last_error(), "");
        std::printf("SKIP launch: no GPU (%s)\n", kforge_rt_last_error());
        fs::remove_all(out);
        return;
    }
    ASSERT_EQ(s, KFORGE_RT_OK) << kforge_rt_last_error();
    ASSERT_EQ(kforge_rt_num_tensors(p), 2);
    // softmax_short_rows_f32: X [rows, cols] -> Y; read the shape from the spec's dims.
    std::ifstream in(fs::path(package_of(out)) / "runtime.json");
    std::string manifest((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t at = manifest.find("\"shape\"");
    ASSERT_NE(at, std::string::npos);
    long rows = 0, cols = 0;
    ASSERT_EQ(std::sscanf(manifest.c_str() + manifest.find('[', at), "[ %ld , %ld", &rows, &cols),
              2) << manifest;
    std::vector<float> x(rows * cols), y(rows * cols, 0.f);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * i) * 4;
    void *dx = nullptr, *dy = nullptr, *ws = nullptr;
    uint64_t ws_bytes = 0;
    ASSERT_EQ(kforge_rt_workspace_bytes(p, &ws_bytes), KFORGE_RT_OK);
    ASSERT_EQ(cudaMalloc(&dx, x.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dy, y.size() * 4), cudaSuccess);
    if (ws_bytes) ASSERT_EQ(cudaMalloc(&ws, ws_bytes), cudaSuccess);
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cudaMemcpyAsync(dx, x.data(), x.size() * 4, cudaMemcpyHostToDevice, stream);
    void* tensors[] = {dx, dy};
    EXPECT_EQ(kforge_rt_launch(p, stream, tensors, 1, ws, ws_bytes), KFORGE_RT_INVALID_ARGUMENT);
    ASSERT_EQ(kforge_rt_launch(p, stream, tensors, 2, ws, ws_bytes), KFORGE_RT_OK)
        << kforge_rt_last_error();
    cudaMemcpyAsync(y.data(), dy, y.size() * 4, cudaMemcpyDeviceToHost, stream);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    double worst = 0;
    for (long r = 0; r < rows; ++r) {
        double m = -INFINITY, sum = 0;
        for (long c = 0; c < cols; ++c) m = std::max(m, double(x[r * cols + c]));
        for (long c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - m);
        for (long c = 0; c < cols; ++c)
            worst = std::max(worst, std::abs(std::exp(x[r * cols + c] - m) / sum - y[r * cols + c]));
    }
    EXPECT_LT(worst, 1e-5);
    kforge_rt_close(p);
    cudaFree(dx);
    cudaFree(dy);
    if (ws) cudaFree(ws);
    cudaStreamDestroy(stream);
    fs::remove_all(out);
}

}  // namespace
