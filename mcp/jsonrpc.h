// JSON-RPC 2.0 over a byte stream, as MCP's stdio transport frames it: one JSON message per
// line (UTF-8, no embedded newline). This file reads lines under a size limit (an oversized
// line is skipped up to its newline without being held in memory), classifies what a line holds
// (request, notification, response, or an error with its JSON-RPC code) and builds responses.
// Parsing is nlohmann-json's; nothing here knows MCP's methods.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace kforge::mcp {

using json = nlohmann::json;

// The JSON-RPC 2.0 error codes (jsonrpc.org/specification, section 5.1).
enum class RpcCode : int {
    kParseError = -32700,      // not JSON
    kInvalidRequest = -32600,  // JSON, but not a request object (also: a batch, refused)
    kMethodNotFound = -32601,
    kInvalidParams = -32602,
    kInternalError = -32603,
};

// Reads newline-framed messages from a file descriptor.
class LineReader {
public:
    LineReader(int fd, size_t max_line_bytes) : fd_(fd), max_(max_line_bytes) {}
    enum class Kind { kLine, kOversized, kEof };
    struct Line {
        Kind kind = Kind::kEof;
        std::string text;      // kLine: the message without its newline (a trailing \r dropped)
        size_t bytes = 0;      // kOversized: bytes seen before the limit was passed
    };
    // The next line. A line longer than the limit is read on in chunks and dropped up to its
    // newline (never held whole): kOversized. At the end of the stream a last unterminated line
    // is returned as a line, then kEof.
    Line next();

private:
    bool fill();  // reads more into buf_; false at end of stream or on a read error
    int fd_;
    size_t max_;
    std::string buf_;
    size_t pos_ = 0;
    bool eof_ = false;
};

// What one line holds.
struct Incoming {
    enum class Kind { kRequest, kNotification, kResponse, kError } kind = Kind::kError;
    json id;             // request / response / error (null when the id could not be read)
    std::string method;  // request / notification
    json params;         // request / notification: an object, an array, or null when absent
    RpcCode code = RpcCode::kInvalidRequest;  // kError
    std::string message;                      // kError: what is wrong, for the client
};

// Classifies one line: bad JSON is kParseError; an array (a batch; MCP 2025-06-18 removed them)
// or an object that is not a valid JSON-RPC 2.0 request, notification or response is
// kInvalidRequest, with the id when one could be read.
Incoming classify(const std::string& line);

json rpc_result(const json& id, json result);
json rpc_error(const json& id, RpcCode code, const std::string& message, json data = nullptr);

}  // namespace kforge::mcp
