// libkforge_runtime.so's C API (runtime/kforge_runtime.h) over the shared launch core
// (runtime/launch.h): the package's buffers live in the caller's workspace, the tensors are the
// caller's pointers, the launches go on the caller's stream.
#include "runtime/kforge_runtime.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "codegen/memory_plan.h"
#include "runtime/launch.h"
#include "runtime/launch_graph.h"
#include "runtime/package.h"

using kforge::Error;
using kforge::Expected;
namespace rt = kforge::runtime;

struct kforge_rt_program {
    std::mutex mutex;
    rt::Package package;
    const rt::DriverApi* api = nullptr;
    CUcontext context = nullptr;
    CUdevice device = 0;
    bool retained_primary = false;  // open made device 0's primary context current
    int sm_count = 0;
    rt::Module module;
    std::vector<int64_t> dims;
    std::map<std::string, uint64_t> buffer_offsets;  // plan buffers in the workspace
    std::vector<uint64_t> builder_offsets;           // per kernel (builders needing workspace)
    std::vector<std::pair<uint64_t, uint64_t>> zeroed;  // (offset, bytes) zeroed per launch
    uint64_t workspace_bytes = 0;
    bool attributes_set = false;  // the functions' attributes, set by the first prepare
    // The last few bindings (tensor pointers + workspace), most recent first: launches are
    // prepared (param builders run) only for pointers not seen lately. More than one, because
    // a caller that keeps the previous call's output alive while the next is allocated (as
    // KernelBench's timing loop does) alternates between two output buffers.
    // In graph mode (plan.json "launch_mode", chosen by measurement at evaluation) each binding
    // also keeps its sequence as an executable CUDA graph, captured on the program's own
    // capture stream (a graph runs on any stream, the legacy one included); an evicted
    // binding's graph is updated in place (cuGraphExecUpdate) for the new pointers.
    struct Binding {
        std::vector<CUdeviceptr> key;
        std::vector<rt::PreparedLaunch> launches;
        CUgraphExec graph = nullptr;
        bool graph_current = false;  // graph holds this binding's launches
    };
    static constexpr size_t kBindings = 4;
    std::vector<Binding> bindings;
    kforge::codegen::LaunchMode mode = kforge::codegen::LaunchMode::kStream;
    std::string mode_note;                // why graph mode fell back to the stream
    std::vector<CUgraphExec> retired;     // replaced graphs, destroyed at close (never in flight then)
    CUstream capture_stream = nullptr;    // created at the first capture
};

