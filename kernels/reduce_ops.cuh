// The reductions' modes and combining functors (sum, mean, max, min, prod: PyTorch semantics,
// f32 accumulation), shared by the row, column and set reductions, and the empty prologue.
// Apart from kernels/common.cuh's OpSum / OpMax / OpMin it needs no device built-ins (the
// set reduction's host-run test compiles it for the host).
#pragma once

#include "kernels/common.cuh"

namespace kforge {

enum class ReduceMode { kSum, kMean, kMax, kMin, kProd };

struct OpProd {
    __device__ __forceinline__ float operator()(float a, float b) const { return a * b; }
};

template <ReduceMode M> struct ReduceTraits;
template <> struct ReduceTraits<ReduceMode::kSum> { using Op = OpSum; static constexpr float kInit = 0.f; };
template <> struct ReduceTraits<ReduceMode::kMean> { using Op = OpSum; static constexpr float kInit = 0.f; };
template <> struct ReduceTraits<ReduceMode::kMax> { using Op = OpMax; static constexpr float kInit = -INFINITY; };
template <> struct ReduceTraits<ReduceMode::kMin> { using Op = OpMin; static constexpr float kInit = INFINITY; };
template <> struct ReduceTraits<ReduceMode::kProd> { using Op = OpProd; static constexpr float kInit = 1.f; };

// No element-wise prologue: the row is reduced as loaded.
struct RowNoPrologue {};
template <class P> struct RowPrologueActive { static constexpr bool value = true; };
template <> struct RowPrologueActive<RowNoPrologue> { static constexpr bool value = false; };

}  // namespace kforge
