// CudaDevice: launch preparation (plain params, CUTLASS param builders), the launch sequence,
// stream polling against a deadline, run() and unload().
#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "codegen/host_abi.h"
#include "device/cuda_device.h"

namespace kforge::eval {

namespace {
constexpr uint64_t kParamsCapacity = 32 * 1024;  // the kernel parameter limit is 32764 bytes
}

Status CudaDevice::prepare_launch(const codegen::KernelLaunch& k, Launch& l) {
    l.name = k.name;
    KFORGE_DRV(cuModuleGetFunction(&l.function, module_, k.symbol.c_str()));
    for (int i = 0; i < 3; ++i) {
        l.grid[i] = k.grid[i];
        l.block[i] = k.block[i];
        l.cluster[i] = k.cluster[i];
    }
    l.smem_bytes = k.smem_bytes;
    auto pointer_of = [&](const std::string& name) -> Expected<CUdeviceptr> {
        auto it = buffers_.find(name);
        if (it == buffers_.end())
            return make_error("plan." + k.name, "kernel parameter names unknown buffer '" + name +
                                                    "'");
        return it->second.ptr;
    };
    if (!k.param_builder.empty()) {
        if (!host_lib_)
            return make_error("plan." + k.name, "param builder without a host library");
        auto fn = reinterpret_cast<KforgeParamBuilderFn>(dlsym(host_lib_, k.param_builder.c_str()));
        if (!fn) return make_error("plan." + k.name, "host library lacks " + k.param_builder);
        std::vector<void*> tensors;
        for (const std::string& name : k.builder_tensors) {
            auto p = pointer_of(name);
            if (!p) return p.error();
            tensors.push_back(reinterpret_cast<void*>(*p));
        }
        std::vector<int64_t> dims;
        for (const auto& [name, value] : problem_->dims) dims.push_back(value);
        l.storage.assign(kParamsCapacity / 8, 0);
        KforgeBuildArgs args{KFORGE_HOST_ABI_VERSION, static_cast<int32_t>(tensors.size()),
                             tensors.data(), static_cast<int32_t>(dims.size()), dims.data(),
                             nullptr, info_.sm_count, static_cast<int32_t>(dev_)};
        KforgeBuiltLaunch out{};
        out.params = l.storage.data();
        out.params_capacity = kParamsCapacity;
        int rc = fn(&args, &out);
        if (rc == KFORGE_BUILD_NEED_WORKSPACE) {
            CUdeviceptr ws = 0;
            KFORGE_DRV(cuMemAlloc(&ws, std::max<uint64_t>(out.workspace_bytes, 16)));
            workspaces_.push_back(ws);
            workspace_bytes_.push_back(static_cast<int64_t>(out.workspace_bytes));
            args.workspace = reinterpret_cast<void*>(ws);
            rc = fn(&args, &out);
        }
        if (rc != KFORGE_BUILD_OK)
            return make_error("plan." + k.name, k.param_builder + " returned " + std::to_string(rc) +
                                                    " (codegen/host_abi.h KFORGE_BUILD_*)");
        for (int i = 0; i < 3; ++i) {
            l.grid[i] = out.grid[i];
            l.block[i] = out.block[i];
            l.cluster[i] = out.cluster[i] ? out.cluster[i] : 1;
        }
        l.smem_bytes = out.smem_bytes;
        l.args = {l.storage.data()};
    } else {
        l.storage.assign(k.params.size(), 0);
        for (size_t i = 0; i < k.params.size(); ++i) {
            const codegen::KernelParam& p = k.params[i];
            void* slot = &l.storage[i];
            switch (p.kind) {
                case codegen::ParamKind::kTensor:
                case codegen::ParamKind::kWorkspace: {
                    auto ptr = pointer_of(p.name);
                    if (!ptr) return ptr.error();
                    CUdeviceptr v = *ptr;
                    std::memcpy(slot, &v, sizeof v);
                    break;
                }
                case codegen::ParamKind::kInt64: std::memcpy(slot, &p.int_value, 8); break;
                case codegen::ParamKind::kInt32: {
                    int32_t v = static_cast<int32_t>(p.int_value);
                    std::memcpy(slot, &v, 4);
                    break;
                }
                case codegen::ParamKind::kFloat32: {
                    float v = static_cast<float>(p.float_value);
                    std::memcpy(slot, &v, 4);
                    break;
                }
                case codegen::ParamKind::kParamBlob:
                    return make_error("plan." + k.name, "params blob without a param builder");
            }
        }
        for (uint64_t& s : l.storage) l.args.push_back(&s);
    }
    if (l.cluster[0] * l.cluster[1] * l.cluster[2] > 8) {  // beyond the portable cluster size
        CUresult r = api_->cuFuncSetAttribute(
            l.function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
        if (r != CUDA_SUCCESS)
            return make_error("resources_exceeded", k.name + ": a cluster of " +
                                                        std::to_string(l.cluster[0] * l.cluster[1] *
                                                                       l.cluster[2]) +
                                                        " CTAs refused: " +
                                                        driver_error_string(*api_, r));
    }
    if (l.smem_bytes > 0) {
        CUresult r = api_->cuFuncSetAttribute(
            l.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(l.smem_bytes));
        if (r != CUDA_SUCCESS)
            return make_error("resources_exceeded", k.name + ": " + std::to_string(l.smem_bytes) +
                                                        " bytes of dynamic shared memory refused: " +
                                                        driver_error_string(*api_, r));
    }
    return Ok{};
}

CudaDevice::Failure CudaDevice::enqueue_resets(bool poison) {
    for (const auto& [name, b] : buffers_) {
        if (!b.zero_init && !(poison && b.poison)) continue;
        CUresult r = api_->cuMemsetD8Async(b.ptr, b.zero_init ? 0 : 0xFF, b.bytes(), stream_);
        if (r != CUDA_SUCCESS) return fail(r, "memset of " + name);
    }
    for (size_t i = 0; i < workspaces_.size(); ++i) {
        CUresult r = api_->cuMemsetD8Async(workspaces_[i], 0, workspace_bytes_[i], stream_);
        if (r != CUDA_SUCCESS) return fail(r, "memset of a builder workspace");
    }
    return {};
}

CudaDevice::Failure CudaDevice::enqueue_launches() {
    for (Launch& l : launches_) {
        CUlaunchConfig cfg = launch_config(l.grid, l.block, l.smem_bytes, stream_);
        CUlaunchAttribute attr{};
        if (l.cluster[0] * l.cluster[1] * l.cluster[2] != 1) {
            attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attr.value.clusterDim.x = l.cluster[0];
            attr.value.clusterDim.y = l.cluster[1];
            attr.value.clusterDim.z = l.cluster[2];
            cfg.attrs = &attr;
            cfg.numAttrs = 1;
        }
        CUresult r = api_->cuLaunchKernelEx(&cfg, l.function, l.args.data(), nullptr);
        if (r != CUDA_SUCCESS) return fail(r, "launch of " + l.name);
    }
    return {};
}

CudaDevice::Failure CudaDevice::wait(double timeout_s) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    auto pause = std::chrono::microseconds(10);
    for (;;) {
        CUresult r = api_->cuStreamQuery(stream_);
        if (r == CUDA_SUCCESS) return {};
        if (r != CUDA_ERROR_NOT_READY) return fail(r, "kernel execution");
        if (std::chrono::steady_clock::now() > deadline) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.3g s", timeout_s);
            return Failure{EvalStatus::kTimedOut,
                           std::string("the launch sequence did not finish within ") + buf,
                           true};
        }
        std::this_thread::sleep_for(pause);
        // 250 us at most: a sub-millisecond kernel must not wait a 2 ms sleep per iteration
        pause = std::min(pause * 2, std::chrono::microseconds(250));
    }
}

