// The CUDA device (device/device.h) on one GPU, through the driver API only (device/cuda_driver.h):
// load() allocates the problem's inputs, params and outputs plus the plan's buffers (one arena at
// the memory plan's offsets, codegen/memory_plan.h) and loads
// and prepares the candidate through the runtime's launch path (runtime/launch.h, the one
// exported programs use too: the cubin, each launch's function, the host library's param
// builders with a workspace allocated here on request). run() copies inputs in (converted to the
// device dtype, f32/f16/bf16 with round-to-nearest-even), poisons outputs and intermediates with
// 0xFF bytes (NaN in every float format; an arena buffer just before the launch that first
// writes it), zeroes zero_init buffers and builder workspaces, issues
// the launches with cuLaunchKernelEx (cluster attribute where cluster != 1), polls the stream
// against Candidate::run_timeout_s (never blocks forever: kTimedOut) and copies outputs back.
// time(): see device/cuda_device_time.cpp. Driver failures map through classify_driver_error().
#pragma once

#include <cuda.h>

#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device/cuda_driver.h"
#include "device/device.h"
#include "device/kernel_times.h"
#include "device/nvml_sampler.h"
#include "runtime/launch.h"

namespace kforge::eval {

// Host values -> the bytes of `dtype` on the device (f32/f16/bf16 round to nearest even,
// integers truncate), and back. Device-free, unit tested.
std::vector<unsigned char> to_device_bytes(const std::vector<double>& v, DType dtype);
std::vector<double> from_device_bytes(const std::vector<unsigned char>& bytes, DType dtype);
std::vector<double> from_device_bytes(const unsigned char* bytes, size_t size, DType dtype);

class CudaDevice final : public Device {
public:
    static Expected<std::unique_ptr<CudaDevice>> open(int index);
    ~CudaDevice() override;

    DeviceInfo info() const override { return info_; }
    Status load(const Candidate& candidate) override;
    using Device::run;
    RunResult run(const TensorData& inputs, const RunOptions& options) override;
    TimingResult time(const TimingOptions& options) override;
    void unload() override;
    int64_t memory_used_bytes() const override;
    std::string_view reference_kind() const override;
    // device/cuda_device_reference.cpp: NVRTC module per (source, arch), cached for the device's
    // lifetime; fp64 buffers for every tensor, freed before returning.
    ReferenceResult reference(const Problem& shape, const TensorData& inputs) override;

private:
    struct Buffer {
        CUdeviceptr ptr = 0;
        DType dtype = DType::kF32;
        int64_t numel = 0;
        bool zero_init = false;
        bool poison = false;  // outputs and intermediates
        bool in_arena = false;  // a plan buffer at its offset in arena_ (not freed alone)
        int64_t bytes() const { return numel * dtype_bytes(dtype); }
    };
    struct Failure {
        EvalStatus status = EvalStatus::kPassed;
        std::string message;
        bool context_lost = false;
        bool ok() const { return status == EvalStatus::kPassed; }
    };

    CudaDevice(const DriverApi* api, CUdevice dev, CUcontext ctx, DeviceInfo info);
    Failure fail(CUresult r, const std::string& what);
    Status alloc(const std::string& name, DType dtype, int64_t numel, bool zero_init, bool poison);
    Status alloc_arena(const codegen::LaunchPlan& plan);
    Status prepare_launches(const codegen::LaunchPlan& plan);
    Failure enqueue_resets(bool poison);
    Failure enqueue_launches(bool poison = false);
    Failure wait(double timeout_s);
    Failure copy_outputs(TensorData& out);
    TimingResult time_with(const TimingOptions& options, TimingResult t);
    // The per-kernel pass after the samples (TimingOptions::per_kernel).
    Failure time_kernels(int iterations, bool flush_l2, std::vector<double>& kernel_times_ns);
    Expected<CUmodule> reference_module(const std::string& source, ReferenceResult& result);
    void unload_reference_modules();

    const DriverApi* api_;
    CUdevice dev_;
    CUcontext ctx_;
    DeviceInfo info_;
    std::unique_ptr<NvmlSampler> nvml_;
    CUstream stream_ = nullptr;
    CUdeviceptr flush_ = 0;
    int64_t flush_bytes_ = 0;
    // Page-locked host memory that outputs are copied into (grown to the largest output, kept):
    // a pageable copy of a full-shape output ran at a fraction of the bus rate and first
    // zero-filled a buffer of its size on one core, every correctness round (2026-12-06).
    void* staging_ = nullptr;
    size_t staging_bytes_ = 0;
    const unsigned char* stage(CUdeviceptr src, size_t bytes, CUresult& r);

    bool loaded_ = false;
    const Problem* problem_ = nullptr;
    double run_timeout_s_ = 10.0;
    runtime::Module module_;  // the cubin and param builders (runtime/launch.h)
    std::map<std::string, Buffer> buffers_;
    // The plan's buffers share one allocation at the memory plan's offsets (codegen/memory_plan.h);
    // a correctness run poisons each just before the launch that first writes it, since an
    // earlier buffer may have used its bytes (first_written_: per launch, those buffers' names).
    CUdeviceptr arena_ = 0;
    std::vector<std::vector<std::string>> first_written_;
    std::vector<CUdeviceptr> workspaces_;  // builder workspaces, zeroed per sequence
    std::vector<int64_t> workspace_bytes_;
    std::vector<runtime::PreparedLaunch> launches_;
    KernelGrouping kernel_groups_;  // launches_ by program kernel (device/kernel_times.h)
    bool have_inputs_ = false;
    // Device bytes of identified inputs (RunOptions::inputs_id -> tensor/dtype -> bytes), most
    // recently used first, at most kConvertedBytesMax in all: converting full-shape inputs costs
    // more than the kernel being timed, and every candidate of a problem uses the same ones.
    static constexpr int64_t kConvertedBytesMax = int64_t{8} << 30;
    std::list<std::pair<uint64_t, std::map<std::string, std::vector<unsigned char>>>> converted_;
    int64_t converted_bytes_ = 0;
    std::map<std::string, CUmodule> reference_modules_;  // sha256(source)/arch -> module
    const std::vector<unsigned char>& device_bytes(uint64_t inputs_id, const Tensor& t,
                                                   const std::vector<double>& values,
                                                   std::vector<unsigned char>& scratch);
};

}  // namespace kforge::eval
