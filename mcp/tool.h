// What every tool of `kforge mcp` shares: the operator's configuration, the services a call may
// use (the working folder, the limits, the evaluation backend and the store, both opened on first
// use and shared by every call), one call's context (the client, progress, cancellation) and
// the tool's description (name, JSON schemas of its input and its structured output, handler).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "driver/eval_backend.h"
#include "driver/python_tool.h"
#include "mcp/limits.h"
#include "mcp/paths.h"
#include "problem/problem.h"
#include "store/store.h"

namespace kforge::mcp {

using json = nlohmann::json;

// Set by the operator on `kforge mcp`'s command line; no tool argument changes it.
struct ServerConfig {
    std::string root;                    // the working folder (--root)
    OperatorLimits limits;
    driver::DeviceChoice device = driver::DeviceChoice::kAuto;
    int gpu = 0;
    std::string sim_model = "h200";      // the simulated device's model
    std::string gpu_model = "h200";      // device table entry for sol / compile / check
    std::string db;                      // the store ("" : <root>/.kforge/kforge.db)
    std::string kforge_executable;       // workers, ncu and the importer start it again
    std::string compile_cache_dir;
    std::string ncu = "ncu";
    driver::PythonOptions python;
    std::string runtime_library;         // export: libkforge_runtime.so to copy ("" none)
    bool allow_import = false;           // import_kernelbench runs the file's Python (--allow-import)
    std::string kforge_version;
};

// One tools/call.
struct CallContext {
    std::string client;  // the client's name (initialize's clientInfo.name): the proposer
    // Sends notifications/progress when the client gave a progressToken (else a no-op).
    std::function<void(double progress, std::optional<double> total, const std::string& message)>
        progress = [](double, std::optional<double>, const std::string&) {};
    std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
    // Log lines (stderr; never stdout, which carries the protocol only).
    std::function<void(const std::string&)> log = [](const std::string&) {};
};

struct ToolResult {
    json structured = json::object();  // structuredContent (conforms to the output schema)
    std::string text;                  // content[0].text ("" : the structured JSON as text)
    bool is_error = false;
};

ToolResult tool_error(const Error& e);
ToolResult tool_error(const std::string& where, const std::string& message);

// State shared by every call of one server.
class Services {
public:
    Services(ServerConfig config, Root root);
    ~Services();  // the agents' runs are marked finished
    const ServerConfig& config() const { return config_; }
    const Root& root() const { return root_; }
    Ledger& ledger() { return ledger_; }

    // Evaluations, profiles and optimize take turns on the device (one backend, one worker).
    std::mutex& device_mutex() { return device_mutex_; }
    // The evaluation backend (opened on first use; the caller holds device_mutex()).
    Expected<driver::EvalBackend*> backend(const std::function<void(const std::string&)>& note);
    // The store (opened on first use); lock store_mutex() around its use.
    Expected<Store*> store();
    std::mutex& store_mutex() { return store_mutex_; }
    std::string db_path() const;
    // The run an agent's evaluations of `problem` on `device` land in (one per client, problem
    // and device for the server's life; made on first use). The caller holds store_mutex().
    Expected<int64_t> agent_run(Store& store, const Problem& problem,
                                const eval::DeviceInfo& device, const std::string& client);

private:
    ServerConfig config_;
    Root root_;
    Ledger ledger_;
    std::mutex device_mutex_;
    std::unique_ptr<driver::EvalBackend> backend_;
    std::mutex store_mutex_;
    std::unique_ptr<Store> store_;
    std::map<std::string, int64_t> agent_runs_;
};

struct Tool {
    std::string name;
    std::string title;
    std::string description;
    json input_schema;
    json output_schema;
    std::function<ToolResult(Services&, const json& arguments, CallContext&)> run;
};

// The tools by family (tools_problem.cpp, tools_device.cpp, tools_run.cpp).
std::vector<Tool> problem_tools();
std::vector<Tool> device_tools();
std::vector<Tool> run_tools();
// All of them, in the order tools/list gives.
const std::vector<Tool>& all_tools();

// ---- helpers the tools share (tool.cpp)
// The problem of argument `field` (a spec path inside the root).
Expected<Problem> load_problem_arg(const Services& s, const json& args,
                                   const std::string& field = "problem");
// The program of `program` (a path inside the root) or `program_text`; exactly one.
struct ProgramArg {
    std::string text;
    std::string file;  // where parse and check messages point (the relative path, or "<program>")
};
Expected<ProgramArg> load_program_arg(const Services& s, const json& args);
// An Error as {"where", "message", "detail", "suggested_fix"} (a checker's "use ..." advice).
json error_json(const Error& e);
// The kernel language's reference card (dsl/reference_card.h): a tool and a resource.
std::string language_reference_text();
inline constexpr const char* kReferenceUri = "kforge://reference/kernel-language";

}  // namespace kforge::mcp
