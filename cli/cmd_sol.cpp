// `kforge sol PROBLEM...`: speed-of-light bounds of problem specs on a device.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "problem/spec.h"
#include "sol/bounds.h"

namespace kforge::cli {
namespace {

struct SolArgs {
    std::vector<std::string> problems;
    std::string device = "h200";
    std::string policy;
    std::string calibration;
    double gaming_factor = kDefaultGamingFactor;
    bool json = false;
};

std::string human(double v, const char* unit) {
    const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
    int i = 0;
    while (v >= 1000.0 && i < 5) v /= 1000.0, ++i;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g %s%s", v, prefixes[i], unit);
    return buf;
}

std::string ms(double seconds) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g ms", seconds * 1e3);
    return buf;
}

nlohmann::ordered_json to_json(const Problem& p, const Bounds& b, const Ceilings& c) {
    nlohmann::ordered_json j;
    j["problem"] = p.name;
    j["device"] = b.device;
    j["ceilings"] = b.ceilings_source;
    j["policy"] = std::string(to_string(b.policy));
    j["matrix_unit"] = std::string(to_string(b.matrix_unit)) + (b.matrix_tf32x3 ? " (3xTF32)" : "");
    j["flops_matrix"] = b.work.flops_matrix;
    j["flops_other"] = b.work.flops_other;
    j["bytes_fused"] = b.work.bytes_fused;
    j["bytes_unfused"] = b.work.bytes_unfused;
    j["time_compute_s"] = b.time_compute_s;
    j["time_simt_s"] = b.time_simt_s;
    j["time_sfu_s"] = b.time_sfu_s;
    j["instructions_simt"] = b.instructions_simt;
    j["instructions_sfu"] = b.instructions_sfu;
    j["sfu_ops_per_s"] = c.sfu_ops_per_s;
    j["compute_unit"] = b.compute_unit;
    j["time_compute_floor_s"] = b.time_compute_floor_s;
    j["time_memory_fused_s"] = b.time_memory_fused_s;
    j["time_memory_unfused_s"] = b.time_memory_unfused_s;
    j["time_memory_floor_s"] = b.time_memory_floor_s;
    j["time_fused_s"] = b.time_fused_s;
    j["time_unfused_s"] = b.time_unfused_s;
    j["bound_kind"] = std::string(to_string(b.kind));
    j["arithmetic_intensity"] = b.arithmetic_intensity;
    j["ridge_intensity"] = matrix_peak(b, c) / c.dram_bytes_per_s;
    j["gaming_threshold_s"] = b.gaming_threshold_s;
    auto ops = nlohmann::ordered_json::array();
    for (size_t i = 0; i < b.per_op.size(); ++i) {
        const auto& ob = b.per_op[i];
        const auto& ow = b.work.per_op[i];
        ops.push_back({{"output", ob.output},
                       {"op", std::string(to_string(ow.kind))},
                       {"flops", ow.flops()},
                       {"bytes", ow.bytes()},
                       {"time_compute_s", ob.time_compute_s},
                       {"time_simt_s", ob.time_simt_s},
                       {"time_sfu_s", ob.time_sfu_s},
                       {"time_memory_s", ob.time_memory_s},
                       {"time_s", ob.time_s}});
    }
    j["per_op"] = ops;
    return j;
}

void print_text(const Problem& p, const Bounds& b, const Ceilings& c, double factor) {
    std::printf("%s on %s (%s), policy %s\n", p.name.c_str(), b.device.c_str(),
                b.ceilings_source.c_str(), std::string(to_string(b.policy)).c_str());
    std::printf("  work       %s matrix + %s other; %s fused, %s unfused\n",
                human(b.work.flops_matrix, "FLOP").c_str(),
                human(b.work.flops_other, "FLOP").c_str(), human(b.work.bytes_fused, "B").c_str(),
                human(b.work.bytes_unfused, "B").c_str());
    std::printf("  compute    %s (matrix on %s at %s/s, other on fp32_simt)\n",
                ms(b.time_compute_s).c_str(),
                (std::string(to_string(b.matrix_unit)) + (b.matrix_tf32x3 ? " as 3xTF32" : ""))
                    .c_str(),
                human(matrix_peak(b, c), "FLOP").c_str());
    std::printf("  simt, sfu  fp32_simt %s (%s instructions), sfu %s (%s MUFU at %s/s); "
                "busiest %s\n",
                ms(b.time_simt_s).c_str(), human(b.instructions_simt, "").c_str(),
                ms(b.time_sfu_s).c_str(), human(b.instructions_sfu, "").c_str(),
                human(c.sfu_ops_per_s, "").c_str(), b.compute_unit.c_str());
    std::printf("  memory     %s fused, %s unfused (at %s/s)\n", ms(b.time_memory_fused_s).c_str(),
                ms(b.time_memory_unfused_s).c_str(), human(c.dram_bytes_per_s, "B").c_str());
    std::printf("  bound      fused %s (%s-bound%s), unfused %s (per-op roofline sum)\n",
                ms(b.time_fused_s).c_str(), std::string(to_string(b.kind)).c_str(),
                b.kind == BoundKind::kCompute ? (" on " + b.compute_unit).c_str() : "",
                ms(b.time_unfused_s).c_str());
    std::printf("  intensity  %.4g FLOP/B (ridge %.4g FLOP/B)\n", b.arithmetic_intensity,
                matrix_peak(b, c) / c.dram_bytes_per_s);
    std::printf(
        "  gaming     a time below %s is implausible (%.2g x max(physical compute floor "
        "%s, memory floor %s))\n",
        ms(b.gaming_threshold_s).c_str(), factor, ms(b.time_compute_floor_s).c_str(),
        ms(b.time_memory_floor_s).c_str());
}

int run_sol(const SolArgs& a) {
    auto spec = find_device(a.device);
    if (!spec) {
        eprintf("kforge sol: %s\n", spec.error().to_string().c_str());
        return kExitUserError;
    }
    BoundsOptions options;
    options.gaming_factor = a.gaming_factor;
    if (!a.policy.empty()) {
        options.policy = policy_from_string(a.policy);
        if (!options.policy) {
            eprintf(
                         "kforge sol: --policy: unknown policy \"%s\"; known: "
                         "fp32_strict, tf32, bf16, fp16\n",
                         a.policy.c_str());
            return kExitUserError;
        }
    }
    std::optional<Calibration> cal;
    if (!a.calibration.empty()) {
        auto loaded = load_calibration(a.calibration);
        if (!loaded) {
            eprintf("kforge sol: %s\n", loaded.error().to_string().c_str());
            return kExitUserError;
        }
        if (auto s = check_calibration(*spec, *loaded); !s) {
            eprintf("kforge sol: %s\n", s.error().to_string().c_str());
            return kExitUserError;
        }
        cal = std::move(*loaded);
    }
    const Ceilings ceilings = effective_ceilings(*spec, cal);
    auto out = nlohmann::ordered_json::array();
    for (const auto& path : a.problems) {
        auto problem = load_problem(path);
        if (!problem) {
            eprintf("kforge sol: %s\n", problem.error().to_string().c_str());
            return kExitUserError;
        }
        auto bounds = compute_bounds(*problem, ceilings, options);
        if (!bounds) {
            eprintf("kforge sol: %s: %s\n", path.c_str(),
                         bounds.error().to_string().c_str());
            return kExitUserError;
        }
        if (a.json) {
            out.push_back(to_json(*problem, *bounds, ceilings));
        } else {
            print_text(*problem, *bounds, ceilings, a.gaming_factor);
        }
    }
    if (a.json) print_json(out);
    return kExitOk;
}

}  // namespace

void register_sol(CLI::App& app) {
    auto args = std::make_shared<SolArgs>();
    auto* cmd = app.add_subcommand("sol", "Speed-of-light bounds of problems on a device");
    cmd->add_option("problems", args->problems, "Problem spec files (JSON)")->required();
    add_gpu_model_option(cmd, args->device,
                         "GPU of the device table, or an alias (" + known_device_names() + ")")
        ->capture_default_str();
    cmd->add_option("--policy", args->policy,
                    "Precision policy overriding the spec's: fp32_strict, tf32, bf16, fp16");
    cmd->add_option("--calibration", args->calibration,
                    "Calibration JSON (kforge calibrate) overriding datasheet ceilings");
    cmd->add_option("--gaming-factor", args->gaming_factor,
                    "Times below this fraction of the SOL floor are flagged as implausible")
        ->capture_default_str();
    cmd->add_flag("--json", args->json, "Print JSON instead of text");
    cmd->callback([args] { exit_code() = run_sol(*args); });
}

}  // namespace kforge::cli
