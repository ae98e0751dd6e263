// `kforge mcp`: a Model Context Protocol server over stdio (JSON-RPC 2.0, one message per line).
// It negotiates the protocol version in `initialize` (2024-11-05 .. 2025-11-25), lists kforge's
// tools with their input and output JSON schemas, runs each tools/call on its own thread (so a
// long optimize can report progress and be cancelled while other requests are answered),
// and serves the kernel-language reference card as a resource. A malformed message gets its
// JSON-RPC error and the server reads on; stdout carries the protocol only, logs go to `log`.
#pragma once

#include <atomic>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "mcp/jsonrpc.h"
#include "mcp/tool.h"

namespace kforge::mcp {

// The protocol versions `initialize` accepts, oldest first; the last is offered otherwise.
inline constexpr const char* kProtocolVersions[] = {"2024-11-05", "2025-03-26", "2025-06-18",
                                                     "2025-11-25"};

// Tool calls in flight at once (each has a thread); the device tools have the operator's own,
// lower limit (--max-concurrent).
inline constexpr size_t kMaxCallsInFlight = 32;

class Server {
public:
    using Writer = std::function<void(const std::string& line)>;  // one message, no newline
    using Log = std::function<void(const std::string& line)>;
    Server(Services& services, Writer write, Log log);
    ~Server();  // waits for the calls in flight (cancelled first)

    // One message line as read; answers (through the writer) what needs an answer.
    void handle_line(const std::string& line);
    // A message over the size limit, dropped unread: an Invalid Request error with id null.
    void handle_oversized(size_t bytes);
    // Cancels every call in flight and waits for them.
    void shutdown();
    // Waits until no call is in flight (tests).
    void wait_idle();
    // The end of input: the long-running calls (optimize) are asked to stop, the others finish.
    void finish_input();

private:
    void send(const json& message);
    void handle_request(const Incoming& in);
    void handle_notification(const Incoming& in);
    json initialize(const json& params);
    void call_tool(const json& id, const json& params);
    void reap();

    struct Call {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> cancelled;
        std::shared_ptr<std::atomic<bool>> done;
        bool long_running = false;  // optimize: stopped at the end of input
    };
    Services& services_;
    Writer write_;
    Log log_;
    std::mutex write_mutex_;
    std::mutex calls_mutex_;
    std::map<std::string, Call> calls_;  // by the request id's JSON text
    std::string client_name_;
    std::string protocol_version_;
};

// Reads `in_fd` to its end (messages up to config.limits.max_request_bytes), writes to `out_fd`.
// Returns 0 at the end of input.
int serve(Services& services, int in_fd, int out_fd, const Server::Log& log);

}  // namespace kforge::mcp
