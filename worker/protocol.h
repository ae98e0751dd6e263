// The worker protocol: versioned messages between the supervisor and an evaluation worker, one
// JSON object per line over the worker's stdin (tasks) and stdout (hello, results, errors). The
// worker's stderr is a log, never part of the protocol.
//
//   worker -> {"type":"hello","protocol_version":1,"device":{...DeviceInfo...},"pid":N}
//   sup    -> {"type":"task","protocol_version":1,"id":7,"kind":"evaluate","payload":{...}}
//   worker -> {"type":"result","protocol_version":1,"id":7,"status":"passed","report":{...},
//              "restart":false}
//   worker -> {"type":"error","protocol_version":1,"id":7,"message":"..."}   (a malformed task)
//
// Decoding never throws: a partial line, garbage or a message of the wrong version is an Error,
// which the supervisor treats as a crashed worker.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "device/device.h"
#include "device/device_json.h"
#include "problem/problem.h"
#include "store/enums.h"

namespace kforge::eval {

inline constexpr int kProtocolVersion = 1;
// A longer line is a misbehaving worker (reports carry summaries, never tensors).
inline constexpr size_t kMaxMessageBytes = size_t{64} << 20;

enum class MessageType { kHello, kTask, kResult, kError };
std::string_view to_string(MessageType t);
std::optional<MessageType> message_type_from_string(std::string_view s);

// evaluate: run the payload's EvalRequest; time: the payload's TimeRequest (eval/
// time_programs.h); warm: build the correctness cases of the payload's WarmRequest (eval/
// evaluate.h) into the worker's reference cache; ping: answer at once (liveness); memory: report
// the device memory in use (leak check); shutdown: answer, then exit 0.
enum class TaskKind { kEvaluate, kTime, kWarm, kPing, kMemory, kShutdown };
std::string_view to_string(TaskKind k);
std::optional<TaskKind> task_kind_from_string(std::string_view s);

struct Message {
    MessageType type = MessageType::kTask;
    int protocol_version = kProtocolVersion;
    uint64_t id = 0;                       // task, result, error
    TaskKind kind = TaskKind::kPing;       // task
    nlohmann::json payload = nlohmann::json::object();  // task
    EvalStatus status = EvalStatus::kPassed;             // result
    nlohmann::json report = nlohmann::json::object();   // result
    bool restart = false;   // result: the worker's device is unusable (sticky CUDA error)
    std::string message;    // error
    DeviceInfo device;      // hello
    int64_t pid = 0;        // hello
};

Message make_hello(const DeviceInfo& device, int64_t pid);
Message make_task(uint64_t id, TaskKind kind, nlohmann::json payload = nlohmann::json::object());
Message make_result(uint64_t id, EvalStatus status, nlohmann::json report, bool restart = false);
Message make_error_message(uint64_t id, std::string message);

// The hello's device travels as device/device_json.h writes it; a task's problem as
// eval/payload_json.h reads it.

// One line of compact JSON ending in '\n' (no raw newline inside: JSON escapes them).
std::string encode(const Message& message);
// Parses one line (without its '\n'). Errors: not JSON, not an object, missing or mistyped
// fields, unknown type/kind/status, and a protocol_version other than kProtocolVersion (the
// message then says both versions).
Expected<Message> decode(std::string_view line);

// Splits a byte stream into lines. A line longer than kMaxMessageBytes makes the reader fail.
class LineReader {
public:
    void append(std::string_view bytes);
    // The next complete line (without '\n'), if any.
    std::optional<std::string> next_line();
    bool overflowed() const { return overflowed_; }
    // Bytes after the last complete line (a partial line left by a dying writer).
    const std::string& pending() const { return buffer_; }

private:
    std::string buffer_;
    size_t scan_from_ = 0;
    bool overflowed_ = false;
};

}  // namespace kforge::eval
