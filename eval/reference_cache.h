// The worker's memory of correctness cases: the inputs of one (problem, shape, distribution,
// seed) and their fp64 reference outputs, so that several candidates of one problem evaluated in
// one worker share the CPU reference (seconds at a check shape) and the input generation. Each
// case gets an id that is never reused, which lets a device keep the converted device bytes of
// the inputs between runs (RunOptions::inputs_id). Least recently used cases are dropped past a
// byte budget. Not thread-safe: one worker evaluates one task at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/expected.h"
#include "device/device.h"
#include "problem/inputs.h"
#include "reference/gpu_reference.h"

namespace kforge::eval {

struct CachedCase {
    uint64_t id = 0;                              // never reused (RunOptions::inputs_id)
    std::shared_ptr<const TensorData> inputs;
    std::shared_ptr<const TensorData> reference;  // null until a reference was asked for
    std::string reference_error;                  // the reference's error, if it failed
    std::string reference_kind;                   // kCpuReferenceKind or kGpuReferenceKind
};

struct ReferenceCacheStats {
    int64_t input_hits = 0, input_misses = 0, reference_hits = 0, reference_misses = 0;
    int64_t bytes = 0;
};

// The default byte budget: half of the host's physical memory, within [2, 64] GiB (12 GiB on a
// 24 GiB machine, 64 GiB on the 128 GiB H200 machine). Values are held as doubles: the five
// full-shape cases of a 16384 x 32000 log_softmax hold 42 GB (inputs and reference). Below what
// one gate's rounds need, the rounds evict each other in turn (least recently used) and every
// candidate generates its inputs and reference anew (measured: 90 s of a 106 s full tier).
int64_t default_reference_cache_bytes();

class ReferenceCache {
public:
    explicit ReferenceCache(int64_t max_bytes = default_reference_cache_bytes())
        : max_bytes_(max_bytes) {}

    using MakeInputs = std::function<TensorData()>;
    using MakeReference = std::function<Expected<TensorData>(const TensorData& inputs)>;

    // The case of `shape` with inputs from `make_inputs` (called on a miss) and, when
    // `make_reference` is set, its reference (computed once, on the first request).
    // `reference_kind` (reference/gpu_reference.h) names what make_reference computes; cases of
    // different kinds are kept apart, so a failed GPU reference never stands in for the CPU one.
    std::shared_ptr<const CachedCase> get(const Problem& shape, Distribution distribution,
                                          uint64_t seed, const MakeInputs& make_inputs,
                                          const MakeReference& make_reference,
                                          std::string_view reference_kind = kCpuReferenceKind);

    const ReferenceCacheStats& stats() const { return stats_; }

private:
    void evict();

    int64_t max_bytes_;
    uint64_t next_id_ = 1;
    std::list<std::string> lru_;  // front: most recent
    std::map<std::string, std::pair<std::shared_ptr<CachedCase>,
                                    std::list<std::string>::iterator>> cases_;
    ReferenceCacheStats stats_;
};

}  // namespace kforge::eval
