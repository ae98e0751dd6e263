// Fixed-width integer types (and INFINITY/NAN) for kforge's generated sources and templates under both compilers:
// NVRTC has no C++ standard library headers, so it takes them from CCCL's <cuda/std/cstdint>
// (the compile driver adds CCCL's include folder), nvcc from <cstdint>.
#pragma once

#if defined(__CUDACC_RTC__)
#include <cuda/std/cstdint>
#include <cuda/std/limits>
using cuda::std::int8_t;
using cuda::std::int16_t;
using cuda::std::int32_t;
using cuda::std::int64_t;
using cuda::std::uint8_t;
using cuda::std::uint16_t;
using cuda::std::uint32_t;
using cuda::std::uint64_t;
using cuda::std::uintptr_t;
// <cmath>'s macros, which NVRTC lacks too (constant expressions, as the templates need)
#ifndef INFINITY
#define INFINITY (::cuda::std::numeric_limits<float>::infinity())
#endif
#ifndef NAN
#define NAN (::cuda::std::numeric_limits<float>::quiet_NaN())
#endif
#else
#include <cstdint>
#endif
