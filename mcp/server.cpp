#include "mcp/server.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <exception>

#include "mcp/arguments.h"

namespace kforge::mcp {

Server::Server(Services& services, Writer write, Log log)
    : services_(services), write_(std::move(write)), log_(std::move(log)) {}

Server::~Server() { shutdown(); }

void Server::send(const json& message) {
    // Invalid UTF-8 from a tool's output is replaced, never a throw.
    std::string text = message.dump(-1, ' ', false, json::error_handler_t::replace);
    std::lock_guard lock(write_mutex_);
    write_(text);
}

void Server::handle_oversized(size_t bytes) {
    log_("refused a message of " + std::to_string(bytes) + "+ bytes (limit " +
         std::to_string(services_.ledger().limits().max_request_bytes) + ")");
    send(rpc_error(nullptr, RpcCode::kInvalidRequest,
                   "request too large: over " +
                       std::to_string(services_.ledger().limits().max_request_bytes) +
                       " bytes (kforge mcp --max-request-bytes)"));
}

void Server::handle_line(const std::string& line) {
    reap();
    if (line.find_first_not_of(" \t\r") == std::string::npos) return;  // blank line
    Incoming in = classify(line);
    switch (in.kind) {
        case Incoming::Kind::kError:
            log_("JSON-RPC error " + std::to_string(static_cast<int>(in.code)) + ": " + in.message);
            send(rpc_error(in.id, in.code, in.message));
            return;
        case Incoming::Kind::kResponse: return;  // the server sends no requests
        case Incoming::Kind::kNotification: handle_notification(in); return;
        case Incoming::Kind::kRequest: break;
    }
    try {
        handle_request(in);
    } catch (const std::exception& e) {  // a bug of kforge's: answered, and serving goes on
        log_(std::string("internal error: ") + e.what());
        send(rpc_error(in.id, RpcCode::kInternalError, std::string("internal error: ") + e.what()));
    }
}

json Server::initialize(const json& params) {
    std::string asked = params.value("protocolVersion", "");
    std::string version = kProtocolVersions[std::size(kProtocolVersions) - 1];
    for (const char* v : kProtocolVersions)
        if (asked == v) version = v;
    protocol_version_ = version;
    if (params.contains("clientInfo") && params["clientInfo"].is_object() &&
        params["clientInfo"].contains("name") && params["clientInfo"]["name"].is_string())
        client_name_ = params["clientInfo"]["name"].get<std::string>();
    log_("initialize: client \"" + client_name_ + "\", protocol " + version +
         (asked == version ? "" : " (asked " + asked + ")"));
    return json{
        {"protocolVersion", version},
        {"capabilities", {{"tools", {{"listChanged", false}}},
                          {"resources", {{"subscribe", false}, {"listChanged", false}}}}},
        {"serverInfo", {{"name", "kforge"}, {"title", "kforge GPU-kernel optimizer"},
                        {"version", services_.config().kforge_version}}},
        {"instructions",
         "kforge judges CUDA kernels written in its kernel language. Read the language reference "
         "(tool language_reference or resource " + std::string(kReferenceUri) + "), then: "
         "check_problem -> sol (the time to beat) -> write a program -> check_program -> evaluate "
         "(every gate's evidence) -> profile (bottleneck and moves) -> improve. Paths are relative "
         "to the working folder the operator named; limits are the operator's."}};
}

void Server::handle_request(const Incoming& in) {
    const json params = in.params.is_null() ? json::object() : in.params;
    const std::string& m = in.method;
    if (m == "initialize") {
        if (!params.is_object() || !params.contains("protocolVersion") ||
            !params["protocolVersion"].is_string())
            return send(rpc_error(in.id, RpcCode::kInvalidParams,
                                  "initialize: params.protocolVersion (a string) is required"));
        return send(rpc_result(in.id, initialize(params)));
    }
    if (m == "ping") return send(rpc_result(in.id, json::object()));
    if (!params.is_object())
        return send(rpc_error(in.id, RpcCode::kInvalidParams, m + ": params must be an object"));
    if (m == "tools/list") {
        json tools = json::array();
        for (const Tool& t : all_tools())
            tools.push_back({{"name", t.name}, {"title", t.title}, {"description", t.description},
                             {"inputSchema", t.input_schema}, {"outputSchema", t.output_schema}});
        return send(rpc_result(in.id, {{"tools", tools}}));
    }
    if (m == "tools/call") return call_tool(in.id, params);
    if (m == "resources/list")
        return send(rpc_result(
            in.id, {{"resources", json::array({{{"uri", kReferenceUri},
                                               {"name", "kernel-language"},
                                               {"title", "kforge kernel-language reference card"},
                                               {"mimeType", "text/markdown"}}})}}));
    if (m == "resources/templates/list")
        return send(rpc_result(in.id, {{"resourceTemplates", json::array()}}));
    if (m == "resources/read") {
        if (!params.contains("uri") || !params["uri"].is_string())
            return send(rpc_error(in.id, RpcCode::kInvalidParams,
                                  "resources/read: params.uri (a string) is required"));
        if (params["uri"] != kReferenceUri)
            return send(rpc_error(in.id, static_cast<RpcCode>(-32002), "resource not found",
                                  {{"uri", params["uri"]}}));
        return send(rpc_result(in.id, {{"contents", json::array({{{"uri", kReferenceUri},
                                                                  {"mimeType", "text/markdown"},
                                                                  {"text", language_reference_text()}}})}}));
    }
    send(rpc_error(in.id, RpcCode::kMethodNotFound, "method not found: " + m));
}

void Server::handle_notification(const Incoming& in) {
    if (in.method == "notifications/cancelled" && in.params.is_object() &&
        in.params.contains("requestId")) {
        std::lock_guard lock(calls_mutex_);
        auto it = calls_.find(in.params["requestId"].dump());
        if (it != calls_.end()) {
            it->second.cancelled->store(true);
            log_("cancelled request " + it->first);
        }
    }
    // notifications/initialized and anything unknown: nothing to answer
}

void Server::call_tool(const json& id, const json& params) {
    if (!params.contains("name") || !params["name"].is_string())
        return send(rpc_error(id, RpcCode::kInvalidParams,
                              "tools/call: params.name (a string) is required"));
    const std::string name = params["name"].get<std::string>();
    const Tool* tool = nullptr;
    for (const Tool& t : all_tools())
        if (t.name == name) tool = &t;
    if (!tool) return send(rpc_error(id, RpcCode::kInvalidParams, "unknown tool: " + name));
    json args = params.contains("arguments") ? params["arguments"] : json::object();
    if (args.is_null()) args = json::object();
    json token = nullptr;
    if (params.contains("_meta") && params["_meta"].is_object() &&
        params["_meta"].contains("progressToken"))
        token = params["_meta"]["progressToken"];

    const std::string key = id.dump();
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::lock_guard lock(calls_mutex_);
    if (calls_.size() >= kMaxCallsInFlight)
        return send(rpc_error(id, RpcCode::kInvalidRequest,
                              "too many tool calls in flight (" + std::to_string(kMaxCallsInFlight) +
                                  "); wait for answers before sending more"));
    if (calls_.count(key))
        return send(rpc_error(id, RpcCode::kInvalidRequest, "request id " + key + " is in use"));
    auto run = [this, tool, args, token, id, cancelled, done] {
        CallContext ctx;
        ctx.client = client_name_;
        ctx.cancelled = cancelled;
        ctx.log = log_;
        if (!token.is_null())
            ctx.progress = [this, token, cancelled](double progress, std::optional<double> total,
                                                    const std::string& message) {
                if (cancelled->load()) return;
                json p{{"progressToken", token}, {"progress", progress}};
                if (total) p["total"] = *total;
                if (!message.empty()) p["message"] = message;
                send({{"jsonrpc", "2.0"}, {"method", "notifications/progress"}, {"params", p}});
            };
        ToolResult r;
        if (Status st = check_arguments(tool->input_schema, args); !st) {
            r = tool_error(st.error());
        } else {
            try {
                r = tool->run(services_, args, ctx);
            } catch (const std::exception& e) {
                log_(tool->name + ": internal error: " + e.what());
                r = tool_error(tool->name, std::string("internal error: ") + e.what());
            }
        }
        if (!cancelled->load()) {  // a cancelled request gets no response (MCP)
            json result{{"content", json::array({{{"type", "text"},
                                                  {"text", r.text.empty() ? r.structured.dump()
                                                                          : r.text}}})},
                        {"isError", r.is_error}};
            if (!r.is_error || !r.structured.empty()) result["structuredContent"] = r.structured;
            send(rpc_result(id, result));
        }
        done->store(true);
    };
    calls_[key] = Call{std::thread(run), cancelled, done, tool->name == "optimize"};
}

void Server::reap() {
    std::lock_guard lock(calls_mutex_);
    for (auto it = calls_.begin(); it != calls_.end();) {
        if (it->second.done->load()) {
            it->second.thread.join();
            it = calls_.erase(it);
        } else {
            ++it;
        }
    }
}

void Server::wait_idle() {
    for (;;) {
        reap();
        {
            std::lock_guard lock(calls_mutex_);
            if (calls_.empty()) return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

void Server::finish_input() {
    {
        std::lock_guard lock(calls_mutex_);
        for (auto& [_, c] : calls_)
            if (c.long_running) c.cancelled->store(true);
    }
    wait_idle();
}

void Server::shutdown() {
    {
        std::lock_guard lock(calls_mutex_);
        for (auto& [_, c] : calls_) c.cancelled->store(true);
    }
    wait_idle();
}

int serve(Services& services, int in_fd, int out_fd, const Server::Log& log) {
    auto write_line = [out_fd, log](const std::string& text) {
        std::string line = text + "\n";
        size_t off = 0;
        while (off < line.size()) {
            ssize_t n = ::write(out_fd, line.data() + off, line.size() - off);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                log("cannot write to the client (" + std::string(std::strerror(errno)) + ")");
                return;
            }
            off += static_cast<size_t>(n);
        }
    };
    Server server(services, write_line, log);
    LineReader reader(in_fd, services.ledger().limits().max_request_bytes);
    for (;;) {
        LineReader::Line l = reader.next();
        if (l.kind == LineReader::Kind::kEof) break;
        if (l.kind == LineReader::Kind::kOversized) server.handle_oversized(l.bytes);
        else server.handle_line(l.text);
    }
    log("end of input: stopping a search in flight, finishing the other calls");
    // What the calls in flight record (the store) is kept; a search is asked to stop.
    server.finish_input();
    return 0;
}

}  // namespace kforge::mcp
