// The bottleneck classes of a kernel (diagnosis/diagnosis.h), with their names in text, JSON
// and logs.
#pragma once

#include <optional>
#include <string_view>

namespace kforge {

enum class Bottleneck {
    kDramBound, kL2Bound, kTensorComputeBound, kSimtComputeBound, kLatencyBoundLowOccupancy,
    kLaunchTailBound, kSharedMemoryBound, kSpillBound, kUncoalescedMemory, kUnknown,
};
std::string_view to_string(Bottleneck b);  // "dram_bound", ...
std::optional<Bottleneck> bottleneck_from_string(std::string_view s);

}  // namespace kforge
