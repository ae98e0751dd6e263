// Host cost of kforge_rt_launch itself, without a GPU (issue 23, session 23): the runtime's C
// API against the fake CUDA driver of tests/runtime (every driver call returns at once), so the
// figures are what the runtime adds around the driver's own launch (~2-4 us per kernel on an H100
// machine). A package of K plain kernels over X, W -> Y is written to a temporary folder.
//   same pointers   every call with the same tensors: the prepared launches are reused
//   6 outputs       the output pointer cycles through 6 buffers, more than the runtime keeps
//                   bindings for (4): every call prepares its launches anew (param builders
//                   would run here; these plain kernels have none)
// Built and run by rt_host_cost.sh (one line per kernel count).
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/kforge_runtime.h"

namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
    std::ofstream out(p);
    out << text;
}

fs::path write_package(int kernels) {
    fs::path d = fs::temp_directory_path() / ("kforge-rt-host-cost-" + std::to_string(::getpid()));
    fs::create_directories(d);
    write(d / "runtime.json", R"({"format": 1, "name": "host_cost", "arch": "sm_90a",
        "built": true, "plan": "plan.json", "cubin": "kernels.cubin", "host_library": "",
        "dims": [["N", 4096]],
        "tensors": [{"name": "X", "dtype": "f32", "shape": [4096], "role": "input"},
                    {"name": "W", "dtype": "f32", "shape": [4096], "role": "input"},
                    {"name": "Y", "dtype": "f32", "shape": [4096], "role": "output"}]})");
    std::string ks;
    for (int i = 0; i < kernels; ++i)
        ks += std::string(i ? "," : "") + R"({"name": "k)" + std::to_string(i) +
              R"(", "symbol": "kforge_k0", "grid": [16, 1, 1], "block": [256, 1, 1],
               "cluster": [1, 1, 1], "smem_bytes": 1024,
               "params": [{"kind": "tensor", "name": "X"}, {"kind": "tensor", "name": "W"},
                          {"kind": "tensor", "name": "Y"},
                          {"kind": "int64", "name": "n", "value": 4096}]})";
    write(d / "plan.json", R"({"version": 1, "program_hash": "0", "source_file": "kernels.cu",
        "host_library": "", "launch_mode": "stream", "buffers": [], "kernels": [)" + ks + "]}");
    write(d / "kernels.cubin", std::string("\x7f" "ELF fake cubin", 14));
    return d;
}

}  // namespace

int main(int argc, char** argv) {
    void* cu = dlopen("libcuda.so.1", RTLD_NOW);
    void* fn = cu ? dlsym(cu, "fake_cuda_make_context_current") : nullptr;
    auto make_current = reinterpret_cast<void (*)()>(fn);
    if (!make_current) {
        std::fprintf(stderr, "libcuda.so.1 is not the fake driver (LD_LIBRARY_PATH)\n");
        return 2;
    }
    make_current();
    const int kernels = argc > 1 ? std::atoi(argv[1]) : 1;
    const int calls = 200000;
    fs::path dir = write_package(kernels);
    kforge_rt_program* p = nullptr;
    if (kforge_rt_open(dir.c_str(), &p) != KFORGE_RT_OK) {
        std::fprintf(stderr, "open: %s\n", kforge_rt_last_error());
        return 1;
    }
    std::vector<float> x(4096), w(4096);
    std::vector<std::vector<float>> ys(6, std::vector<float>(4096));
    for (int cycle : {1, 6}) {
        std::vector<double> ns;
        ns.reserve(calls);
        for (int i = 0; i < calls; ++i) {
            void* t[] = {x.data(), w.data(), ys[i % cycle].data()};
            auto t0 = std::chrono::steady_clock::now();
            if (kforge_rt_launch(p, nullptr, t, 3, nullptr, 0) != KFORGE_RT_OK) {
                std::fprintf(stderr, "launch: %s\n", kforge_rt_last_error());
                return 1;
            }
            auto t1 = std::chrono::steady_clock::now();
            ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
        }
        std::sort(ns.begin(), ns.end());
        std::printf("{\"kernels\": %d, \"outputs_in_turn\": %d, \"median_ns\": %.0f, "
                    "\"p90_ns\": %.0f}\n",
                    kernels, cycle, ns[ns.size() / 2], ns[ns.size() * 9 / 10]);
    }
    kforge_rt_close(p);
    fs::remove_all(dir);
    return 0;
}
