#include "eval/reference_cache.h"

#include <unistd.h>

#include <algorithm>

#include "common/hash.h"
#include "problem/spec.h"

namespace kforge::eval {
namespace {

int64_t bytes_of(const TensorData* t) {
    int64_t n = 0;
    if (t)
        for (const auto& [name, v] : *t) n += static_cast<int64_t>(v.size() * sizeof(double));
    return n;
}

}  // namespace

int64_t default_reference_cache_bytes() {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    int64_t physical = pages > 0 && page > 0 ? int64_t{pages} * page : int64_t{24} << 30;
    return std::clamp<int64_t>(physical / 2, int64_t{2} << 30, int64_t{64} << 30);
}

std::shared_ptr<const CachedCase> ReferenceCache::get(const Problem& shape,
                                                      Distribution distribution, uint64_t seed,
                                                      const MakeInputs& make_inputs,
                                                      const MakeReference& make_reference,
                                                      std::string_view reference_kind) {
    // The whole spec (graph, dtypes, dims, policy) names the case, not only the problem's name.
    std::string key = sha256_hex(problem_to_json(shape).dump()) + "/" +
                      std::string(to_string(distribution)) + "/" + std::to_string(seed);
    if (reference_kind != kCpuReferenceKind) key += "/" + std::string(reference_kind);
    auto it = cases_.find(key);
    std::shared_ptr<CachedCase> c;
    if (it != cases_.end()) {
        ++stats_.input_hits;
        c = it->second.first;
        lru_.erase(it->second.second);
        lru_.push_front(key);
        it->second.second = lru_.begin();
    } else {
        ++stats_.input_misses;
        c = std::make_shared<CachedCase>();
        c->id = next_id_++;
        c->reference_kind = std::string(reference_kind);
        c->inputs = std::make_shared<const TensorData>(make_inputs());
        stats_.bytes += bytes_of(c->inputs.get());
        lru_.push_front(key);
        cases_[key] = {c, lru_.begin()};
    }
    if (make_reference) {
        if (c->reference || !c->reference_error.empty()) {
            ++stats_.reference_hits;
        } else {
            ++stats_.reference_misses;
            auto ref = make_reference(*c->inputs);
            if (ref) {
                c->reference = std::make_shared<const TensorData>(std::move(*ref));
                stats_.bytes += bytes_of(c->reference.get());
            } else {
                c->reference_error = ref.error().to_string();
            }
        }
    }
    std::shared_ptr<const CachedCase> result = c;  // survives its own eviction
    evict();
    return result;
}

void ReferenceCache::evict() {
    while (stats_.bytes > max_bytes_ && lru_.size() > 1) {
        auto it = cases_.find(lru_.back());
        if (it != cases_.end()) {
            stats_.bytes -= bytes_of(it->second.first->inputs.get());
            stats_.bytes -= bytes_of(it->second.first->reference.get());
            cases_.erase(it);
        }
        lru_.pop_back();
    }
}

}  // namespace kforge::eval
