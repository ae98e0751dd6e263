// CudaDevice: launch preparation and the launch sequence through runtime/launch.h,
// stream polling against a deadline, run() and unload().
#include <chrono>
#include <cstring>
#include <thread>

#include "device/cuda_device.h"

namespace kforge::eval {

// The launches through the runtime's launch path (runtime/launch.h): this device's buffers by
// name, the problem's dims, and a builder workspace allocated here (zeroed per sequence).
Status CudaDevice::prepare_launches(const codegen::LaunchPlan& plan) {
    runtime::Bindings b;
    b.pointer_of = [&](const std::string& name) -> Expected<CUdeviceptr> {
        auto it = buffers_.find(name);
        if (it == buffers_.end()) return make_error(name, "unknown buffer");
        return it->second.ptr;
    };
    for (const auto& [name, value] : problem_->dims) b.dims.push_back(value);
    b.sm_count = info_.sm_count;
    b.device_id = static_cast<int>(dev_);
    b.workspace = [&](size_t, uint64_t bytes) -> Expected<CUdeviceptr> {
        CUdeviceptr ws = 0;
        KFORGE_DRV(cuMemAlloc(&ws, std::max<uint64_t>(bytes, 16)));
        workspaces_.push_back(ws);
        workspace_bytes_.push_back(static_cast<int64_t>(bytes));
        return ws;
    };
    for (size_t i = 0; i < plan.kernels.size(); ++i) {
        auto l = runtime::prepare_launch(*api_, module_, plan, i, b);
        if (!l) return l.error();
        launches_.push_back(std::move(*l));
    }
    return Ok{};
}

CudaDevice::Failure CudaDevice::enqueue_resets(bool poison) {
    for (const auto& [name, b] : buffers_) {
        // arena buffers are poisoned at their first launch (enqueue_launches(true))
        if (!b.zero_init && !(poison && b.poison && !b.in_arena)) continue;
        CUresult r = api_->cuMemsetD8Async(b.ptr, b.zero_init ? 0 : 0xFF, b.bytes(), stream_);
        if (r != CUDA_SUCCESS) return fail(r, "memset of " + name);
    }
    for (size_t i = 0; i < workspaces_.size(); ++i) {
        CUresult r = api_->cuMemsetD8Async(workspaces_[i], 0, workspace_bytes_[i], stream_);
        if (r != CUDA_SUCCESS) return fail(r, "memset of a builder workspace");
    }
    return {};
}

CudaDevice::Failure CudaDevice::enqueue_launches(bool poison) {
    auto poison_first_written = [&](size_t launch) -> runtime::LaunchFailure {
        for (const std::string& name : first_written_.at(launch)) {
            const Buffer& b = buffers_.at(name);
            CUresult r = api_->cuMemsetD8Async(b.ptr, 0xFF, b.bytes(), stream_);
            if (r != CUDA_SUCCESS) return {r, "memset of " + name};
        }
        return {};
    };
    runtime::LaunchFailure f =
        poison ? runtime::enqueue_launches(*api_, launches_, stream_, poison_first_written)
               : runtime::enqueue_launches(*api_, launches_, stream_);
    if (!f.ok()) return fail(f.result, f.what);
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

// The page-locked staging buffer holding `bytes` copied from `src`; nullptr with r set when the
// copy failed, or with r == CUDA_SUCCESS when no page-locked memory could be had (the caller
// copies through pageable memory then).
const unsigned char* CudaDevice::stage(CUdeviceptr src, size_t bytes, CUresult& r) {
    r = CUDA_SUCCESS;
    if (bytes > staging_bytes_) {
        if (staging_) api_->cuMemFreeHost(staging_);
        staging_ = nullptr;
        staging_bytes_ = 0;
        if (api_->cuMemAllocHost(&staging_, bytes) != CUDA_SUCCESS) {
            staging_ = nullptr;
            return nullptr;
        }
        staging_bytes_ = bytes;
    }
    r = api_->cuMemcpyDtoH(staging_, src, bytes);
    return r == CUDA_SUCCESS ? static_cast<const unsigned char*>(staging_) : nullptr;
}

CudaDevice::Failure CudaDevice::copy_outputs(TensorData& out) {
    for (const std::string& name : problem_->outputs) {
        const Buffer& b = buffers_.at(name);
        CUresult r = CUDA_SUCCESS;
        if (const unsigned char* staged = stage(b.ptr, b.bytes(), r)) {
            out[name] = from_device_bytes(staged, b.bytes(), b.dtype);
            continue;
        }
        if (r != CUDA_SUCCESS) return fail(r, "copy of output " + name);
        std::vector<unsigned char> bytes(b.bytes());
        r = api_->cuMemcpyDtoH(bytes.data(), b.ptr, bytes.size());
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
    if (f.ok()) f = enqueue_launches(true);
    Failure w = wait(run_timeout_s_);  // drain whatever was enqueued, even after a failure
    if (!f.ok()) return finish(f);
    if (!w.ok()) return finish(w);
    if (!options.copy_outputs) return result;
    f = copy_outputs(result.outputs);
    if (!f.ok()) return finish(f);
    return result;
}

void CudaDevice::unload() {
    if (!loaded_ && buffers_.empty() && !arena_ && !module_.module && !module_.host_library) return;
    for (auto& [name, b] : buffers_)
        if (!b.in_arena) api_->cuMemFree(b.ptr);
    buffers_.clear();
    if (arena_) api_->cuMemFree(arena_);
    arena_ = 0;
    first_written_.clear();
    for (CUdeviceptr w : workspaces_) api_->cuMemFree(w);
    workspaces_.clear();
    workspace_bytes_.clear();
    launches_.clear();
    kernel_groups_ = {};
    runtime::unload_module(*api_, module_);
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