CudaDevice::Failure CudaDevice::copy_outputs(TensorData& out) {
    for (const std::string& name : problem_->outputs) {
        const Buffer& b = buffers_.at(name);
        std::vector<unsigned char> bytes(b.bytes());
        CUresult r = api_->cuMemcpyDtoH(bytes.data(), b.ptr, bytes.size());
        if (r != CUDA_SUCCESS) return fail(r, "copy of output " + name);
        out[name] = from_device_bytes(bytes, b.dtype);
    }
    return {};
}

const std::vector<unsigned char>& CudaDevice::device_bytes(uint64_t inputs_id, const Tensor& t,
                                                           const std::vector<double>& values,
                                                           std::vector<unsigned char>& scratch) {
    if (inputs_id == 0) {
        scratch = to_device_bytes(values, t.dtype);
        return scratch;
    }
    auto entry = converted_.begin();
    while (entry != converted_.end() && entry->first != inputs_id) ++entry;
    if (entry == converted_.end()) {
        converted_.emplace_front(inputs_id, std::map<std::string, std::vector<unsigned char>>{});
    } else if (entry != converted_.begin()) {
        converted_.splice(converted_.begin(), converted_, entry);
    }
    auto& tensors = converted_.front().second;
    std::string key = t.name + "/" + std::string(to_string(t.dtype));
    auto it = tensors.find(key);
    if (it == tensors.end()) {
        it = tensors.emplace(key, to_device_bytes(values, t.dtype)).first;
        converted_bytes_ += static_cast<int64_t>(it->second.size());
        while (converted_bytes_ > kConvertedBytesMax && converted_.size() > 1) {
            for (const auto& [name, b] : converted_.back().second)
                converted_bytes_ -= static_cast<int64_t>(b.size());
            converted_.pop_back();
        }
    }
    return it->second;
}

