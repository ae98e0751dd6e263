// CudaDevice::reference (device/cuda_device.h, reference/gpu_reference.h): generate the problem's
// fp64 reference program, compile it with NVRTC for this GPU's arch (once per source: the module is
// kept for the device's lifetime), give every tensor of the graph an fp64 buffer, copy the inputs
// in (host doubles, already rounded to their dtype), launch op by op, poll the stream against a
// deadline, copy the outputs back and free every buffer.
#include <chrono>
#include <map>

#include "common/hash.h"
#include "compile/nvrtc_compile.h"
#include "device/cuda_device.h"
#include "device/timing.h"
#include "reference/gpu_reference.h"
#include "sol/target.h"

namespace kforge::eval {
namespace {

constexpr double kReferenceTimeoutS = 120.0;
constexpr int64_t kMemoryMarginBytes = int64_t{256} << 20;
constexpr size_t kMaxReferenceModules = 16;

std::string mib(int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

std::string_view CudaDevice::reference_kind() const { return kGpuReferenceKind; }

Expected<CUmodule> CudaDevice::reference_module(const std::string& source,
                                                ReferenceResult& result) {
    int major = 0, minor = 0;
    KFORGE_DRV(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_));
    KFORGE_DRV(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_));
    std::string arch = sm_name(major, minor);  // the device's own, no arch-specific features
    std::string key = sha256_hex(source) + "/" + arch;
    if (auto it = reference_modules_.find(key); it != reference_modules_.end()) {
        result.module_cached = true;
        return it->second;
    }
    auto t0 = std::chrono::steady_clock::now();
    compile::CompileOptions options;
    options.arch = arch;
    auto built = compile::nvrtc_compile_cubin(source, options);
    result.time_compile_ms = ms_since(t0);
    if (!built) {
        Error e = built.error();
        if (e.detail.size() > 4000) e.detail = e.detail.substr(0, 4000);
        return make_error("gpu reference", "NVRTC (" + arch + "): " + e.to_string());
    }
    // A worker mostly sees one problem (one source); a bound keeps many problems' modules from
    // adding up in device memory (the supervisor's leak check watches its growth).
    if (reference_modules_.size() >= kMaxReferenceModules) unload_reference_modules();
    CUmodule module = nullptr;
    KFORGE_DRV(cuModuleLoadData(&module, built->cubin.data()));
    reference_modules_[key] = module;
    return module;
}

void CudaDevice::unload_reference_modules() {
    for (auto& [key, module] : reference_modules_) api_->cuModuleUnload(module);
    reference_modules_.clear();
}

ReferenceResult CudaDevice::reference(const Problem& shape, const TensorData& inputs) {
    ReferenceResult result;
    auto failed = [&](std::string message) {
        result.error = std::move(message);
        result.outputs.clear();
        return result;
    };
    if (api_->cuCtxSetCurrent(ctx_) != CUDA_SUCCESS)
        return failed("cannot make the context current");
    auto program = generate_reference_program(shape);
    if (!program) return failed("generating the reference: " + program.error().to_string());
    auto module = reference_module(program->source, result);
    if (!module) return failed(module.error().to_string());
    auto t_run = std::chrono::steady_clock::now();
    size_t free_b = 0, total_b = 0;
    if (api_->cuMemGetInfo(&free_b, &total_b) == CUDA_SUCCESS &&
        program->buffer_bytes + kMemoryMarginBytes > static_cast<int64_t>(free_b))
        return failed("the fp64 buffers need " + mib(program->buffer_bytes) + ", " +
                      mib(static_cast<int64_t>(free_b)) + " of device memory are free");
    std::map<std::string, CUdeviceptr> buffers;
    bool keep_buffers = false;  // a kernel may still run after a timeout: leak, don't free
    auto free_all = [&] {
        if (keep_buffers) return;
        for (auto& [name, ptr] : buffers) api_->cuMemFree(ptr);
        buffers.clear();
    };
    auto driver_failed = [&](CUresult r, const std::string& what) {
        Failure f = fail(r, what);
        result.context_lost = f.context_lost;
        keep_buffers = f.context_lost;
        free_all();
        return failed(f.message);
    };
    for (const Tensor& t : shape.tensors) {
        CUdeviceptr ptr = 0;
        size_t bytes = static_cast<size_t>(std::max<int64_t>(t.numel(), 2)) * 8;
        CUresult r = api_->cuMemAlloc(&ptr, bytes);
        if (r != CUDA_SUCCESS) return driver_failed(r, "allocating the fp64 buffer of " + t.name);
        buffers[t.name] = ptr;
    }
    for (const Tensor* t : shape.graph_inputs()) {
        auto it = inputs.find(t->name);
        if (it == inputs.end() || static_cast<int64_t>(it->second.size()) != t->numel()) {
            free_all();
            return failed("input " + t->name + " missing or mis-sized");
        }
        // On the reference kernels' stream (see CudaDevice::run: the legacy-stream copy races
        // with a non-blocking stream).
        CUresult r = api_->cuMemcpyHtoDAsync(buffers[t->name], it->second.data(),
                                             it->second.size() * 8, stream_);
        if (r != CUDA_SUCCESS) return driver_failed(r, "copying input " + t->name);
    }
    for (const ReferenceLaunch& l : program->launches) {
        CUfunction fn = nullptr;
        CUresult r = api_->cuModuleGetFunction(&fn, *module, l.symbol.c_str());
        if (r != CUDA_SUCCESS) return driver_failed(r, "reference kernel " + l.symbol);
        std::vector<CUdeviceptr> values;
        for (const std::string& name : l.tensors) values.push_back(buffers.at(name));
        std::vector<void*> args;
        for (CUdeviceptr& v : values) args.push_back(&v);
        CUlaunchConfig cfg = launch_config(l.grid, l.block, 0, stream_);
        r = api_->cuLaunchKernelEx(&cfg, fn, args.data(), nullptr);
        if (r != CUDA_SUCCESS) {
            wait(kReferenceTimeoutS);
            return driver_failed(r, "launching reference kernel " + l.symbol);
        }
    }
    Failure w = wait(kReferenceTimeoutS);
    if (!w.ok()) {
        result.context_lost = w.context_lost;
        keep_buffers = w.context_lost;
        free_all();
        return failed("running the reference kernels: " + w.message);
    }
    for (const std::string& name : shape.outputs) {
        const Tensor* t = shape.find_tensor(name);
        std::vector<double> values(static_cast<size_t>(t->numel()));
        CUresult r = api_->cuMemcpyDtoH(values.data(), buffers.at(name), values.size() * 8);
        if (r != CUDA_SUCCESS) return driver_failed(r, "copying output " + name);
        result.outputs[name] = std::move(values);
    }
    free_all();
    result.time_run_ms = ms_since(t_run);
    return result;
}

}  // namespace kforge::eval
