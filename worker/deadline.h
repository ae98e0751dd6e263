// How long the supervisor waits for one evaluation before it declares the worker hung: the
// problem's expected time, not a fixed 900 s. A worker that hangs on a tiny problem is killed
// within seconds; a large problem on a real GPU keeps the time its reference and compile need.
//
//   deadline = min(cap, floor + compile + factor * expected)
//   expected = references           rounds of each correctness gate (correctness_gates) at
//                                   its shape: FLOPs / the CPU fp64 interpreter's rate, or
//                                   bytes / a tensor rate for a GPU reference
//            + full-shape inputs    (real device) bytes at the full shape / generation rate
//            + launches             (real device) the tier's launches at the SOL time
//                                   (sol/bounds.h), twice with a baseline program
//   compile  = the compile's own timeout on a device that compiles (none on the simulated
//              device, which lowers only, or for a prebuilt cubin)
//
// With an earlier evaluation of the same problem, shapes and tier (`previous_s`: its wall
// time), expected is at least that time.
#pragma once

#include <optional>

#include "device/device.h"
#include "eval/evaluate.h"

namespace kforge::eval {

struct HangPolicy {
    double floor_s = 10.0;     // fixed costs: the request's JSON, parse, check, lower, a report
    double compile_s = 600.0;  // one compile on a real device (builder's compile timeout)
    double factor = 10.0;      // over the expected time
    double cap_s = 900.0;      // never longer (the old fixed deadline)
};

// Seconds of the CPU fp64 interpreter, device transfers and launches an evaluation of
// `request` on `device` is expected to take (compile and the fixed floor excluded).
double expected_evaluation_s(const EvalRequest& request, const DeviceInfo& device);

// The hard deadline of one evaluation of `request` on `device` (see above).
double evaluation_deadline_s(const EvalRequest& request, const DeviceInfo& device,
                             const HangPolicy& policy,
                             std::optional<double> previous_s = std::nullopt);

// The deadline of a warm-up task (the correctness cases of `request`'s problem: no compile, no
// timing).
double warm_deadline_s(const WarmRequest& request, const DeviceInfo& device,
                       const HangPolicy& policy);

}  // namespace kforge::eval
