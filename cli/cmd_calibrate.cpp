// `kforge calibrate`: measures the DRAM and GEMM ceilings of a GPU and writes them as JSON.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "device/calibrate.h"

namespace kforge::cli {
namespace {

struct CalibrateArgs {
    int device_index = 0;
    std::string output;  // default .kforge/calibration-<device>.json
    int gemm_size = 8192;
    int runs = 10;
};

int run_calibrate(const CalibrateArgs& a) {
    const int count = cuda_device_count();
    if (count == 0) {
        eprintf(
                     "kforge calibrate: no CUDA device visible (cudaGetDeviceCount "
                     "found none); calibration needs a GPU\n");
        return kExitEnvironment;
    }
    if (a.device_index < 0 || a.device_index >= count) {
        eprintf("kforge calibrate: --device-index: no CUDA device %d (%d visible)\n",
                     a.device_index, count);
        return kExitUserError;
    }
    if (a.gemm_size < 256 || a.runs < 1) {
        eprintf("kforge calibrate: --gemm-size must be >= 256 and --runs >= 1\n");
        return kExitUserError;
    }
    CalibrateOptions o;
    o.device_index = a.device_index;
    o.gemm_size = a.gemm_size;
    o.timed_runs = a.runs;
    auto cal = calibrate(o);
    if (!cal) {
        eprintf("kforge calibrate: %s\n", cal.error().to_string().c_str());
        return kExitEnvironment;
    }
    const std::string path =
        a.output.empty() ? ".kforge/calibration-" + cal->device + ".json" : a.output;
    if (auto s = save_calibration(*cal, path); !s) {
        eprintf("kforge calibrate: %s\n", s.error().to_string().c_str());
        return kExitUserError;
    }
    std::printf("device %s: DRAM %.3g TB/s", cal->device.c_str(), cal->dram_bytes_per_s / 1e12);
    for (const auto& [unit, flops] : cal->peak_flops) {
        std::printf(", %s %.4g TFLOP/s", unit.c_str(), flops / 1e12);
    }
    std::printf("\nwrote %s\n", path.c_str());
    return kExitOk;
}

}  // namespace

void register_calibrate(CLI::App& app) {
    auto args = std::make_shared<CalibrateArgs>();
    auto* cmd = app.add_subcommand("calibrate",
                                   "Measure DRAM bandwidth and GEMM peaks of a GPU (needs a GPU)");
    cmd->add_option("--device-index", args->device_index, "CUDA device index")
        ->capture_default_str();
    cmd->add_option("-o,--out,--output", args->output,
                    "Output JSON (default .kforge/calibration-<device>.json)");
    cmd->add_option("--gemm-size", args->gemm_size, "M = N = K of the GEMMs")
        ->capture_default_str();
    cmd->add_option("--runs", args->runs, "Timed runs per measurement (median)")
        ->capture_default_str();
    cmd->callback([args] { exit_code() = run_calibrate(*args); });
}

}  // namespace kforge::cli
