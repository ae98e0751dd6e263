#include "mcp/limits.h"

#include <algorithm>

namespace kforge::mcp {

Spending Ledger::spent() const {
    std::lock_guard lock(mutex_);
    return spent_;
}

double Ledger::gpu_seconds_left() const {
    std::lock_guard lock(mutex_);
    return std::max(0.0, limits_.gpu_seconds - spent_.gpu_seconds);
}

int64_t Ledger::compiles_left() const {
    std::lock_guard lock(mutex_);
    return std::max<int64_t>(0, limits_.compiles - spent_.compiles);
}

Status Ledger::begin(const std::string& tool, bool needs_compile) {
    std::lock_guard lock(mutex_);
    if (spent_.in_flight >= limits_.concurrent_evaluations)
        return make_error(tool, "the operator allows " +
                                    std::to_string(limits_.concurrent_evaluations) +
                                    " device tool call(s) in flight (--max-concurrent); wait for "
                                    "one to finish");
    if (spent_.gpu_seconds >= limits_.gpu_seconds)
        return make_error(tool, "the operator's GPU-seconds limit (--max-gpu-seconds " +
                                    std::to_string(limits_.gpu_seconds) + ") is spent");
    if (needs_compile && spent_.compiles >= limits_.compiles)
        return make_error(tool, "the operator's compile limit (--max-compiles " +
                                    std::to_string(limits_.compiles) + ") is spent");
    ++spent_.in_flight;
    return Ok{};
}

Status Ledger::check_compiles(const std::string& tool) const {
    std::lock_guard lock(mutex_);
    if (spent_.compiles >= limits_.compiles)
        return make_error(tool, "the operator's compile limit (--max-compiles " +
                                    std::to_string(limits_.compiles) + ") is spent");
    return Ok{};
}

void Ledger::end() {
    std::lock_guard lock(mutex_);
    --spent_.in_flight;
}

void Ledger::charge(double gpu_seconds, int64_t compiles) {
    std::lock_guard lock(mutex_);
    spent_.gpu_seconds += std::max(0.0, gpu_seconds);
    spent_.compiles += std::max<int64_t>(0, compiles);
}

}  // namespace kforge::mcp