namespace {

thread_local std::string last_error;

kforge_rt_status fail(kforge_rt_status s, std::string message) {
    last_error = std::move(message);
    return s;
}

constexpr uint64_t kAlign = 256;
uint64_t align_up(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// "sm_90a" -> (9, 0, true); false when not of that form.
bool parse_arch(const std::string& arch, int& major, int& minor, bool& specific) {
    if (arch.rfind("sm_", 0) != 0 || arch.size() < 5) return false;
    std::string digits = arch.substr(3);
    specific = !digits.empty() && digits.back() == 'a';
    if (specific) digits.pop_back();
    if (digits.size() < 2) return false;
    for (char c : digits)
        if (c < '0' || c > '9') return false;
    major = std::stoi(digits.substr(0, digits.size() - 1));
    minor = digits.back() - '0';
    return true;
}

kforge_rt_status load_on_current_context(kforge_rt_program& p) {
    const rt::DriverApi& api = *p.api;
    CUresult r = api.cuCtxGetCurrent(&p.context);
    if (r == CUDA_SUCCESS && !p.context) {
        CUdevice dev = 0;
        r = api.cuDeviceGet(&dev, 0);
        if (r == CUDA_SUCCESS) r = api.cuDevicePrimaryCtxRetain(&p.context, dev);
        if (r == CUDA_SUCCESS) p.retained_primary = true;
        if (r == CUDA_SUCCESS) r = api.cuCtxSetCurrent(p.context);
    }
    if (r == CUDA_SUCCESS) r = api.cuCtxGetDevice(&p.device);
    if (r != CUDA_SUCCESS)
        return fail(KFORGE_RT_CUDA_ERROR, "no usable CUDA context: " + rt::driver_error_string(api, r));
    int cc_major = 0, cc_minor = 0;
    api.cuDeviceGetAttribute(&cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, p.device);
    api.cuDeviceGetAttribute(&cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, p.device);
    api.cuDeviceGetAttribute(&p.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, p.device);
    const std::string& arch = p.package.manifest.arch;
    int major = 0, minor = 0;
    bool specific = false;
    if (!parse_arch(arch, major, minor, specific))
        return fail(KFORGE_RT_BAD_PACKAGE, "runtime.json .arch: cannot read \"" + arch + "\"");
    bool runs = cc_major == major && (specific ? cc_minor == minor : cc_minor >= minor);
    if (!runs)
        return fail(KFORGE_RT_WRONG_ARCH, "the package was built for " + arch + " but the GPU is "
                                          "compute capability " + std::to_string(cc_major) + "." +
                                          std::to_string(cc_minor) + "; export it again with "
                                          "--arch for this GPU");
    const std::filesystem::path dir(p.package.dir);
    std::ifstream in(dir / p.package.manifest.cubin_file, std::ios::binary);
    if (!in)
        return fail(KFORGE_RT_BAD_PACKAGE, (dir / p.package.manifest.cubin_file).string() +
                                               ": cannot read the cubin");
    std::ostringstream image;
    image << in.rdbuf();
    std::string host;
    if (!p.package.manifest.host_library_file.empty())
        host = (dir / p.package.manifest.host_library_file).string();
    auto m = rt::load_module(api, p.package.plan, image.str(), host);
    if (!m) return fail(KFORGE_RT_CUDA_ERROR, m.error().to_string());
    p.module = std::move(*m);
    return KFORGE_RT_OK;
}

// The plan's arena (its buffers at the memory plan's offsets, codegen/memory_plan.h), then
// builder workspaces, each 256-byte aligned, in one caller workspace.
kforge_rt_status lay_out_workspace(kforge_rt_program& p) {
    const kforge::codegen::LaunchPlan& plan = p.package.plan;
    auto placed = rt::arena_pointers(plan, 0);
    if (!placed) return fail(KFORGE_RT_BAD_PACKAGE, placed.error().to_string());
    for (const auto& [name, offset] : *placed) p.buffer_offsets[name] = offset;
    for (const kforge::codegen::BufferDecl& b : plan.buffers)
        if (b.zero_init)
            p.zeroed.emplace_back(static_cast<uint64_t>(b.offset),
                                  std::max<uint64_t>(kforge::codegen::buffer_bytes(b), 1));
    uint64_t at = align_up(static_cast<uint64_t>(plan.memory.arena_bytes));
    p.builder_offsets.assign(plan.kernels.size(), 0);
    for (size_t i = 0; i < plan.kernels.size(); ++i) {
        auto bytes = rt::builder_workspace_bytes(p.module, plan, i, p.dims, p.sm_count,
                                                 static_cast<int>(p.device));
        if (!bytes) return fail(KFORGE_RT_BUILDER_FAILED, bytes.error().to_string());
        if (*bytes == 0) continue;
        p.builder_offsets[i] = at;
        p.zeroed.emplace_back(at, *bytes);
        at = align_up(at + *bytes);
    }
    p.workspace_bytes = at;
    return KFORGE_RT_OK;
}

// The launches for `tensors` and `workspace`, prepared (param builders run) into `out`.
kforge_rt_status prepare(kforge_rt_program& p, const std::vector<CUdeviceptr>& tensors,
                         CUdeviceptr workspace, std::vector<rt::PreparedLaunch>& out) {
    const auto& m = p.package.manifest;
    std::map<std::string, CUdeviceptr> where;
    for (size_t i = 0; i < m.tensors.size(); ++i) where[m.tensors[i].name] = tensors[i];
    for (const auto& [name, offset] : p.buffer_offsets) where[name] = workspace + offset;
    rt::Bindings b;
    b.pointer_of = [&](const std::string& name) -> Expected<CUdeviceptr> {
        auto it = where.find(name);
        if (it == where.end()) return kforge::make_error(name, "unknown buffer");
        return it->second;
    };
    b.dims = p.dims;
    b.sm_count = p.sm_count;
    b.device_id = static_cast<int>(p.device);
    b.workspace = [&](size_t index, uint64_t) -> Expected<CUdeviceptr> {
        return workspace + p.builder_offsets[index];
    };
    b.set_function_attributes = !p.attributes_set;
    std::vector<rt::PreparedLaunch> launches;
    for (size_t i = 0; i < p.package.plan.kernels.size(); ++i) {
        auto l = rt::prepare_launch(*p.api, p.module, p.package.plan, i, b);
        if (!l) return fail(KFORGE_RT_BUILDER_FAILED, l.error().to_string());
        launches.push_back(std::move(*l));
    }
    out = std::move(launches);
    p.attributes_set = true;
    return KFORGE_RT_OK;
}

// The prepared launches for `key` (tensor pointers, then the workspace): a recent binding's,
// moved to the front, or newly prepared in place of the least recently used.
kforge_rt_status bind(kforge_rt_program& p, std::vector<CUdeviceptr> key,
                      std::vector<rt::PreparedLaunch>*& launches) {
    auto& bs = p.bindings;
    for (size_t i = 0; i < bs.size(); ++i) {
        if (bs[i].key != key) continue;
        if (i != 0) std::rotate(bs.begin(), bs.begin() + i, bs.begin() + i + 1);
        launches = &bs.front().launches;
        return KFORGE_RT_OK;
    }
    kforge_rt_program::Binding b;
    CUdeviceptr workspace = key.back();
    std::vector<CUdeviceptr> tensors(key.begin(), key.end() - 1);
    if (kforge_rt_status s = prepare(p, tensors, workspace, b.launches); s != KFORGE_RT_OK)
        return s;
    b.key = std::move(key);
    if (bs.size() == kforge_rt_program::kBindings) {
        b.graph = bs.back().graph;  // updated for the new pointers at the next graph launch
        bs.pop_back();
    }
    bs.insert(bs.begin(), std::move(b));
    launches = &bs.front().launches;
    return KFORGE_RT_OK;
}

// Graph mode: the binding's graph launched on `stream`, captured (or updated in place) first
// when its pointers are new - on the program's capture stream, so the caller's stream may be
// any, the legacy one included. On a stream the caller is capturing `launched` stays false for
// this call (the kernels join that capture one by one); a capture or an instantiation that
// fails gives graph mode up for the program (kforge_rt_launch_mode_note says why). Either way
// the caller then launches on the stream.
kforge_rt_status launch_graph(kforge_rt_program& p, kforge_rt_program::Binding& b, CUstream stream,
                              const std::function<rt::LaunchFailure(CUstream)>& sequence,
                              bool& launched) {
    launched = false;
    const rt::DriverApi& api = *p.api;
    std::string why;
    if (!rt::stream_takes_graph(api, stream, why)) {
        p.mode_note = why;
        return KFORGE_RT_OK;
    }
    if (!b.graph_current) {
        Expected<rt::CapturedGraph> g = kforge::make_error("graph capture", "no capture stream");
        CUresult r = p.capture_stream ? CUDA_SUCCESS
                                      : api.cuStreamCreate(&p.capture_stream, CU_STREAM_NON_BLOCKING);
        if (r != CUDA_SUCCESS)
            g = kforge::make_error("graph capture", "cuStreamCreate: " + rt::driver_error_string(api, r));
        else
            g = rt::capture_graph(api, p.capture_stream, [&] { return sequence(p.capture_stream); },
                                  b.graph);
        if (!g) {
            p.mode = kforge::codegen::LaunchMode::kStream;
            p.mode_note = g.error().to_string();
            return KFORGE_RT_OK;
        }
        if (b.graph && !g->updated) p.retired.push_back(b.graph);
        b.graph = g->exec;
        b.graph_current = true;
    }
    CUresult r = api.cuGraphLaunch(b.graph, stream);
    if (r != CUDA_SUCCESS)
        return fail(KFORGE_RT_CUDA_ERROR, "graph launch: " + rt::driver_error_string(api, r));
    launched = true;
    p.mode_note.clear();
    return KFORGE_RT_OK;
}

}  // namespace

extern "C" {

int32_t kforge_rt_abi_version(void) { return KFORGE_RT_ABI_VERSION; }

const char* kforge_rt_last_error(void) { return last_error.c_str(); }

const char* kforge_rt_status_name(kforge_rt_status s) {
    switch (s) {
        case KFORGE_RT_OK: return "ok";
        case KFORGE_RT_INVALID_ARGUMENT: return "invalid_argument";
        case KFORGE_RT_BAD_PACKAGE: return "bad_package";
        case KFORGE_RT_NOT_BUILT: return "not_built";
        case KFORGE_RT_NO_GPU: return "no_gpu";
        case KFORGE_RT_WRONG_ARCH: return "wrong_arch";
        case KFORGE_RT_WRONG_CONTEXT: return "wrong_context";
        case KFORGE_RT_CUDA_ERROR: return "cuda_error";
        case KFORGE_RT_BUILDER_FAILED: return "builder_failed";
    }
    return "unknown";
}

kforge_rt_status kforge_rt_open(const char* dir, kforge_rt_program** out) {
    last_error.clear();
    if (!out) return fail(KFORGE_RT_INVALID_ARGUMENT, "kforge_rt_open: out is NULL");
    *out = nullptr;
    if (!dir) return fail(KFORGE_RT_INVALID_ARGUMENT, "kforge_rt_open: dir is NULL");
    auto package = rt::read_package(dir);
    if (!package) return fail(KFORGE_RT_BAD_PACKAGE, package.error().to_string());
    if (!package->manifest.built)
        return fail(KFORGE_RT_NOT_BUILT,
                    std::string(dir) + ": exported with --no-build (plan and spec only, no "
                                       "cubin): run `kforge export` again without --no-build "
                                       "on a machine with nvcc to launch it");
    auto api = rt::driver_api();
    if (!api) return fail(KFORGE_RT_NO_GPU, api.error().to_string());
    auto p = std::make_unique<kforge_rt_program>();
    p->package = std::move(*package);
    p->api = *api;
    for (const auto& [name, value] : p->package.manifest.dims) p->dims.push_back(value);
    p->mode = p->package.plan.launch_mode;
    kforge_rt_status s = load_on_current_context(*p);
    if (s == KFORGE_RT_OK) s = lay_out_workspace(*p);
    if (s != KFORGE_RT_OK) {
        std::string why = last_error;
        kforge_rt_close(p.release());
        last_error = why;
        return s;
    }
    *out = p.release();
    return KFORGE_RT_OK;
}

void kforge_rt_close(kforge_rt_program* p) {
    if (!p) return;
    for (const auto& b : p->bindings)
        if (b.graph) p->api->cuGraphExecDestroy(b.graph);
    for (CUgraphExec g : p->retired) p->api->cuGraphExecDestroy(g);
    if (p->capture_stream) p->api->cuStreamDestroy(p->capture_stream);
    rt::unload_module(*p->api, p->module);
    if (p->retained_primary) p->api->cuDevicePrimaryCtxRelease(p->device);
    delete p;
}

int32_t kforge_rt_num_tensors(const kforge_rt_program* p) {
    return p ? static_cast<int32_t>(p->package.manifest.tensors.size()) : 0;
}

const char* kforge_rt_tensor_name(const kforge_rt_program* p, int32_t i) {
    if (!p || i < 0 || i >= kforge_rt_num_tensors(p)) return nullptr;
    return p->package.manifest.tensors[i].name.c_str();
}

kforge_rt_status kforge_rt_workspace_bytes(const kforge_rt_program* p, uint64_t* bytes) {
    if (!p || !bytes) return fail(KFORGE_RT_INVALID_ARGUMENT, "kforge_rt_workspace_bytes: NULL");
    *bytes = p->workspace_bytes;
    return KFORGE_RT_OK;
}

kforge_rt_status kforge_rt_launch(kforge_rt_program* p, void* stream, void* const* tensors,
                                  int32_t num_tensors, void* workspace, uint64_t workspace_bytes) {
    last_error.clear();
    if (!p) return fail(KFORGE_RT_INVALID_ARGUMENT, "kforge_rt_launch: program is NULL");
    std::lock_guard<std::mutex> lock(p->mutex);
    const auto& m = p->package.manifest;
    if (num_tensors != static_cast<int32_t>(m.tensors.size()) || !tensors)
        return fail(KFORGE_RT_INVALID_ARGUMENT,
                    m.name + " takes " + std::to_string(m.tensors.size()) + " tensors, got " +
                        std::to_string(num_tensors));
    std::vector<CUdeviceptr> ptrs;
    for (int32_t i = 0; i < num_tensors; ++i) {
        if (!tensors[i])
            return fail(KFORGE_RT_INVALID_ARGUMENT, "tensor " + m.tensors[i].name + " is NULL");
        ptrs.push_back(reinterpret_cast<CUdeviceptr>(tensors[i]));
    }
    if (workspace_bytes < p->workspace_bytes || (p->workspace_bytes > 0 && !workspace))
        return fail(KFORGE_RT_INVALID_ARGUMENT,
                    m.name + " needs " + std::to_string(p->workspace_bytes) +
                        " bytes of workspace, got " + std::to_string(workspace_bytes));
    const rt::DriverApi& api = *p->api;
    CUcontext current = nullptr;
    api.cuCtxGetCurrent(&current);
    if (!current && api.cuCtxSetCurrent(p->context) == CUDA_SUCCESS)
        current = p->context;  // a thread with no context yet: the program's is the device's
    if (current != p->context)
        return fail(KFORGE_RT_WRONG_CONTEXT, m.name + " was opened in another CUDA context (a "
                                             "program serves the device it was opened on)");
    auto ws = reinterpret_cast<CUdeviceptr>(workspace);
    std::vector<CUdeviceptr> key = std::move(ptrs);
    key.push_back(ws);
    std::vector<rt::PreparedLaunch>* launches = nullptr;
    if (kforge_rt_status s = bind(*p, std::move(key), launches); s != KFORGE_RT_OK) return s;
    auto cu_stream = static_cast<CUstream>(stream);
    auto sequence = [&](CUstream on) -> rt::LaunchFailure {
        for (const auto& [offset, bytes] : p->zeroed) {
            CUresult r = api.cuMemsetD8Async(ws + offset, 0, bytes, on);
            if (r != CUDA_SUCCESS) return {r, "workspace zeroing"};
        }
        return rt::enqueue_launches(api, *launches, on);
    };
    if (p->mode == kforge::codegen::LaunchMode::kGraph) {
        bool launched = false;
        kforge_rt_status s = launch_graph(*p, p->bindings.front(), cu_stream, sequence, launched);
        if (s != KFORGE_RT_OK || launched) return s;
    }
    rt::LaunchFailure f = sequence(cu_stream);
    if (!f.ok()) return fail(KFORGE_RT_CUDA_ERROR, f.what + ": " + rt::driver_error_string(api, f.result));
    return KFORGE_RT_OK;
}

const char* kforge_rt_launch_mode(const kforge_rt_program* p) {
    if (!p) return "";
    return p->mode == kforge::codegen::LaunchMode::kGraph ? "graph" : "stream";
}

const char* kforge_rt_launch_mode_note(const kforge_rt_program* p) {
    return p ? p->mode_note.c_str() : "";
}

kforge_rt_status kforge_rt_set_launch_mode(kforge_rt_program* p, const char* mode) {
    if (!p || !mode) return fail(KFORGE_RT_INVALID_ARGUMENT, "kforge_rt_set_launch_mode: NULL");
    auto m = kforge::codegen::launch_mode_from_string(mode);
    if (!m) return fail(KFORGE_RT_INVALID_ARGUMENT, "kforge_rt_set_launch_mode: " + m.error().message);
    std::lock_guard<std::mutex> lock(p->mutex);
    p->mode = *m;
    p->mode_note.clear();
    return KFORGE_RT_OK;
}

}  // extern "C"
