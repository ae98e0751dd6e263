// A stand-in libcuda.so.1 (a labelled test double, no GPU): cuGetProcAddress_v2 hands out an
// implementation of every runtime/cuda_driver.h entry point that succeeds plausibly (compute
// capability 9.0, 132 SMs, fake context/module/function handles, launches counted, no kernel
// runs; stream capture records work into counted fake graphs), so the C API's
// open/workspace/launch path, graph mode included, runs in CI. Like the real driver it serves an
// entry point at the ABI of the version asked for: cuCtxGetDevice asked for at CUDA 13.0 or later
// is the two-argument cuCtxGetDevice_v2(CUdevice*, CUcontext), which refuses a context it never
// handed out (the real driver dereferences it and crashes).
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
int g_ctx_storage, g_mod_storage, g_fn_storage;
CUcontext g_current = nullptr;
unsigned long g_launches = 0, g_memsets = 0;
unsigned long long g_last_arg1 = 0;
// Stream capture as the real driver does it, counted: work issued on the capturing stream is
// recorded into the graph (not run); a graph launch runs what was recorded. The legacy stream
// cannot be captured; fake_cuda_fail_capture makes every capture fail.
struct FakeGraph {
    unsigned long kernels = 0, memsets = 0;
    unsigned long long last_arg1 = 0;
};
CUstream g_capturing = nullptr;
FakeGraph* g_capture = nullptr;
unsigned long g_captures = 0, g_instantiations = 0, g_updates = 0, g_graph_launches = 0;
bool g_fail_capture = false;
}

