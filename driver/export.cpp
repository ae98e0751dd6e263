// `kforge export` (driver/export.h): resolve the source into (spec, program, evidence) items,
// build each for the target through builder::build, write the folder, then the Python side
// (python/kforge_py/export/write_package.py) writes the package, ModelNew and the README.
#include "driver/export.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "builder/build.h"
#include "driver/start_program.h"
#include "problem/spec.h"
#include "report/model.h"
#include "runtime/package.h"
#include "sol/target.h"
#include "store/store.h"

namespace kforge::driver {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct Item {
    std::string spec_json, spec_name;  // spec_name: where parse errors point
    std::string program_text, program_name;
    Json evidence;
    std::string device_key;  // the run's, "" when none
};

ExportResult failed(Exit exit, const std::string& message) { return {fail(exit, message), {}}; }

// A program exported without a run has no measured launch mode: from this many launches on it
// is launched as one CUDA graph. Session 26's Level 3 exports (H100, stream mode): an eager call
// of a network of 20-1029 launches took 66-1330 us longer than the replay of its CUDA graph
// (VanillaRNNHidden, 1029 launches: 3650 us of host time a call against 48 for the replay);
// below 16 launches the difference was 23-360 us, much of it the cold host path, not launches.
constexpr size_t kGraphLaunchesUnmeasured = 16;

// The launch mode the evaluation chose: the timing gate's evidence "launch_mode" (graph only
// where the full tier measured it faster, eval/launch_mode.h); "stream" when it has none.
std::string launch_mode_of_timing(const Json& timing_evidence) {
    if (!timing_evidence.is_object()) return "stream";
    auto it = timing_evidence.find("launch_mode");
    return it != timing_evidence.end() && it->is_string() && *it == "graph" ? "graph" : "stream";
}

Expected<std::string> read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return make_error(p.string(), "cannot read the file");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

Status write_text(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
    if (!out) return make_error(p.string(), "cannot write the file");
    return Ok{};
}

bool is_run_id(const std::string& s) {
    return !s.empty() && s.size() < 19 &&
           std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// The target of device table key `device`; an unknown key names the flag that gave it.
Expected<Target> target_of(const std::string& device) {
    auto target = find_target(device);
    if (!target) return make_error("--gpu-model", target.error().message);
    return target;
}

// The best program of each problem of a run, with the report model's figures as evidence.
Expected<std::vector<Item>> items_of_run(const ExportRequest& r) {
    auto store = open_store(r.db);
    if (!store) return store.error();
    report::ReportOptions options;
    options.run_ids = {std::stoll(r.source)};
    auto rep = report::build_report(*store, options);
    if (!rep) return rep.error();
    const report::RunInfo& run = rep->runs.at(0);
    std::vector<Item> items;
    for (const report::ProblemReport& p : rep->problems) {
        if (!p.best) continue;
        auto problem = store->get_problem(p.problem_id);
        if (!problem) return problem.error();
        auto cand = store->get_candidate(p.best->candidate_id);
        if (!cand) return cand.error();
        Item it;
        it.spec_json = problem->spec_json;
        it.spec_name = "run " + r.source + " problem " + p.name;
        it.program_text = cand->program_text;
        it.program_name = "candidate " + std::to_string(cand->id);
        it.device_key = run.datasheet_key;
        Json gates = Json::array();
        std::string launch_mode = "stream";
        for (const report::GateRow& g : p.best->gates) {
            gates.push_back({{"gate", g.gate}, {"result", g.result}});
            if (g.gate == "timing")
                launch_mode = launch_mode_of_timing(Json::parse(g.evidence_json, nullptr, false));
        }
        it.evidence = {{"source", "run " + r.source + " in " + r.db},
                       {"problem", p.name},
                       {"device", run.device_name},
                       {"simulated", run.simulated},
                       {"candidate_id", cand->id},
                       {"tier", p.best->tier},
                       {"toolchain", p.best->toolchain},
                       {"median_ns", p.best->stats.median_ns},
                       {"ci95_low_ns", p.best->stats.ci95_low_ns},
                       {"ci95_high_ns", p.best->stats.ci95_high_ns},
                       {"samples", p.best->stats.count},
                       {"sol_time_ns", p.sol.available ? Json(p.sol.time_sol_s * 1e9) : Json()},
                       {"percent_sol", p.sol.percent_sol ? Json(*p.sol.percent_sol) : Json()},
                       {"gates", gates},
                       {"launch_mode", launch_mode}};
        for (const report::BaselineTime& b : p.baselines)
            it.evidence["baselines"][b.name] = b.stats.median_ns;
        items.push_back(std::move(it));
    }
    if (items.empty())
        return make_error("run " + r.source, "no problem of the run has a best program to export");
    return items;
}

// An `optimize --out` folder: best.kf and evidence.json; the spec from --spec.
Expected<Item> item_of_folder(const ExportRequest& r) {
    fs::path dir(r.source);
    if (r.spec.empty())
        return make_error(r.source, "an optimize --out folder holds no spec: pass --spec P.json");
    Item it;
    auto program = read_text(dir / "best.kf");
    if (!program) return make_error(r.source, "no best.kf: not an optimize --out folder with a "
                                              "best program");
    it.program_text = *program;
    it.program_name = (dir / "best.kf").string();
    auto spec = read_text(r.spec);
    if (!spec) return spec.error();
    it.spec_json = *spec;
    it.spec_name = r.spec;
    auto ev = read_text(dir / "evidence.json");
    it.evidence = ev ? Json::parse(*ev, nullptr, false) : Json::object();
    if (!it.evidence.is_object()) it.evidence = Json::object();
    it.evidence["source"] = "optimize --out folder " + r.source;
    if (!it.evidence.contains("launch_mode")) {
        std::string mode = "stream";
        if (auto g = it.evidence.find("gates"); g != it.evidence.end() && g->is_array())
            for (const Json& gate : *g)
                if (gate.is_object() && gate.value("gate", "") == "timing" && gate.contains("evidence"))
                    mode = launch_mode_of_timing(gate["evidence"]);
        it.evidence["launch_mode"] = mode;
    }
    return it;
}

// A spec and its program: the one given, else the .kf beside the spec, else the start program
// the planner synthesizes for `device` (driver/start_program.h), as optimize would start from.
Expected<Item> item_of_spec(const ExportRequest& r, const std::string& device) {
    Item it;
    auto spec = read_text(r.source);
    if (!spec) return spec.error();
    it.spec_json = *spec;
    it.spec_name = r.source;
    auto problem = parse_problem(it.spec_json, it.spec_name);
    if (!problem) return problem.error();
    auto target = target_of(device);
    if (!target) return target.error();
    eval::DeviceInfo info;
    info.name = device;
    info.datasheet_key = target->device_key;
    info.sm_count = target->sm_count;
    auto start = start_program(r.source, r.program, *problem, info);
    if (!start) return start.error();
    it.program_text = start->text;
    it.program_name = start->synthesized ? "<program synthesized for " + problem->name + ">"
                      : !r.program.empty() ? r.program
                                           : fs::path(r.source).replace_extension(".kf").string();
    std::string what = start->synthesized ? "the planner's start program (synthesized, not "
                                            "searched)"
                                          : "program " + it.program_name;
    it.evidence = {{"source", "spec " + r.source + " with " + what},
                   {"note", "exported without a run: no measurement, no gates"}};
    return it;
}

// "imported from KernelBench file 01_gemm.py: ..." -> "01_gemm.py"
std::string kernelbench_file_of(const std::string& description) {
    const std::string prefix = "imported from KernelBench file ";
    if (description.rfind(prefix, 0) != 0) return "";
    std::string rest = description.substr(prefix.size());
    size_t end = rest.find(".py");
    return end == std::string::npos ? "" : rest.substr(0, end + 3);
}

std::string op_name(const std::string& problem) {
    std::string s;
    for (char c : problem) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "p_" + s;
    return s;
}

}  // namespace

ExportResult export_runs(const ExportRequest& base,
                         const std::vector<std::pair<int64_t, std::string>>& runs,
                         bool folder_per_problem, const Console& console) {
    ExportResult all;
    for (const auto& [run, problem] : runs) {
        ExportRequest r = base;
        r.source = std::to_string(run);
        r.out_dir = folder_per_problem ? (fs::path(base.out_dir) / problem).string() : base.out_dir;
        ExportResult one = run_export(r, console);
        if (one.outcome.exit != Exit::kOk) {
            one.outcome.message = "export of run " + r.source + " (" + problem + ") to " +
                                  r.out_dir + ": " + one.outcome.message;
            one.exported.insert(one.exported.begin(), all.exported.begin(), all.exported.end());
            return one;
        }
        all.exported.insert(all.exported.end(), one.exported.begin(), one.exported.end());
    }
    return all;
}

ExportResult run_export(const ExportRequest& r, const Console& console) {
    auto note = [&](const std::string& s) { if (console.note) console.note(s); };
    if (r.out_dir.empty()) return failed(Exit::kUserError, "export: -o DIR is required");
    std::vector<Item> items;
    std::error_code ec;
    if (is_run_id(r.source)) {
        auto run_items = items_of_run(r);
        if (!run_items) return failed(Exit::kUserError, run_items.error().to_string());
        items = std::move(*run_items);
    } else if (fs::is_directory(r.source, ec)) {
        auto it = item_of_folder(r);
        if (!it) return failed(Exit::kUserError, it.error().to_string());
        items.push_back(std::move(*it));
    } else {
        auto it = item_of_spec(r, r.device.empty() ? std::string(kDefaultTargetDevice) : r.device);
        if (!it) return failed(Exit::kUserError, it.error().to_string());
        items.push_back(std::move(*it));
    }
    ExportResult result;
    for (Item& it : items) {
        auto problem = parse_problem(it.spec_json, it.spec_name);
        if (!problem) return failed(Exit::kUserError, problem.error().to_string());
        std::string device = !r.device.empty() ? r.device
                           : !it.device_key.empty() ? it.device_key
                                                    : std::string(kDefaultTargetDevice);
        auto target = target_of(device);
        if (!target) return failed(Exit::kUserError, target.error().to_string());
        if (!r.arch.empty() && r.arch != target->arch)
            return failed(Exit::kUserError,
                          "--arch " + r.arch + " is not the arch of device " + device + " (" +
                              target->arch + "): name the GPU with --gpu-model");
        builder::BuildOptions options;
        options.no_build = r.no_build;
        options.compile_cache_dir = r.compile_cache_dir;
        options.file_name = it.program_name;
        builder::BuiltCandidate built = builder::build(it.program_text, *problem, *target, options);
        if (!built.ok()) {
            Exit exit = built.status == builder::BuildStatus::kInvalidProgram ? Exit::kUserError
                      : built.status == builder::BuildStatus::kToolchainMissing ? Exit::kEnvironment
                                                                             : Exit::kFailure;
            std::string why = built.message;
            if (built.compiled && !built.compiled->log.empty()) why += "\n" + built.compiled->log;
            return failed(exit, problem->name + ": " + why);
        }
        // One problem: OUT itself; several (a suite run): OUT/<problem>.
        fs::path out = items.size() == 1 ? fs::path(r.out_dir) : fs::path(r.out_dir) / problem->name;
        std::string package = "kforge_" + op_name(problem->name);
        fs::path program_dir = out / package / "program";
        fs::create_directories(program_dir, ec);
        if (ec) return failed(Exit::kUserError, "cannot create " + program_dir.string() + ": " +
                                                    ec.message());
        runtime::PackageManifest manifest = runtime::manifest_of(*problem, target->arch);
        manifest.built = !r.no_build;
        codegen::LaunchPlan plan = built.lowered.plan;  // launched as the evaluation chose
        if (!it.evidence.contains("launch_mode")) {  // a spec exported without a run
            const size_t n = plan.kernels.size();
            const bool graph = n >= kGraphLaunchesUnmeasured;
            it.evidence["launch_mode"] = graph ? "graph" : "stream";
            it.evidence["launch_mode_reason"] =
                "not measured (no run): " + std::to_string(n) + " launches, " +
                (graph ? "one CUDA graph instead of a host launch each"
                       : "fewer than " + std::to_string(kGraphLaunchesUnmeasured) +
                             ", launched on the stream");
        }
        plan.launch_mode = it.evidence.value("launch_mode", "stream") == "graph"
                               ? codegen::LaunchMode::kGraph
                               : codegen::LaunchMode::kStream;
        if (!r.no_build) {
            manifest.cubin_file = "kernels.cubin";
            fs::copy_file(built.compiled->cubin_path, program_dir / manifest.cubin_file,
                          fs::copy_options::overwrite_existing, ec);
            if (!ec && !built.compiled->host_library_path.empty()) {
                manifest.host_library_file = plan.host_library;
                fs::copy_file(built.compiled->host_library_path, program_dir / plan.host_library,
                              fs::copy_options::overwrite_existing, ec);
            }
            if (ec) return failed(Exit::kUserError, "cannot copy the build into " +
                                                        program_dir.string() + ": " + ec.message());
        }
        it.evidence["problem"] = problem->name;
        it.evidence["arch"] = target->arch;
        it.evidence["device_target"] = target->device_key;
        it.evidence["program_hash"] = built.program_hash;
        std::vector<std::pair<fs::path, std::string>> files = {
            {program_dir / runtime::kManifestFile, runtime::to_json(manifest).dump(2) + "\n"},
            {program_dir / "plan.json", codegen::to_json(plan).dump(2) + "\n"},
            {program_dir / plan.source_file, built.lowered.cuda_source},
            {out / "spec.json", it.spec_json},
            {out / "program.kf", built.canonical_text},
            {out / "evidence.json", it.evidence.dump(2) + "\n"},
        };
        for (const auto& [path, text] : files)
            if (Status s = write_text(path, text); !s)
                return failed(Exit::kUserError, s.error().to_string());
        if (!r.runtime_library.empty()) {
            fs::copy_file(r.runtime_library, program_dir / "libkforge_runtime.so",
                          fs::copy_options::overwrite_existing, ec);
            if (ec) return failed(Exit::kUserError, "cannot copy " + r.runtime_library + ": " +
                                                        ec.message());
        } else {
            note("no libkforge_runtime.so given: " + out.string() + " cannot launch until one is "
                 "copied to " + program_dir.string());
        }
        std::vector<std::string> args = {out.string(), "--package", package};
        std::string kb_file = kernelbench_file_of(problem->description);
        ExportedProgram done{problem->name, out.string(), !r.no_build, false};
        if (!r.kernelbench.empty()) {
            fs::path kb(r.kernelbench);
            if (fs::is_directory(kb, ec)) kb = kb_file.empty() ? fs::path() : kb / kb_file;
            if (!kb.empty() && fs::exists(kb, ec)) {
                args.insert(args.end(), {"--kernelbench", kb.string()});
                done.model_new = true;
            } else if (items.size() == 1 || !kb_file.empty()) {
                return failed(Exit::kUserError, "--kernelbench " + r.kernelbench +
                                                    ": no KernelBench file for " + problem->name);
            }
        } else if (!kb_file.empty()) {
            note(problem->name + " was imported from KernelBench file " + kb_file +
                 ": pass --kernelbench FILE to write model_new.py (class ModelNew)");
        }
        auto py = run_python_tool(r.python, "kforge_py.export.write_package", args, false);
        if (!py) return failed(Exit::kEnvironment, py.error().to_string());
        if (py->exit_code != 0)
            return failed(py->exit_code == 2 ? Exit::kUserError : Exit::kEnvironment,
                          problem->name + ": writing the Python package failed (exit " +
                              std::to_string(py->exit_code) + ")");
        if (console.print)
            console.print("exported " + problem->name + " (" + target->arch +
                          (r.no_build ? ", not built" : "") + (done.model_new ? ", ModelNew" : "") +
                          ") -> " + out.string() + "\n");
        result.exported.push_back(std::move(done));
    }
    return result;
}

}  // namespace kforge::driver
