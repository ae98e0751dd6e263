// The program a search starts from: the one given, else the .kf beside the spec, else one the
// fusion planner (planner/plan.h) synthesizes from the problem for the device's limits.
#pragma once

#include <string>

#include "common/expected.h"
#include "device/device.h"
#include "problem/problem.h"

namespace kforge::driver {

struct StartProgram {
    std::string text;
    bool synthesized = false;
    std::string fusion_plan;  // of a synthesized one (planner::describe_fusion_plan)
};

// `program` (a path; "" for none), else <spec without .json>.kf, else a synthesized one. A user
// error when `program` cannot be read or no seed can express the problem (the message names
// the op).
Expected<StartProgram> start_program(const std::string& spec, const std::string& program,
                                     const Problem& problem, const eval::DeviceInfo& device);

}  // namespace kforge::driver