extern "C" {
#define EXP __attribute__((visibility("default")))
static CUresult f_cuInit(unsigned) { return CUDA_SUCCESS; }
static CUresult f_cuDriverGetVersion(int* v) { *v = 13000; return CUDA_SUCCESS; }
static CUresult f_cuDeviceGet(CUdevice* d, int) { *d = 0; return CUDA_SUCCESS; }
static CUresult f_cuDeviceGetCount(int* c) { *c = 1; return CUDA_SUCCESS; }
static CUresult f_cuDeviceGetName(char* n, int len, CUdevice) { snprintf(n, len, "Fake H100"); return CUDA_SUCCESS; }
static CUresult f_cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
    switch (a) {
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
        default: *v = 1;
    }
    return CUDA_SUCCESS;
}
static CUresult f_cuDeviceTotalMem(size_t* b, CUdevice) { *b = size_t(80) << 30; return CUDA_SUCCESS; }
static CUresult f_cuDeviceGetUuid(CUuuid* u, CUdevice) { memset(u, 1, sizeof *u); return CUDA_SUCCESS; }
static CUresult f_cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) { *c = (CUcontext)&g_ctx_storage; return CUDA_SUCCESS; }
static CUresult f_cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }
static CUresult f_cuCtxSetCurrent(CUcontext c) { g_current = c; return CUDA_SUCCESS; }
static CUresult f_cuCtxGetCurrent(CUcontext* c) { *c = g_current; return CUDA_SUCCESS; }
static CUresult f_cuCtxGetDevice(CUdevice* d) { *d = 0; return CUDA_SUCCESS; }
static CUresult f_cuCtxGetDevice_v2(CUdevice* d, CUcontext ctx) {
    if (ctx && ctx != (CUcontext)&g_ctx_storage) return CUDA_ERROR_INVALID_CONTEXT;
    *d = 0; return CUDA_SUCCESS;
}
static CUresult f_cuModuleLoadData(CUmodule* m, const void* image) {
    if (!image) return CUDA_ERROR_INVALID_IMAGE;
    *m = (CUmodule)&g_mod_storage; return CUDA_SUCCESS;
}
static CUresult f_cuModuleUnload(CUmodule) { return CUDA_SUCCESS; }
static CUresult f_cuModuleGetFunction(CUfunction* f, CUmodule, const char* name) {
    if (!name || !*name) return CUDA_ERROR_NOT_FOUND;
    *f = (CUfunction)&g_fn_storage; return CUDA_SUCCESS;
}
static CUresult f_cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) { return CUDA_SUCCESS; }
static CUresult f_cuLaunchKernelEx(const CUlaunchConfig* c, CUfunction f, void** args, void**) {
    if (!c || !f || !args) return CUDA_ERROR_INVALID_VALUE;
    unsigned long long arg1 = 0;
    std::memcpy(&arg1, args[1], sizeof arg1);  // every fake kernel has 2+ params
    if (g_capturing && c->hStream == g_capturing) {
        ++g_capture->kernels;
        g_capture->last_arg1 = arg1;
        return CUDA_SUCCESS;
    }
    ++g_launches;
    g_last_arg1 = arg1;
    return CUDA_SUCCESS;
}
static CUresult f_cuMemAlloc(CUdeviceptr* p, size_t b) { *p = (CUdeviceptr)malloc(b ? b : 1); return CUDA_SUCCESS; }
static CUresult f_cuMemFree(CUdeviceptr p) { free((void*)p); return CUDA_SUCCESS; }
static CUresult f_cuMemcpyHtoDAsync(CUdeviceptr, const void*, size_t, CUstream) { return CUDA_SUCCESS; }
static CUresult f_cuMemcpyDtoH(void*, CUdeviceptr, size_t) { return CUDA_SUCCESS; }
static CUresult f_cuMemsetD8Async(CUdeviceptr, unsigned char, size_t, CUstream s) {
    if (g_capturing && s == g_capturing) ++g_capture->memsets; else ++g_memsets;
    return CUDA_SUCCESS;
}
static CUresult f_cuMemGetInfo(size_t* f, size_t* t) { *f = *t = size_t(80) << 30; return CUDA_SUCCESS; }
static int g_obj;
static CUresult f_cuStreamCreate(CUstream* s, unsigned) { *s = (CUstream)&g_obj; return CUDA_SUCCESS; }
static CUresult f_cuStreamDestroy(CUstream) { return CUDA_SUCCESS; }
static CUresult f_cuStreamQuery(CUstream) { return CUDA_SUCCESS; }
static CUresult f_cuEventCreate(CUevent* e, unsigned) { *e = (CUevent)&g_obj; return CUDA_SUCCESS; }
static CUresult f_cuEventRecord(CUevent, CUstream) { return CUDA_SUCCESS; }
static CUresult f_cuEventQuery(CUevent) { return CUDA_SUCCESS; }
static CUresult f_cuEventElapsedTime(float* ms, CUevent, CUevent) { *ms = 1.0f; return CUDA_SUCCESS; }
static CUresult f_cuEventDestroy(CUevent) { return CUDA_SUCCESS; }
static CUresult f_cuGetErrorName(CUresult, const char** s) { *s = "CUDA_ERROR_FAKE"; return CUDA_SUCCESS; }
static CUresult f_cuGetErrorString(CUresult, const char** s) { *s = "fake driver error"; return CUDA_SUCCESS; }
static CUresult f_cuStreamBeginCapture(CUstream s, CUstreamCaptureMode) {
    if (!s || s == CU_STREAM_LEGACY) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (g_fail_capture) return CUDA_ERROR_NOT_SUPPORTED;
    if (g_capturing) return CUDA_ERROR_ILLEGAL_STATE;
    g_capturing = s;
    g_capture = new FakeGraph;
    ++g_captures;
    return CUDA_SUCCESS;
}
static CUresult f_cuStreamEndCapture(CUstream s, CUgraph* g) {
    if (!g_capturing || s != g_capturing) return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    *g = (CUgraph)g_capture;
    g_capturing = nullptr;
    g_capture = nullptr;
    return CUDA_SUCCESS;
}
static CUresult f_cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus* st) {
    *st = (s && s == g_capturing) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}
