#include "sol/calibration.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"
#include "sol/target.h"

namespace kforge {

std::string calibration_to_json(const Calibration& c) {
    nlohmann::ordered_json j;
    j["device"] = c.device;
    j["dram_bytes_per_s"] = c.dram_bytes_per_s;
    nlohmann::ordered_json peaks = nlohmann::ordered_json::object();
    for (const auto& [unit, flops] : c.peak_flops) peaks[unit] = flops;
    j["peak_flops"] = peaks;
    j["measured_at"] = c.measured_at;
    j["driver"] = c.driver;
    j["notes"] = c.notes;
    return j.dump(2) + "\n";
}

Expected<Calibration> calibration_from_json(const std::string& text, const std::string& where) {
    nlohmann::ordered_json j;
    try {
        j = nlohmann::ordered_json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        return make_error(where, std::string("malformed calibration JSON: ") + e.what());
    }
    if (!j.is_object()) return make_error(where, "a calibration must be a JSON object");
    Calibration c;
    auto get_string = [&](const char* key, std::string& out, bool required) -> Status {
        if (!j.contains(key)) {
            if (required) return make_error(where, std::string("missing key \"") + key + "\"");
            return Ok{};
        }
        if (!j[key].is_string()) return make_error(where + ": " + key, "expected a string");
        out = j[key].get<std::string>();
        return Ok{};
    };
    if (auto s = get_string("device", c.device, true); !s) return s.error();
    if (c.device.empty()) return make_error(where + ": device", "must not be empty");
    if (auto s = get_string("measured_at", c.measured_at, false); !s) return s.error();
    if (auto s = get_string("driver", c.driver, false); !s) return s.error();
    if (auto s = get_string("notes", c.notes, false); !s) return s.error();

    if (!j.contains("dram_bytes_per_s") || !j["dram_bytes_per_s"].is_number()) {
        return make_error(where + ": dram_bytes_per_s", "expected a positive number");
    }
    c.dram_bytes_per_s = j["dram_bytes_per_s"].get<double>();
    if (!(c.dram_bytes_per_s > 0.0)) {
        return make_error(where + ": dram_bytes_per_s", "expected a positive number");
    }
    if (j.contains("peak_flops")) {
        const auto& peaks = j["peak_flops"];
        if (!peaks.is_object()) return make_error(where + ": peak_flops", "expected an object");
        for (const auto& [key, value] : peaks.items()) {
            const std::string at = where + ": peak_flops." + key;
            if (!compute_unit_from_string(key)) {
                std::string known;
                for (ComputeUnit u : all_compute_units()) {
                    known += (known.empty() ? "" : ", ") + std::string(to_string(u));
                }
                return make_error(at, "unknown compute unit; known units: " + known);
            }
            if (!value.is_number() || !(value.get<double>() > 0.0)) {
                return make_error(at, "expected a positive number of FLOP/s");
            }
            c.peak_flops[key] = value.get<double>();
        }
    }
    return c;
}

Expected<Calibration> load_calibration(const std::string& path) {
    std::ifstream in(path);
    if (!in) return make_error(path, "cannot read calibration file");
    std::stringstream ss;
    ss << in.rdbuf();
    return calibration_from_json(ss.str(), path);
}

Status save_calibration(const Calibration& c, const std::string& path) {
    std::error_code ec;
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return make_error(path, "cannot create folder: " + ec.message());
    if (auto st = write_file_atomic(path, calibration_to_json(c)); !st)
        return make_error(path, "cannot write the calibration file: " + st.error().message);
    return Ok{};
}

double Ceilings::peak(ComputeUnit u) const {
    auto it = peak_flops.find(u);
    return it == peak_flops.end() ? 0.0 : it->second;
}

double Ceilings::physical_peak(ComputeUnit u) const {
    auto it = physical_peak_flops.find(u);
    return it == physical_peak_flops.end() ? 0.0 : it->second;
}

Ceilings effective_ceilings(const DeviceSpec& spec, const std::optional<Calibration>& cal) {
    Ceilings c;
    c.device = spec.name;
    c.arch = cuda_arch(spec.cc_major, spec.cc_minor);
    c.dram_bytes_per_s = spec.dram_bytes_per_s;
    c.peak_flops = spec.peak_flops;
    c.source = "datasheet";
    c.physical_dram_bytes_per_s = spec.dram_bytes_per_s;
    c.physical_peak_flops = spec.peak_flops;
    c.sfu_ops_per_s = sfu_ops_per_s(spec);
    if (!cal) return c;
    c.source =
        "calibrated " + (cal->measured_at.empty() ? std::string("(undated)") : cal->measured_at);
    if (cal->dram_bytes_per_s > 0.0) {
        c.dram_bytes_per_s = cal->dram_bytes_per_s;
        c.calibrated_dram = true;
        c.physical_dram_bytes_per_s = std::max(spec.dram_bytes_per_s, cal->dram_bytes_per_s);
    }
    for (const auto& [key, flops] : cal->peak_flops) {
        auto unit = compute_unit_from_string(key);
        if (!unit || !(flops > 0.0)) continue;  // calibration_from_json rejects these
        c.peak_flops[*unit] = flops;
        c.calibrated[*unit] = true;
        c.physical_peak_flops[*unit] = std::max(c.physical_peak_flops[*unit], flops);
    }
    return c;
}

Status check_calibration(const DeviceSpec& spec, const Calibration& cal) {
    if (cal.device == spec.name) return Ok{};
    auto by_cuda = device_from_cuda_name(cal.device);
    if (by_cuda && by_cuda->name == spec.name) return Ok{};
    auto by_name = find_device(cal.device);
    if (by_name.ok() && by_name->name == spec.name) return Ok{};
    return make_error("--calibration", "calibration was measured on \"" + cal.device +
                                           "\", not on the device \"" + spec.name + "\"");
}

}  // namespace kforge
