// DeviceInfo as JSON, the form the worker's hello and every evaluation and timing report carry.
#pragma once

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "device/device.h"

namespace kforge::eval {

nlohmann::ordered_json to_json(const DeviceInfo& info);
// An Error names the field ("device.simulated"): name and simulated are required, the rest
// (informative) may be absent but not of the wrong type.
Expected<DeviceInfo> device_info_from_json(const nlohmann::json& j);

}  // namespace kforge::eval
