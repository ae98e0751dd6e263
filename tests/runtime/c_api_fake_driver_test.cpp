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

#include <cuda.h>

#include "runtime/kforge_runtime.h"

namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
}

// A two-kernel program over X -> Y with a zero-initialized scratch buffer T (4096 f32), launched
// in `mode` (plan.json "launch_mode").
fs::path write_package(const std::string& mode = "stream") {
    fs::path d = fs::temp_directory_path() / ("kforge-rt-fake-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    write(d / "runtime.json", R"({"format": 1, "name": "fake_prog", "arch": "sm_90a",
        "built": true, "plan": "plan.json", "cubin": "kernels.cubin", "host_library": "",
        "dims": [["N", 4096]],
        "tensors": [{"name": "X", "dtype": "f32", "shape": [4096], "role": "input"},
                    {"name": "Y", "dtype": "f32", "shape": [4096], "role": "output"}]})");
    write(d / "plan.json", R"({"version": 1, "program_hash": "0", "source_file": "kernels.cu",
        "host_library": "", "launch_mode": ")" + mode + R"(",
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

// The fake driver's graph counters (captures, instantiations, updates, graph launches).
struct GraphCounts {
    unsigned long captures, instantiations, updates, graph_launches, launches;
};
GraphCounts graph_counts() {
    return {fake<unsigned long (*)()>("fake_cuda_capture_count")(),
            fake<unsigned long (*)()>("fake_cuda_instantiate_count")(),
            fake<unsigned long (*)()>("fake_cuda_update_count")(),
            fake<unsigned long (*)()>("fake_cuda_graph_launch_count")(),
            fake<unsigned long (*)()>("fake_cuda_launch_count")()};
}

struct GraphProgram {
    fs::path dir;
    kforge_rt_program* p = nullptr;
    uint64_t ws = 0;
    std::vector<float> x = std::vector<float>(4096), w;
    ~GraphProgram() {
        kforge_rt_close(p);
        fs::remove_all(dir);
    }
};

void open_graph_program(GraphProgram& g) {
    ASSERT_NE(fake<void (*)(int)>("fake_cuda_fail_capture"), nullptr) << "not the fake driver";
    fake<void (*)()>("fake_cuda_make_context_current")();
    g.dir = write_package("graph");
    ASSERT_EQ(kforge_rt_open(g.dir.c_str(), &g.p), KFORGE_RT_OK) << kforge_rt_last_error();
    EXPECT_STREQ(kforge_rt_launch_mode(g.p), "graph");
    ASSERT_EQ(kforge_rt_workspace_bytes(g.p, &g.ws), KFORGE_RT_OK);
    g.w.resize(g.ws / 4);
}

void* const kStream = reinterpret_cast<void*>(uintptr_t{0x5000});  // a created stream's handle

// Graph mode: the first call captures the sequence (T's zeroing and both kernels) and
// instantiates it; later calls with the same pointers and stream replay it, never capturing
// again; each replay runs both kernels.
TEST(RuntimeCApiFakeDriver, GraphModeCapturesOnceAndReplays) {
    GraphProgram g;
    ASSERT_NO_FATAL_FAILURE(open_graph_program(g));
    std::vector<float> y(4096);
    void* tensors[] = {g.x.data(), y.data()};
    const GraphCounts before = graph_counts();
    for (int i = 0; i < 3; ++i)
        ASSERT_EQ(kforge_rt_launch(g.p, kStream, tensors, 2, g.w.data(), g.ws), KFORGE_RT_OK)
            << kforge_rt_last_error();
    const GraphCounts after = graph_counts();
    EXPECT_EQ(after.captures - before.captures, 1u);
    EXPECT_EQ(after.instantiations - before.instantiations, 1u);
    EXPECT_EQ(after.graph_launches - before.graph_launches, 3u);
    EXPECT_EQ(after.launches - before.launches, 6u);  // two kernels per replay, none outside
    EXPECT_STREQ(kforge_rt_launch_mode_note(g.p), "");
    EXPECT_EQ(fake<unsigned long long (*)()>("fake_cuda_last_arg1")(),
              reinterpret_cast<uintptr_t>(y.data()));
}

// New pointers re-capture: two outputs in turn get a graph each (kept, as their bindings are);
// more outputs than the runtime keeps bindings for update an evicted binding's graph in place
// (cuGraphExecUpdate) rather than instantiating more, and every replay uses its call's pointers.
TEST(RuntimeCApiFakeDriver, GraphModeRecapturesWhenPointersChange) {
    GraphProgram g;
    ASSERT_NO_FATAL_FAILURE(open_graph_program(g));
    auto last_arg1 = fake<unsigned long long (*)()>("fake_cuda_last_arg1");
    std::vector<std::vector<float>> ys(6, std::vector<float>(4096));
    const GraphCounts before = graph_counts();
    for (int i = 0; i < 6; ++i) {  // two outputs in turn
        void* tensors[] = {g.x.data(), ys[i % 2].data()};
        ASSERT_EQ(kforge_rt_launch(g.p, kStream, tensors, 2, g.w.data(), g.ws), KFORGE_RT_OK);
        EXPECT_EQ(last_arg1(), reinterpret_cast<uintptr_t>(ys[i % 2].data())) << i;
    }
    GraphCounts mid = graph_counts();
    EXPECT_EQ(mid.captures - before.captures, 2u);
    EXPECT_EQ(mid.instantiations - before.instantiations, 2u);
    EXPECT_EQ(mid.graph_launches - before.graph_launches, 6u);
    for (int i = 0; i < 6; ++i) {  // six outputs: over the four bindings kept
        void* tensors[] = {g.x.data(), ys[i].data()};
        ASSERT_EQ(kforge_rt_launch(g.p, kStream, tensors, 2, g.w.data(), g.ws), KFORGE_RT_OK);
        EXPECT_EQ(last_arg1(), reinterpret_cast<uintptr_t>(ys[i].data())) << i;
    }
    const GraphCounts after = graph_counts();
    EXPECT_EQ(after.instantiations - before.instantiations, 4u);  // one per binding kept
    EXPECT_EQ(after.updates - mid.updates, 2u);                   // ys[4], ys[5] reuse graphs
    EXPECT_EQ(after.launches - before.launches, 24u);
    // a graph is tied to no stream: the same pointers on another stream, or on the legacy
    // stream (torch's default), replay it without a capture
    void* tensors[] = {g.x.data(), ys[5].data()};
    void* other = reinterpret_cast<void*>(uintptr_t{0x6000});
    ASSERT_EQ(kforge_rt_launch(g.p, other, tensors, 2, g.w.data(), g.ws), KFORGE_RT_OK);
    ASSERT_EQ(kforge_rt_launch(g.p, nullptr, tensors, 2, g.w.data(), g.ws), KFORGE_RT_OK);
    EXPECT_EQ(graph_counts().captures, after.captures);
    EXPECT_EQ(graph_counts().graph_launches - after.graph_launches, 2u);
}

// The legacy stream (torch's default) gets the graph, captured on the program's own stream;
// where no graph can be had the call launches kernel by kernel: a stream the caller is
// capturing (the kernels join the caller's graph), a capture the driver refuses (the program
// gives graph mode up, saying why).
TEST(RuntimeCApiFakeDriver, GraphModeFallsBackToTheStreamWithAReason) {
    GraphProgram g;
    ASSERT_NO_FATAL_FAILURE(open_graph_program(g));
    std::vector<float> y(4096);
    void* tensors[] = {g.x.data(), y.data()};
    GraphCounts before = graph_counts();
    ASSERT_EQ(kforge_rt_launch(g.p, nullptr, tensors, 2, g.w.data(), g.ws), KFORGE_RT_OK)
        << kforge_rt_last_error();
    GraphCounts after = graph_counts();
    EXPECT_EQ(after.captures - before.captures, 1u);
    EXPECT_EQ(after.graph_launches - before.graph_launches, 1u);
    EXPECT_EQ(after.launches - before.launches, 2u);
    EXPECT_STREQ(kforge_rt_launch_mode_note(g.p), "");
    EXPECT_STREQ(kforge_rt_launch_mode(g.p), "graph");

    // the caller's own capture on kStream: kforge must not begin one inside it
    using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
    auto get_proc = fake<GetProc>("cuGetProcAddress_v2");
    void *begin = nullptr, *end = nullptr;
    ASSERT_EQ(get_proc("cuStreamBeginCapture", &begin, 10010, 0, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(get_proc("cuStreamEndCapture", &end, 10000, 0, nullptr), CUDA_SUCCESS);
    auto stream = static_cast<CUstream>(kStream);
    ASSERT_EQ(reinterpret_cast<CUresult (*)(CUstream, CUstreamCaptureMode)>(begin)(
                  stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    before = graph_counts();
    EXPECT_EQ(kforge_rt_launch(g.p, kStream, tensors, 2, g.w.data(), g.ws), KFORGE_RT_OK)
        << kforge_rt_last_error();
    after = graph_counts();
    CUgraph caller_graph = nullptr;
    ASSERT_EQ(reinterpret_cast<CUresult (*)(CUstream, CUgraph*)>(end)(stream, &caller_graph),
              CUDA_SUCCESS);
    EXPECT_EQ(after.captures, before.captures);  // no capture of kforge's own
    EXPECT_NE(std::string(kforge_rt_launch_mode_note(g.p)).find("captured by the caller"),
              std::string::npos);
    void* graph_destroy = nullptr;
    ASSERT_EQ(get_proc("cuGraphDestroy", &graph_destroy, 10000, 0, nullptr), CUDA_SUCCESS);
    reinterpret_cast<CUresult (*)(CUgraph)>(graph_destroy)(caller_graph);

    fake<void (*)(int)>("fake_cuda_fail_capture")(1);
    std::vector<float> y2(4096);  // new pointers: a capture is needed, and refused
    tensors[1] = y2.data();
    before = graph_counts();
    EXPECT_EQ(kforge_rt_launch(g.p, kStream, tensors, 2, g.w.data(), g.ws), KFORGE_RT_OK);
    fake<void (*)(int)>("fake_cuda_fail_capture")(0);
    after = graph_counts();
    EXPECT_EQ(after.launches - before.launches, 2u);
    EXPECT_STREQ(kforge_rt_launch_mode(g.p), "stream");
    EXPECT_NE(std::string(kforge_rt_launch_mode_note(g.p)).find("cuStreamBeginCapture"),
              std::string::npos) << kforge_rt_launch_mode_note(g.p);

    EXPECT_EQ(kforge_rt_set_launch_mode(g.p, "graphs"), KFORGE_RT_INVALID_ARGUMENT);
    EXPECT_EQ(kforge_rt_set_launch_mode(g.p, "graph"), KFORGE_RT_OK);
    EXPECT_STREQ(kforge_rt_launch_mode(g.p), "graph");
}

// The plan's buffers share the workspace by the memory plan: A -> B -> C -> Y through three
// intermediates of 16 KiB whose first and last fit in one slot (plan.json without offsets, as
// an export older than the plan has it: placed on reading).
TEST(RuntimeCApiFakeDriver, WorkspaceHoldsTheArenaNotEveryBuffer) {
    fake<void (*)()>("fake_cuda_make_context_current")();
    fs::path d = write_package();
    write(d / "plan.json", R"({"version": 1, "program_hash": "0", "host_library": "",
        "buffers": [{"name": "A", "dtype": "f32", "shape": [4096]},
                    {"name": "B", "dtype": "f32", "shape": [4096]},
                    {"name": "C", "dtype": "f32", "shape": [4096]}],
        "kernels": [
          {"name": "k0", "symbol": "k0", "params": [{"kind": "tensor", "name": "X"}, {"kind": "tensor", "name": "A"}]},
          {"name": "k1", "symbol": "k1", "params": [{"kind": "tensor", "name": "A"}, {"kind": "tensor", "name": "B"}]},
          {"name": "k2", "symbol": "k2", "params": [{"kind": "tensor", "name": "B"}, {"kind": "tensor", "name": "C"}]},
          {"name": "k3", "symbol": "k3", "params": [{"kind": "tensor", "name": "C"}, {"kind": "tensor", "name": "Y"}]}]})");
    kforge_rt_program* p = nullptr;
    ASSERT_EQ(kforge_rt_open(d.c_str(), &p), KFORGE_RT_OK) << kforge_rt_last_error();
    uint64_t ws = 0;
    ASSERT_EQ(kforge_rt_workspace_bytes(p, &ws), KFORGE_RT_OK);
    EXPECT_EQ(ws, 2u * 4096u * 4u);
    kforge_rt_close(p);
    // offsets that alias two live buffers are refused when the package is read
    write(d / "plan.json", R"({"version": 1, "host_library": "",
        "memory": {"arena_bytes": 16384},
        "buffers": [{"name": "A", "dtype": "f32", "shape": [4096], "offset": 0},
                    {"name": "B", "dtype": "f32", "shape": [4096], "offset": 0}],
        "kernels": [
          {"name": "k0", "symbol": "k0", "params": [{"kind": "tensor", "name": "X"}, {"kind": "tensor", "name": "A"}]},
          {"name": "k1", "symbol": "k1", "params": [{"kind": "tensor", "name": "A"}, {"kind": "tensor", "name": "B"}]},
          {"name": "k2", "symbol": "k2", "params": [{"kind": "tensor", "name": "B"}, {"kind": "tensor", "name": "Y"}]}]})");
    EXPECT_EQ(kforge_rt_open(d.c_str(), &p), KFORGE_RT_BAD_PACKAGE);
    EXPECT_NE(std::string(kforge_rt_last_error()).find("shares arena bytes with A"), std::string::npos)
        << kforge_rt_last_error();
    fs::remove_all(d);
}

}  // namespace
