// The operator's limits on what the agents of one `kforge mcp` process may spend (set on its
// command line, never by a tool argument): evaluation seconds on the device, compiles, and
// evaluations in flight at once. A tool asks the ledger before it starts and charges what it
// spent after; a budget a client gives (optimize) is capped by what is left.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "common/expected.h"

namespace kforge::mcp {

struct OperatorLimits {
    double gpu_seconds = 3600;         // evaluation time on the device, all tools together
    int64_t compiles = 1000;           // compiles (compile, evaluate and optimize's)
    int concurrent_evaluations = 2;    // device tools in flight (running or waiting)
    double optimize_wall_s = 600;      // one optimize call's wall-clock budget, at most
    size_t max_request_bytes = 4u << 20;  // one JSON-RPC message
};

struct Spending {
    double gpu_seconds = 0;
    int64_t compiles = 0;
    int in_flight = 0;
};

class Ledger {
public:
    explicit Ledger(OperatorLimits limits) : limits_(limits) {}
    const OperatorLimits& limits() const { return limits_; }
    Spending spent() const;
    double gpu_seconds_left() const;
    int64_t compiles_left() const;

    // A device tool starts (an Error saying which limit when one is reached: in flight, GPU
    // seconds or compiles left); `needs_compile` asks for at least one compile left.
    Status begin(const std::string& tool, bool needs_compile);
    void end();
    // A tool that compiles but runs nothing on the device (compile, export): only the compile
    // limit applies, not the evaluations in flight.
    Status check_compiles(const std::string& tool) const;
    void charge(double gpu_seconds, int64_t compiles);

private:
    OperatorLimits limits_;
    mutable std::mutex mutex_;
    Spending spent_;
};

// begin() .. end() as a scope.
class InFlight {
public:
    InFlight(Ledger& ledger, Status started) : ledger_(ledger), ok_(started.ok()) {}
    ~InFlight() { if (ok_) ledger_.end(); }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

private:
    Ledger& ledger_;
    bool ok_;
};

}  // namespace kforge::mcp
