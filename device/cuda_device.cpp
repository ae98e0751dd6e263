#include "device/cuda_device.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>

#include "codegen/memory_plan.h"
#include "common/parallel.h"
#include "sol/device.h"

namespace kforge::eval {
namespace {

template <typename T, class Fn>
void encode_as(const std::vector<double>& v, unsigned char* out, Fn&& convert) {
    parallel_chunks(v.size(), [&](size_t, size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
            T x = convert(v[i]);
            std::memcpy(out + i * sizeof(T), &x, sizeof(T));
        }
    });
}

template <typename T, class Fn>
void decode_as(const unsigned char* in, std::vector<double>& v, Fn&& convert) {
    parallel_chunks(v.size(), [&](size_t, size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
            T x;
            std::memcpy(&x, in + i * sizeof(T), sizeof(T));
            v[i] = convert(x);
        }
    });
}

}  // namespace

// Full-shape tensors reach 10^9 elements: both conversions run in chunks on every core.
std::vector<unsigned char> to_device_bytes(const std::vector<double>& v, DType dtype) {
    std::vector<unsigned char> bytes(v.size() * dtype_bytes(dtype));
    unsigned char* p = bytes.data();
    switch (dtype) {
        case DType::kF64: encode_as<double>(v, p, [](double x) { return x; }); break;
        case DType::kF32: encode_as<float>(v, p, [](double x) { return static_cast<float>(x); }); break;
        case DType::kF16:
            encode_as<__half>(v, p, [](double x) { return __float2half_rn(static_cast<float>(x)); });
            break;
        case DType::kBF16:
            encode_as<__nv_bfloat16>(
                v, p, [](double x) { return __float2bfloat16_rn(static_cast<float>(x)); });
            break;
        case DType::kI32: encode_as<int32_t>(v, p, [](double x) { return static_cast<int32_t>(x); }); break;
        case DType::kI64: encode_as<int64_t>(v, p, [](double x) { return static_cast<int64_t>(x); }); break;
        case DType::kBool: encode_as<uint8_t>(v, p, [](double x) { return uint8_t{x != 0.0}; }); break;
    }
    return bytes;
}

std::vector<double> from_device_bytes(const std::vector<unsigned char>& bytes, DType dtype) {
    return from_device_bytes(bytes.data(), bytes.size(), dtype);
}

std::vector<double> from_device_bytes(const unsigned char* p, size_t size, DType dtype) {
    std::vector<double> v(size / dtype_bytes(dtype));
    switch (dtype) {
        case DType::kF64: decode_as<double>(p, v, [](double x) { return x; }); break;
        case DType::kF32: decode_as<float>(p, v, [](float x) { return double{x}; }); break;
        case DType::kF16: decode_as<__half>(p, v, [](__half x) { return double{__half2float(x)}; }); break;
        case DType::kBF16:
            decode_as<__nv_bfloat16>(p, v, [](__nv_bfloat16 x) { return double{__bfloat162float(x)}; });
            break;
        case DType::kI32: decode_as<int32_t>(p, v, [](int32_t x) { return double(x); }); break;
        case DType::kI64: decode_as<int64_t>(p, v, [](int64_t x) { return static_cast<double>(x); }); break;
        case DType::kBool: decode_as<uint8_t>(p, v, [](uint8_t x) { return x != 0 ? 1.0 : 0.0; }); break;
    }
    return v;
}

namespace {

std::string uuid_string(const CUuuid& u) {
    char buf[64];
    const unsigned char* b = reinterpret_cast<const unsigned char*>(u.bytes);
    std::snprintf(buf, sizeof buf,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                  b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                  b[14], b[15]);
    return buf;
}

}  // namespace


Expected<std::unique_ptr<CudaDevice>> CudaDevice::open(int index) {
    auto api = driver_api();
    if (!api) return api.error();
    const DriverApi& d = **api;
    int count = 0;
    if (d.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0)
        return make_error("cuda", "no CUDA GPU is visible");
    if (index < 0 || index >= count)
        return make_error("--gpu", "GPU " + std::to_string(index) + " does not exist (" +
                                       std::to_string(count) + " visible)");
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    CUresult r = d.cuDeviceGet(&dev, index);
    if (r == CUDA_SUCCESS) r = d.cuDevicePrimaryCtxRetain(&ctx, dev);
    if (r == CUDA_SUCCESS) r = d.cuCtxSetCurrent(ctx);
    if (r != CUDA_SUCCESS) return make_error("cuda", "context: " + driver_error_string(d, r));
    DeviceInfo info;
    char name[256] = {};
    d.cuDeviceGetName(name, sizeof name, dev);
    info.name = name;
    d.cuDeviceGetAttribute(&info.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    int l2 = 0;
    d.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev);
    info.l2_bytes = l2;
    size_t mem = 0;
    d.cuDeviceTotalMem(&mem, dev);
    info.memory_bytes = static_cast<int64_t>(mem);
    int version = 0;
    d.cuDriverGetVersion(&version);
    info.driver = "CUDA driver " + std::to_string(version);
    CUuuid uuid{};
    d.cuDeviceGetUuid(&uuid, dev);
    info.uuid = uuid_string(uuid);
    if (auto spec = device_from_cuda_name(info.name)) info.datasheet_key = spec->name;
    auto device = std::unique_ptr<CudaDevice>(new CudaDevice(*api, dev, ctx, info));
    r = d.cuStreamCreate(&device->stream_, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) return make_error("cuda", "stream: " + driver_error_string(d, r));
    device->flush_bytes_ = std::max<int64_t>(2 * info.l2_bytes, 1 << 20);
    r = d.cuMemAlloc(&device->flush_, device->flush_bytes_);
    if (r != CUDA_SUCCESS) return make_error("cuda", "L2 flush buffer: " + driver_error_string(d, r));
    return device;
}