static CUresult f_cuGraphInstantiateWithFlags(CUgraphExec* e, CUgraph g, unsigned long long) {
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    *e = (CUgraphExec) new FakeGraph(*(FakeGraph*)g);
    ++g_instantiations;
    return CUDA_SUCCESS;
}
static CUresult f_cuGraphExecUpdate(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo* info) {
    FakeGraph* x = (FakeGraph*)e;
    FakeGraph* y = (FakeGraph*)g;
    if (!x || !y) return CUDA_ERROR_INVALID_VALUE;
    if (x->kernels != y->kernels || x->memsets != y->memsets) {  // another topology
        if (info) info->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    *x = *y;
    ++g_updates;
    if (info) info->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    return CUDA_SUCCESS;
}
static CUresult f_cuGraphLaunch(CUgraphExec e, CUstream) {
    FakeGraph* x = (FakeGraph*)e;
    if (!x) return CUDA_ERROR_INVALID_VALUE;
    g_launches += x->kernels;
    g_memsets += x->memsets;
    if (x->kernels) g_last_arg1 = x->last_arg1;
    ++g_graph_launches;
    return CUDA_SUCCESS;
}
static CUresult f_cuGraphExecDestroy(CUgraphExec e) { delete (FakeGraph*)e; return CUDA_SUCCESS; }
static CUresult f_cuGraphDestroy(CUgraph g) { delete (FakeGraph*)g; return CUDA_SUCCESS; }
static CUresult f_cuMemAllocHost(void** p, size_t b) { *p = malloc(b ? b : 1); return CUDA_SUCCESS; }
static CUresult f_cuMemFreeHost(void* p) { free(p); return CUDA_SUCCESS; }

// For the tests: launches and memsets so far; make a context current as a framework (torch) would.
EXP unsigned long fake_cuda_launch_count(void) { return g_launches; }
EXP unsigned long fake_cuda_memset_count(void) { return g_memsets; }
// The second parameter of the last launch (a pointer in the tests' plans).
EXP unsigned long long fake_cuda_last_arg1(void) { return g_last_arg1; }
EXP void fake_cuda_make_context_current(void) { g_current = (CUcontext)&g_ctx_storage; }
// Graph counters: captures begun, graphs instantiated, executable graphs updated, graph launches.
EXP unsigned long fake_cuda_capture_count(void) { return g_captures; }
EXP unsigned long fake_cuda_instantiate_count(void) { return g_instantiations; }
EXP unsigned long fake_cuda_update_count(void) { return g_updates; }
EXP unsigned long fake_cuda_graph_launch_count(void) { return g_graph_launches; }
EXP void fake_cuda_fail_capture(int fail) { g_fail_capture = fail != 0; }

struct Entry { const char* name; void* fn; };
#define E(n) {#n, (void*)&f_##n}
static const Entry kTable[] = {
    E(cuInit), E(cuDriverGetVersion), E(cuDeviceGet), E(cuDeviceGetCount), E(cuDeviceGetName),
    E(cuDeviceGetAttribute), E(cuDeviceTotalMem), E(cuDeviceGetUuid), E(cuDevicePrimaryCtxRetain),
    E(cuDevicePrimaryCtxRelease), E(cuCtxSetCurrent), E(cuCtxGetCurrent), E(cuCtxGetDevice),
    E(cuModuleLoadData), E(cuModuleUnload), E(cuModuleGetFunction), E(cuFuncSetAttribute),
    E(cuLaunchKernelEx), E(cuMemAlloc), E(cuMemFree), E(cuMemcpyHtoDAsync), E(cuMemcpyDtoH),
    E(cuMemsetD8Async), E(cuMemGetInfo), E(cuStreamCreate), E(cuStreamDestroy), E(cuStreamQuery),
    E(cuEventCreate), E(cuEventRecord), E(cuEventQuery), E(cuEventElapsedTime), E(cuEventDestroy),
    E(cuGetErrorName), E(cuGetErrorString), E(cuStreamBeginCapture), E(cuStreamEndCapture),
    E(cuGraphInstantiateWithFlags), E(cuGraphLaunch), E(cuGraphExecDestroy), E(cuGraphDestroy),
    E(cuMemAllocHost), E(cuMemFreeHost), E(cuGraphExecUpdate), E(cuStreamIsCapturing)};

EXP CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t,
                                 CUdriverProcAddressQueryResult* status) {
    if (strcmp(symbol, "cuCtxGetDevice") == 0 && version >= 13000) {
        *pfn = (void*)&f_cuCtxGetDevice_v2;
        if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
    }
    for (const Entry& e : kTable)
        if (strcmp(e.name, symbol) == 0) {
            *pfn = e.fn;
            if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
            return CUDA_SUCCESS;
        }
    *pfn = nullptr;
    if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
}
}
