// DeviceInfo as JSON: the worker's hello, the device block of evaluation and timing reports.
#include "device/device_json.h"

namespace kforge::eval {

nlohmann::ordered_json to_json(const DeviceInfo& info) {
    return {{"name", info.name},
            {"simulated", info.simulated},
            {"datasheet_key", info.datasheet_key},
            {"sm_count", info.sm_count},
            {"l2_bytes", info.l2_bytes},
            {"memory_bytes", info.memory_bytes},
            {"driver", info.driver},
            {"uuid", info.uuid}};
}

Expected<DeviceInfo> device_info_from_json(const nlohmann::json& j) {
    DeviceInfo d;
    auto name = j.find("name");
    if (name == j.end() || !name->is_string())
        return make_error("device.name", "missing or not a string");
    d.name = name->get<std::string>();
    auto sim = j.find("simulated");
    if (sim == j.end() || !sim->is_boolean())
        return make_error("device.simulated", "missing or not a boolean");
    d.simulated = sim->get<bool>();
    // The rest are informative: tolerate their absence, not a wrong type.
    for (const char* key : {"datasheet_key", "driver", "uuid"}) {
        auto it = j.find(key);
        if (it == j.end()) continue;
        if (!it->is_string()) return make_error(std::string("device.") + key, "not a string");
    }
    for (const char* key : {"sm_count", "l2_bytes", "memory_bytes"}) {
        auto it = j.find(key);
        if (it == j.end()) continue;
        if (!it->is_number_integer())
            return make_error(std::string("device.") + key, "not an integer");
    }
    d.datasheet_key = j.value("datasheet_key", "");
    d.driver = j.value("driver", "");
    d.uuid = j.value("uuid", "");
    d.sm_count = j.value("sm_count", 0);
    d.l2_bytes = j.value("l2_bytes", int64_t{0});
    d.memory_bytes = j.value("memory_bytes", int64_t{0});
    return d;
}

}  // namespace kforge::eval