CudaDevice::CudaDevice(const DriverApi* api, CUdevice dev, CUcontext ctx, DeviceInfo info)
    : api_(api), dev_(dev), ctx_(ctx), info_(std::move(info)),
      nvml_(std::make_unique<NvmlSampler>(info_.uuid)) {}

CudaDevice::~CudaDevice() {
    unload();
    unload_reference_modules();
    if (flush_) api_->cuMemFree(flush_);
    if (staging_) api_->cuMemFreeHost(staging_);
    if (stream_) api_->cuStreamDestroy(stream_);
    api_->cuDevicePrimaryCtxRelease(dev_);
}

CudaDevice::Failure CudaDevice::fail(CUresult r, const std::string& what) {
    DriverFailure f = classify_driver_error(r);
    return Failure{f.status, what + ": " + driver_error_string(*api_, r), f.context_lost};
}

Status CudaDevice::alloc(const std::string& name, DType dtype, int64_t numel, bool zero_init,
                         bool poison) {
    Buffer b{0, dtype, numel, zero_init, poison};
    KFORGE_DRV(cuMemAlloc(&b.ptr, static_cast<size_t>(std::max<int64_t>(b.bytes(), 16))));
    buffers_[name] = b;
    return Ok{};
}

// One allocation for the plan's buffers at the memory plan's offsets (a plan built without
// them, by hand, is placed here), each buffer a view into it.
Status CudaDevice::alloc_arena(const codegen::LaunchPlan& candidate_plan) {
    codegen::LaunchPlan plan = candidate_plan;
    bool placed = std::all_of(plan.buffers.begin(), plan.buffers.end(),
                              [](const codegen::BufferDecl& b) { return b.offset >= 0; });
    if (!placed) codegen::assign_arena_offsets(plan);
    if (Status s = codegen::check_memory_plan(plan); !s) return s;
    KFORGE_DRV(cuMemAlloc(&arena_, static_cast<size_t>(std::max<int64_t>(plan.memory.arena_bytes, 16))));
    auto pointers = runtime::arena_pointers(plan, arena_);
    if (!pointers) return pointers.error();
    const std::vector<codegen::BufferLifetime> life = codegen::buffer_lifetimes(plan);
    first_written_.assign(plan.kernels.size(), {});
    for (size_t i = 0; i < plan.buffers.size(); ++i) {
        const codegen::BufferDecl& b = plan.buffers[i];
        int64_t n = 1;
        for (int64_t d : b.shape) n *= d;
        buffers_[b.name] = Buffer{(*pointers)[i].second, b.dtype, n, b.zero_init, !b.zero_init, true};
        if (!b.zero_init && life[i].first_launch < first_written_.size())
            first_written_[life[i].first_launch].push_back(b.name);
    }
    return Ok{};
}

Status CudaDevice::load(const Candidate& c) {
    unload();
    if (!c.problem) return make_error("cuda device", "the candidate has no problem");
    problem_ = c.problem;
    run_timeout_s_ = c.run_timeout_s;
    KFORGE_DRV(cuCtxSetCurrent(ctx_));
    std::string image;
    {
        FILE* f = std::fopen(c.cubin_path.c_str(), "rb");
        if (!f) return make_error(c.cubin_path, "cannot read the cubin");
        char buf[1 << 16];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) image.append(buf, n);
        std::fclose(f);
    }
    for (const Tensor& t : problem_->tensors) {
        if (t.role == TensorRole::kIntermediate) continue;
        Status s = alloc(t.name, t.dtype, t.numel(), false, t.role == TensorRole::kOutput);
        if (!s) return s;
    }
    if (Status s = alloc_arena(c.plan); !s) return s;
    auto module = runtime::load_module(*api_, c.plan, image, c.host_library_path);
    if (!module) return module.error();
    module_ = std::move(*module);
    if (Status s = prepare_launches(c.plan); !s) return s;
    std::vector<std::string> launch_names, program_kernels;
    for (const codegen::KernelLaunch& l : c.plan.kernels) launch_names.push_back(l.name);
    if (c.program)
        for (const dsl::Kernel& k : c.program->kernels) program_kernels.push_back(k.name);
    kernel_groups_ = group_launches(launch_names, program_kernels);
    loaded_ = true;
    return Ok{};
}

}  // namespace kforge::eval