RunResult CudaDevice::run(const TensorData& inputs, const RunOptions& options) {
    RunResult result;
    auto finish = [&](const Failure& f) {
        result.status = f.status;
        result.message = f.message;
        result.context_lost = f.context_lost;
        result.outputs.clear();
        return result;
    };
    if (!loaded_) return finish({EvalStatus::kLaunchFailed, "no candidate loaded", false});
    for (const Tensor* t : problem_->graph_inputs()) {
        auto it = inputs.find(t->name);
        if (it == inputs.end() || static_cast<int64_t>(it->second.size()) != t->numel())
            return finish({EvalStatus::kLaunchFailed, "input " + t->name + " missing or mis-sized",
                           false});
        std::vector<unsigned char> scratch;
        const std::vector<unsigned char>& bytes =
            device_bytes(options.inputs_id, *t, it->second, scratch);
        // On the launch stream: a synchronous cuMemcpyHtoD runs on the legacy stream, which a
        // non-blocking stream does not wait for, and from pageable memory it returns before its
        // DMA lands, so a short kernel can read a freshly allocated (zeroed) buffer: the likely
        // cause of a correct gemm_small_k_bf16 program writing an all-zero output on the H200
        // (2026-12-01, hidden shape, in a search). Pageable sources are
        // staged before the call returns, so `scratch` may go out of scope.
        CUresult r = api_->cuMemcpyHtoDAsync(buffers_.at(t->name).ptr, bytes.data(), bytes.size(),
                                             stream_);
        if (r != CUDA_SUCCESS) return finish(fail(r, "copy of input " + t->name));
    }
    have_inputs_ = true;
    Failure f = enqueue_resets(true);
    if (f.ok()) f = enqueue_launches();
    Failure w = wait(run_timeout_s_);  // drain whatever was enqueued, even after a failure
    if (!f.ok()) return finish(f);
    if (!w.ok()) return finish(w);
    if (!options.copy_outputs) return result;
    f = copy_outputs(result.outputs);
    if (!f.ok()) return finish(f);
    return result;
}

void CudaDevice::unload() {
    if (!loaded_ && buffers_.empty() && !module_ && !host_lib_) return;
    for (auto& [name, b] : buffers_) api_->cuMemFree(b.ptr);
    buffers_.clear();
    for (CUdeviceptr w : workspaces_) api_->cuMemFree(w);
    workspaces_.clear();
    workspace_bytes_.clear();
    launches_.clear();
    if (module_) api_->cuModuleUnload(module_);
    module_ = nullptr;
    if (host_lib_) dlclose(host_lib_);
    host_lib_ = nullptr;
    loaded_ = false;
    have_inputs_ = false;
}

int64_t CudaDevice::memory_used_bytes() const {
    size_t free_b = 0, total_b = 0;
    if (api_->cuMemGetInfo(&free_b, &total_b) != CUDA_SUCCESS) return 0;
    return static_cast<int64_t>(total_b - free_b);
}

Expected<std::unique_ptr<Device>> make_cuda_device(int index) {
    auto d = CudaDevice::open(index);
    if (!d) return d.error();
    return std::unique_ptr<Device>(std::move(*d));
}

}  // namespace kforge::eval
