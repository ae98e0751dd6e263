// The CUDA device: host<->device dtype conversion (device-free), and on a GPU, a small row-wise
// and a small gemm program lowered, compiled, run and timed through the whole pipeline.
#include <gtest/gtest.h>

#include <cmath>

#include "device/cuda_device.h"
#include "eval/evaluate.h"
#include "problem/inputs.h"
#include "tests/eval/eval_fixture.h"

namespace kforge::eval {
namespace {

TEST(CudaConvert, RoundTripsEveryDtype) {
    std::vector<double> v = {0.0, -1.5, 3.140625, 65504.0, 1e-3, -7.0};
    for (DType d : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
        std::vector<double> rounded;
        for (double x : v) rounded.push_back(round_to_dtype(x, d));
        std::vector<unsigned char> bytes = to_device_bytes(rounded, d);
        EXPECT_EQ(bytes.size(), v.size() * dtype_bytes(d));
        EXPECT_EQ(from_device_bytes(bytes, d), rounded) << to_string(d);
    }
    EXPECT_EQ(from_device_bytes(to_device_bytes({-3, 7}, DType::kI32), DType::kI32),
              (std::vector<double>{-3, 7}));
}

TEST(CudaConvert, NanPoisonBytesReadBackAsNaN) {
    for (DType d : {DType::kF32, DType::kF16, DType::kBF16}) {
        std::vector<unsigned char> poison(dtype_bytes(d) * 3, 0xFF);
        for (double x : from_device_bytes(poison, d)) EXPECT_TRUE(std::isnan(x)) << to_string(d);
    }
}

// Past one conversion chunk (2^20 elements) the conversion runs in parallel chunks: every
// element lands at its own place.
TEST(CudaConvert, LargeTensorsConvertInChunksElementForElement) {
    const size_t n = 2 * (size_t{1} << 20) + 77;
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i % 256) - 128.0;  // exact in bf16
    for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kI64}) {
        std::vector<unsigned char> bytes = to_device_bytes(v, d);
        ASSERT_EQ(bytes.size(), n * dtype_bytes(d));
        EXPECT_EQ(from_device_bytes(bytes, d), v) << to_string(d);
    }
}

std::unique_ptr<Device> gpu_or_skip() {
    auto d = make_cuda_device(0);
    if (!d) return nullptr;
    return std::move(*d);
}

TEST(CudaDeviceGpu, RowSumPassesOnTheGpu) {
    auto device = gpu_or_skip();
    if (!device) GTEST_SKIP() << "SKIP: no usable GPU (" << make_cuda_device(0).error().message << ")";
    EvalReport r = evaluate(*device, testing::request_for("row_sum_f32"));
    EXPECT_FALSE(r.simulated);
    EXPECT_EQ(r.status, EvalStatus::kPassed) << to_json(r).dump(2);
    EXPECT_GT(r.stats.median_ns, 0);
}

TEST(CudaDeviceGpu, GemmBf16PassesOnTheGpu) {
    auto device = gpu_or_skip();
    if (!device) GTEST_SKIP() << "SKIP: no usable GPU (" << make_cuda_device(0).error().message << ")";
    // the full tier: the quick tier checks small shapes only
    EvalReport r = evaluate(*device, testing::request_for("gemm_bf16_4096", EvalTier::kFull));
    EXPECT_EQ(r.status, EvalStatus::kPassed) << to_json(r).dump(2);
    // correctness_full runs at the full shape against the GPU fp64 reference (no separate
    // full_shape sanity run is needed then)
    const GateOutcome* full = testing::find_gate(r, "correctness_full");
    ASSERT_NE(full, nullptr);
    EXPECT_TRUE(full->passed);
    EXPECT_EQ(full->evidence.value("reference_kind", ""), "gpu_fp64") << full->evidence;
    EXPECT_EQ(full->evidence.value("dims", ""), r.shapes_key);
    EXPECT_FALSE(full->evidence.contains("gpu_reference_error")) << full->evidence;
    EXPECT_EQ(testing::find_gate(r, "full_shape"), nullptr);
    std::printf("[ INFO     ] correctness_full rounds: %s\n",
                full->evidence["rounds"].dump().c_str());
    // the hidden second shape is still checked, against the CPU interpreter
    const GateOutcome* hidden = testing::find_gate(r, "correctness_hidden");
    ASSERT_NE(hidden, nullptr);
    EXPECT_TRUE(hidden->passed);
    EXPECT_EQ(hidden->evidence.value("reference_kind", ""), "cpu_fp64_interpreter");
    EXPECT_NE(hidden->evidence.value("dims", ""), r.shapes_key);
}

TEST(CudaDeviceGpu, MemoryIsReleasedOnUnload) {
    auto device = gpu_or_skip();
    if (!device) GTEST_SKIP() << "SKIP: no usable GPU";
    int64_t before = device->memory_used_bytes();
    EvalReport r = evaluate(*device, testing::request_for("row_sum_f32"));
    device->unload();
    EXPECT_LE(device->memory_used_bytes(), before + (8 << 20)) << r.message;
}

}  // namespace
}  // namespace kforge::eval
