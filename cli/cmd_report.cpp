// `kforge report RUN... [--db PATH] [--out DIR] [--format md,html,json] [--device NAME]
// [--calibration FILE] [--sol-within PCT]`: writes DIR/report.{md,html,json} for the runs.
// An unknown run, a bad flag or a bad file is a user error (exit 2).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "report/model.h"
#include "report/write.h"
#include "store/store.h"

namespace kforge::cli {
namespace {

struct ReportCliOptions {
    std::vector<int64_t> runs;
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

int run_report(const ReportCliOptions& o) {
    auto formats = report::parse_report_formats(o.formats);
    if (!formats) return user_error(formats.error().to_string());
    report::ReportOptions options;
    options.run_ids = o.runs;
    options.sol_within_percent = o.sol_within_percent;
    if (!o.device.empty()) options.device = o.device;
    if (!o.calibration_path.empty()) {
        auto cal = load_calibration(o.calibration_path);
        if (!cal) return user_error(cal.error().to_string());
        options.calibration = *cal;
    }
    std::error_code ec;
    if (!std::filesystem::exists(o.db_path, ec))
        return user_error(o.db_path + ": no database here (pass --db PATH)");
    auto store = open_store(o.db_path);
    if (!store) return user_error(store.error().to_string());
    auto model = report::build_report(*store, options);
    if (!model) return user_error(model.error().to_string());
    auto written = report::write_report(*model, o.out_dir, *formats);
    if (!written) return user_error(written.error().to_string());
    if (json_mode()) {
        print_json(nlohmann::ordered_json{{"runs", o.runs}, {"out", o.out_dir},
                                          {"files", *written}, {"simulated", model->simulated}});
        return kExitOk;
    }
    for (const std::string& path : *written)
        std::printf("%s%s\n", path.c_str(), model->simulated ? " (simulated)" : "");
    return kExitOk;
}

}  // namespace

void register_report(CLI::App& app) {
    auto o = std::make_shared<ReportCliOptions>();
    auto* cmd = app.add_subcommand("report", "Write Markdown, HTML and JSON reports of runs");
    cmd->add_option("runs", o->runs, "Run ids (see `kforge db runs`)")->required();
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
