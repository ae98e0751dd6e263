// `kforge report RUN... [--db PATH] [-o|--out DIR] [--format md,html,json] [--gpu-model NAME]
// [--calibration FILE] [--sol-within PCT]`: writes DIR/report.{md,html,json} for the runs.
// `kforge report --compare [STORE:]RUN... [-o DIR] [--format ...]`: several runs of one problem
// side by side, from one store or several (report/compare.h): DIR/compare-wall.svg,
// DIR/compare-gpu.svg and DIR/compare.{md,html,json}.
// An unknown run, runs of different problems, a bad flag or a bad file is a user error (exit 2).
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "report/compare.h"
#include "report/compare_render.h"
#include "report/model.h"
#include "report/write.h"
#include "store/store.h"

namespace kforge::cli {
namespace {

struct ReportCliOptions {
    std::vector<std::string> runs;
    bool compare = false;
    std::string db_path = ".kforge/kforge.db";
    std::string out_dir = "report";
    std::string formats = "md,html,json";
    std::string device;
    std::string calibration_path;
    double sol_within_percent = 20.0;
};

int user_error(const std::string& message) {
    eprintf("kforge report: %s\n", message.c_str());
    return kExitUserError;
}

struct RunRef {
    std::string store;  // "" for --db
    int64_t run_id = 0;
};

// "12" or "STORE:12" (the last ':' splits, so a path may hold one).
Expected<RunRef> parse_run_ref(const std::string& text) {
    size_t colon = text.rfind(':');
    RunRef ref;
    std::string id = colon == std::string::npos ? text : text.substr(colon + 1);
    if (colon != std::string::npos) ref.store = text.substr(0, colon);
    size_t used = 0;
    try {
        ref.run_id = std::stoll(id, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != id.size() || ref.run_id <= 0 ||
        (colon != std::string::npos && ref.store.empty()))
        return make_error("run '" + text + "'", "expected a run id (see `kforge db runs`) or, "
                                                "with --compare, STORE:ID");
    return ref;
}

Expected<Store> open_existing(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return make_error(path, "no database here (pass --db PATH, or STORE:ID with --compare)");
    return open_store(path);
}

void print_written(const std::vector<std::string>& written, bool simulated,
                   const nlohmann::ordered_json& runs, const std::string& out_dir) {
    if (json_mode()) {
        print_json(nlohmann::ordered_json{
            {"runs", runs}, {"out", out_dir}, {"files", written}, {"simulated", simulated}});
        return;
    }
    for (const std::string& path : written)
        std::printf("%s%s\n", path.c_str(), simulated ? " (simulated)" : "");
}

int run_compare(const ReportCliOptions& o, const std::vector<RunRef>& refs,
                const std::vector<report::ReportFormat>& formats) {
    std::map<std::string, std::unique_ptr<Store>> stores;
    std::vector<report::CompareInput> inputs;
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (const RunRef& ref : refs) {
        const std::string& path = ref.store.empty() ? o.db_path : ref.store;
        if (!stores.count(path)) {
            auto store = open_existing(path);
            if (!store) return user_error(store.error().to_string());
            stores[path] = std::make_unique<Store>(std::move(*store));
        }
        inputs.push_back({stores[path].get(), ref.run_id});
        runs.push_back(path + ":" + std::to_string(ref.run_id));
    }
    auto comparison = report::build_comparison(inputs);
    if (!comparison) return user_error(comparison.error().to_string());
    auto written = report::write_comparison(*comparison, o.out_dir, formats);
    if (!written) return user_error(written.error().to_string());
    print_written(*written, comparison->simulated, runs, o.out_dir);
    return kExitOk;
}

int run_report(const ReportCliOptions& o) {
    auto formats = report::parse_report_formats(o.formats);
    if (!formats) return user_error(formats.error().to_string());
    std::vector<RunRef> refs;
    for (const std::string& text : o.runs) {
        auto ref = parse_run_ref(text);
        if (!ref) return user_error(ref.error().to_string());
        if (!ref->store.empty() && !o.compare)
            return user_error("run '" + text + "': STORE:ID names a run of another store, "
                              "for --compare only; a report reads --db");
        refs.push_back(*ref);
    }
    if (o.compare) {
        if (!o.device.empty() || !o.calibration_path.empty())
            return user_error("--gpu-model and --calibration set SOL ceilings, which a "
                              "comparison does not show");
        return run_compare(o, refs, *formats);
    }
    report::ReportOptions options;
    for (const RunRef& ref : refs) options.run_ids.push_back(ref.run_id);
    options.sol_within_percent = o.sol_within_percent;
    if (!o.device.empty()) options.device = o.device;
    if (!o.calibration_path.empty()) {
        auto cal = load_calibration(o.calibration_path);
        if (!cal) return user_error(cal.error().to_string());
        options.calibration = *cal;
    }
    auto store = open_existing(o.db_path);
    if (!store) return user_error(store.error().to_string());
    auto model = report::build_report(*store, options);
    if (!model) return user_error(model.error().to_string());
    auto written = report::write_report(*model, o.out_dir, *formats);
    if (!written) return user_error(written.error().to_string());
    print_written(*written, model->simulated, options.run_ids, o.out_dir);
    return kExitOk;
}

}  // namespace

void register_report(CLI::App& app) {
    auto o = std::make_shared<ReportCliOptions>();
    auto* cmd = app.add_subcommand("report", "Write Markdown, HTML and JSON reports of runs");
    cmd->add_option("runs", o->runs,
                    "Run ids (see `kforge db runs`); with --compare also STORE:ID")
        ->required();
    cmd->add_flag("--compare", o->compare,
                  "Compare runs of one problem: best speedup over the start against search "
                  "wall and GPU-seconds, one curve per run (compare-*.svg, compare.*)");
    cmd->add_option("--db", o->db_path, "Database file")->envname("KFORGE_DB")
        ->capture_default_str();
    cmd->add_option("-o,--out", o->out_dir, "Output folder")->capture_default_str();
    cmd->add_option("--format", o->formats, "Comma-separated: md, html, json")
        ->capture_default_str();
    add_gpu_model_option(cmd, o->device, "GPU of the device table for SOL (default: the run's)");
    cmd->add_option("--calibration", o->calibration_path, "Calibration file for SOL ceilings");
    cmd->add_option("--sol-within", o->sol_within_percent,
                    "Count problems within this % of SOL")->capture_default_str();
    cmd->callback([o] { exit_code() = run_report(*o); });
}

}  // namespace kforge::cli
