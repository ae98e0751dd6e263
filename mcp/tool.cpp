#include "mcp/tool.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "dsl/reference_card.h"
#include "problem/spec.h"

namespace kforge::mcp {

namespace fs = std::filesystem;

ToolResult tool_error(const Error& e) {
    ToolResult r;
    r.is_error = true;
    r.text = e.to_string();
    r.structured = json{{"error", error_json(e)}};
    return r;
}

ToolResult tool_error(const std::string& where, const std::string& message) {
    return tool_error(make_error(where, message));
}

Services::Services(ServerConfig config, Root root)
    : config_(std::move(config)), root_(std::move(root)), ledger_(config_.limits) {}

Services::~Services() {
    std::lock_guard lock(store_mutex_);
    if (!store_) return;
    for (const auto& [_, run] : agent_runs_) (void)store_->finish_run(run, RunStatus::kFinished);
}

std::string Services::db_path() const {
    return config_.db.empty() ? (root_.dir() / ".kforge" / "kforge.db").string() : config_.db;
}

Expected<driver::EvalBackend*> Services::backend(
    const std::function<void(const std::string&)>& note) {
    if (backend_) return backend_.get();
    driver::EvalBackendOptions o;
    o.device = config_.device;
    o.gpu = config_.gpu;
    o.sim_model = config_.sim_model;
    o.worker_executable = config_.kforge_executable;
    auto opened = driver::open_eval_backend(o);
    if (!opened.fallback.empty())
        note("no usable GPU (" + opened.fallback + "): using the SIMULATED device; times are "
             "model estimates, not measurements");
    if (!opened.value) return make_error("device", opened.message);
    backend_ = std::move(opened.value);
    return backend_.get();
}

Expected<Store*> Services::store() {
    if (store_) return store_.get();
    const std::string path = db_path();
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    auto opened = open_store(path);
    if (!opened) return opened.error();
    store_ = std::make_unique<Store>(std::move(*opened));
    return store_.get();
}

Expected<int64_t> Services::agent_run(Store& store, const Problem& problem,
                                      const eval::DeviceInfo& device, const std::string& client) {
    const std::string key = client + "\n" + problem.name + "\n" + device.uuid;
    if (auto it = agent_runs_.find(key); it != agent_runs_.end()) return it->second;
    auto problem_id = store.upsert_problem(problem.name, problem_to_json(problem).dump());
    if (!problem_id) return problem_id.error();
    auto device_id = store.upsert_device(
        DeviceRecord{0, device.name, device.uuid, "", device.driver, device.datasheet_key});
    if (!device_id) return device_id.error();
    NewRun run;
    run.problem_id = *problem_id;
    run.device_id = *device_id;
    run.options_json = json{{"command", "mcp"}, {"client", client}}.dump();
    run.kforge_version = config_.kforge_version;
    auto id = store.create_run(run);
    if (!id) return id.error();
    agent_runs_[key] = *id;
    return *id;
}

Expected<Problem> load_problem_arg(const Services& s, const json& args, const std::string& field) {
    if (!args.contains(field)) return make_error("arguments." + field, "is required");
    auto path = s.root().resolve("arguments." + field, args[field].get<std::string>(),
                                 Root::Access::kRead);
    if (!path) return path.error();
    auto problem = load_problem(path->string());
    if (!problem) {
        Error e = problem.error();
        e.message = s.root().relative(*path) + (e.where.empty() ? "" : ": " + e.where) + ": " +
                    e.message;
        e.where = "arguments." + field;
        return e;
    }
    return problem;
}

Expected<ProgramArg> load_program_arg(const Services& s, const json& args) {
    const bool file = args.contains("program"), text = args.contains("program_text");
    if (file == text)
        return make_error("arguments.program", "give exactly one of program (a .kf file in the "
                                               "working folder) and program_text");
    ProgramArg p;
    if (text) {
        p.text = args["program_text"].get<std::string>();
        p.file = "<program_text>";
        return p;
    }
    auto path = s.root().resolve("arguments.program", args["program"].get<std::string>(),
                                 Root::Access::kRead);
    if (!path) return path.error();
    std::ifstream in(*path);
    if (!in) return make_error("arguments.program", "cannot read " + s.root().relative(*path));
    std::stringstream ss;
    ss << in.rdbuf();
    p.text = ss.str();
    p.file = s.root().relative(*path);
    return p;
}

json error_json(const Error& e) {
    json j{{"where", e.where}, {"message", e.message}};
    if (!e.detail.empty()) j["detail"] = e.detail;
    // The checker's advice ("...; use tile 128xN with N <= 64"): its last clause that starts
    // with an instruction.
    std::string fix;
    for (const char* cue : {"did you mean", "use ", "try ", "expected "}) {
        size_t at = e.message.rfind(cue);
        if (at != std::string::npos && (at == 0 || e.message[at - 1] == ' ' ||
                                        e.message[at - 1] == '(' || e.message[at - 1] == ';')) {
            fix = e.message.substr(at);
            if (!fix.empty() && fix.back() == ')') fix.pop_back();
            break;
        }
    }
    j["suggested_fix"] = fix.empty() ? json(nullptr) : json(fix);
    return j;
}

std::string language_reference_text() { return dsl::reference_card(); }

const std::vector<Tool>& all_tools() {
    static const std::vector<Tool> tools = [] {
        std::vector<Tool> t = problem_tools();
        for (auto* family : {&device_tools, &run_tools}) {
            std::vector<Tool> more = (*family)();
            t.insert(t.end(), more.begin(), more.end());
        }
        return t;
    }();
    return tools;
}

}  // namespace kforge::mcp
