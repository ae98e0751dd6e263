// Calibrated ceilings: DRAM bandwidth and peak FLOP/s measured on the GPU at hand
// (device/calibrate.h), stored as JSON, overriding the datasheet figures of the device table.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "common/expected.h"
#include "sol/device.h"

namespace kforge {

struct Calibration {
    std::string device;                        // device table name ("h200") or the CUDA name
    double dram_bytes_per_s = 0.0;             // bytes read + written per second
    std::map<std::string, double> peak_flops;  // by unit key (to_string(ComputeUnit)), FLOP/s
    std::string measured_at;                   // ISO 8601 UTC
    std::string driver;                        // e.g. "CUDA driver 13000, runtime 13000"
    std::string notes;                         // method, sizes, what the hardware reported
};

// JSON object with the keys above, in that order (2-space indented).
std::string calibration_to_json(const Calibration& c);

// Parses and validates (positive numbers, known unit keys). `where` prefixes messages
// (e.g. a file name).
Expected<Calibration> calibration_from_json(const std::string& text, const std::string& where);

// Reads a calibration file; a missing or bad file is a user error naming it.
Expected<Calibration> load_calibration(const std::string& path);

// Writes a calibration file, creating parent folders.
Status save_calibration(const Calibration& c, const std::string& path);

// The ceilings the bounds use: the datasheet's, with every measured figure replacing its
// datasheet counterpart; units the calibration did not measure keep datasheet values.
struct Ceilings {
    std::string device;
    // cuda_arch() of the device (sol/target.h: "sm_90a"): the column of the instruction table
    // (sol/op_cost.h) that the bounds and the simulated device's time model both read; empty
    // reads the sm_90a column.
    std::string arch;
    double dram_bytes_per_s = 0.0;
    std::map<ComputeUnit, double> peak_flops;  // FLOP/s; a unit missing = not present
    bool calibrated_dram = false;
    std::map<ComputeUnit, bool> calibrated;  // true where the figure was measured
    std::string source;                      // "datasheet" or "calibrated <measured_at>"
    // The physical limits: per figure, the larger of datasheet and measurement. The gaming
    // threshold uses these: a kernel may beat cuBLAS or a copy engine, never the hardware.
    double physical_dram_bytes_per_s = 0.0;
    std::map<ComputeUnit, double> physical_peak_flops;
    // MUFU results per second (sfu_ops_per_s() of the device; not calibrated); 0 = unknown,
    // and then the bounds have no SFU term.
    double sfu_ops_per_s = 0.0;

    double peak(ComputeUnit u) const;           // 0 when the unit is not present
    double physical_peak(ComputeUnit u) const;  // likewise
};

Ceilings effective_ceilings(const DeviceSpec& spec, const std::optional<Calibration>& cal);

// A calibration taken on another device than `spec` is a user error.
Status check_calibration(const DeviceSpec& spec, const Calibration& cal);

}  // namespace kforge
