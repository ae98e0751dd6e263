// The C API of libkforge_runtime.so run through open, workspace, launch and close against the
// fake CUDA driver (fake_cuda_driver.cpp, a labelled test double put first on LD_LIBRARY_PATH by
// CTest), so the path that otherwise runs only on a GPU runs in CI. The package is written here
// (runtime.json, plan.json, stand-in cubin bytes the fake accepts). As under torch, a context is
// already current when open runs: open must take the device from it through the driver table at
// the ABI cuda.h declares (asked for at CUDA 13.0, cuCtxGetDevice is the two-argument variant and
// crashed inside kforge_rt_open on an H100, depending on what a register held).
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/kforge_runtime.h"

namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
}

// A two-kernel program over X -> Y with a zero-initialized scratch buffer T (4096 f32).
fs::path write_package() {
    fs::path d = fs::temp_directory_path() / ("kforge-rt-fake-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    write(d / "runtime.json", R"({"format": 1, "name": "fake_prog", "arch": "sm_90a",
        "built": true, "plan": "plan.json", "cubin": "kernels.cubin", "host_library": "",
        "dims": [["N", 4096]],
        "tensors": [{"name": "X", "dtype": "f32", "shape": [4096], "role": "input"},
                    {"name": "Y", "dtype": "f32", "shape": [4096], "role": "output"}]})");
    write(d / "plan.json", R"({"version": 1, "program_hash": "0", "source_file": "kernels.cu",
        "host_library": "",
        "buffers": [{"name": "T", "dtype": "f32", "shape": [4096], "zero_init": true,
                     "workspace": true}],
        "kernels": [
          {"name": "k0", "symbol": "kforge_k0", "grid": [16, 1, 1], "block": [256, 1, 1],
           "cluster": [1, 1, 1], "smem_bytes": 1024,
           "params": [{"kind": "tensor", "name": "X"}, {"kind": "workspace", "name": "T"},
                      {"kind": "int64", "name": "n", "value": 4096}]},
          {"name": "k1", "symbol": "kforge_k1", "grid": [16, 1, 1], "block": [256, 1, 1],
           "cluster": [2, 1, 1], "smem_bytes": 0,
           "params": [{"kind": "workspace", "name": "T"}, {"kind": "tensor", "name": "Y"},
                      {"kind": "float32", "name": "scale", "value": 0.5}]}]})");
    write(d / "kernels.cubin", std::string("\x7f" "ELF fake cubin", 14));
    return d;
}

template <typename Fn>
Fn fake(const char* name) {
    void* cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!cu) cu = dlopen("libcuda.so.1", RTLD_NOW);
    return cu ? reinterpret_cast<Fn>(dlsym(cu, name)) : nullptr;
}

TEST(RuntimeCApiFakeDriver, OpenWorkspaceLaunchInAContextAlreadyCurrent) {
    auto make_current = fake<void (*)()>("fake_cuda_make_context_current");
    auto launches = fake<unsigned long (*)()>("fake_cuda_launch_count");
    auto memsets = fake<unsigned long (*)()>("fake_cuda_memset_count");
    ASSERT_TRUE(make_current && launches && memsets)
        << "libcuda.so.1 is not the fake driver: run through CTest (LD_LIBRARY_PATH)";
    make_current();  // as torch.empty(1, device='cuda') leaves it

    fs::path dir = write_package();
    kforge_rt_program* p = nullptr;
    ASSERT_EQ(kforge_rt_open(dir.c_str(), &p), KFORGE_RT_OK) << kforge_rt_last_error();
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(kforge_rt_num_tensors(p), 2);
    EXPECT_STREQ(kforge_rt_tensor_name(p, 0), "X");
    EXPECT_STREQ(kforge_rt_tensor_name(p, 1), "Y");
    uint64_t ws = 0;
    ASSERT_EQ(kforge_rt_workspace_bytes(p, &ws), KFORGE_RT_OK);
    EXPECT_EQ(ws, 4096u * 4u);  // T, 256-byte aligned

    std::vector<float> x(4096), y(4096), w(ws / 4);
    void* tensors[] = {x.data(), y.data()};
    unsigned long l0 = launches(), m0 = memsets();
    ASSERT_EQ(kforge_rt_launch(p, nullptr, tensors, 2, w.data(), ws), KFORGE_RT_OK)
        << kforge_rt_last_error();
    EXPECT_EQ(launches() - l0, 2u);
    EXPECT_EQ(memsets() - m0, 1u);  // T is zeroed before every launch sequence
    ASSERT_EQ(kforge_rt_launch(p, nullptr, tensors, 2, w.data(), ws), KFORGE_RT_OK);
    EXPECT_EQ(launches() - l0, 4u);
    EXPECT_EQ(kforge_rt_launch(p, nullptr, tensors, 2, w.data(), ws - 1),
              KFORGE_RT_INVALID_ARGUMENT);
    kforge_rt_close(p);
    fs::remove_all(dir);
}

// A caller that keeps the last output alive while it allocates the next one (KernelBench's
// timing loop) alternates between buffers, and more than the runtime keeps bindings for: every
// launch must use the pointers of its own call, whether its binding was kept or prepared anew.
TEST(RuntimeCApiFakeDriver, AlternatingOutputsLaunchWithTheirOwnPointers) {
    auto make_current = fake<void (*)()>("fake_cuda_make_context_current");
    auto last_arg1 = fake<unsigned long long (*)()>("fake_cuda_last_arg1");
    ASSERT_TRUE(make_current && last_arg1) << "libcuda.so.1 is not the fake driver";
    make_current();
    fs::path dir = write_package();
    kforge_rt_program* p = nullptr;
    ASSERT_EQ(kforge_rt_open(dir.c_str(), &p), KFORGE_RT_OK) << kforge_rt_last_error();
    uint64_t ws = 0;
    ASSERT_EQ(kforge_rt_workspace_bytes(p, &ws), KFORGE_RT_OK);
    std::vector<float> x(4096), w(ws / 4);
    std::vector<std::vector<float>> ys(6, std::vector<float>(4096));
    for (int round = 0; round < 3; ++round)
        for (size_t i = 0; i < ys.size(); ++i) {
            size_t k = round == 1 ? i % 2 : i;  // two buffers in turn, then six (over the cache)
            void* tensors[] = {x.data(), ys[k].data()};
            ASSERT_EQ(kforge_rt_launch(p, nullptr, tensors, 2, w.data(), ws), KFORGE_RT_OK)
                << kforge_rt_last_error();
            EXPECT_EQ(last_arg1(), reinterpret_cast<uintptr_t>(ys[k].data()))
                << "round " << round << " call " << i;  // k1's second parameter is Y
        }
    kforge_rt_close(p);
    fs::remove_all(dir);
}

}  // namespace
