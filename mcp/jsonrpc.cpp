#include "mcp/jsonrpc.h"

#include <unistd.h>

#include <cerrno>

namespace kforge::mcp {

bool LineReader::fill() {
    if (eof_) return false;
    if (pos_ > 0) {  // keep only what is not consumed yet
        buf_.erase(0, pos_);
        pos_ = 0;
    }
    char chunk[65536];
    for (;;) {
        ssize_t n = ::read(fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            eof_ = true;
            return false;
        }
        buf_.append(chunk, static_cast<size_t>(n));
        return true;
    }
}

LineReader::Line LineReader::next() {
    size_t scanned = 0;  // bytes after pos_ known to hold no newline
    for (;;) {
        size_t nl = buf_.find('\n', pos_ + scanned);
        if (nl != std::string::npos) {
            const size_t length = nl - pos_;
            if (length > max_) {
                pos_ = nl + 1;
                return {Kind::kOversized, "", length};
            }
            Line l{Kind::kLine, buf_.substr(pos_, length), 0};
            if (!l.text.empty() && l.text.back() == '\r') l.text.pop_back();
            pos_ = nl + 1;
            return l;
        }
        scanned = buf_.size() - pos_;
        if (scanned > max_) {
            // Over the limit: drop it up to its newline, reading on in chunks.
            size_t seen = 0;
            for (;;) {
                size_t end = buf_.find('\n', pos_);
                if (end != std::string::npos) {
                    seen += end - pos_;
                    pos_ = end + 1;
                    return {Kind::kOversized, "", seen};
                }
                seen += buf_.size() - pos_;
                buf_.clear();
                pos_ = 0;
                if (!fill()) return {Kind::kOversized, "", seen};
            }
        }
        if (!fill()) {  // fill() moves the unconsumed bytes to the front (pos_ = 0)
            if (pos_ < buf_.size()) {
                Line l{Kind::kLine, buf_.substr(pos_), 0};
                pos_ = buf_.size();
                return l;
            }
            return {Kind::kEof, "", 0};
        }
    }
}

namespace {

bool valid_id(const json& id) { return id.is_string() || id.is_number_integer() || id.is_null(); }

Incoming error(const json& id, RpcCode code, std::string message) {
    Incoming in;
    in.kind = Incoming::Kind::kError;
    in.id = id;
    in.code = code;
    in.message = std::move(message);
    return in;
}

}  // namespace

Incoming classify(const std::string& line) {
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return error(nullptr, RpcCode::kParseError, "parse error: not valid JSON");
    if (j.is_array())
        return error(nullptr, RpcCode::kInvalidRequest,
                     j.empty() ? "invalid request: an empty batch"
                               : "invalid request: batches are not supported (MCP 2025-06-18 "
                                 "removed JSON-RPC batching); send one message per line");
    if (!j.is_object())
        return error(nullptr, RpcCode::kInvalidRequest, "invalid request: expected a JSON object");
    json id = nullptr;
    const bool has_id = j.contains("id");
    if (has_id) {
        if (!valid_id(j["id"]))
            return error(nullptr, RpcCode::kInvalidRequest,
                         "invalid request: \"id\" must be a string or an integer");
        id = j["id"];
    }
    if (!j.contains("jsonrpc") || j["jsonrpc"] != "2.0")
        return error(id, RpcCode::kInvalidRequest, "invalid request: \"jsonrpc\" must be \"2.0\"");
    if (!j.contains("method")) {
        if (has_id && (j.contains("result") || j.contains("error"))) {
            Incoming r;
            r.kind = Incoming::Kind::kResponse;
            r.id = id;
            return r;
        }
        return error(id, RpcCode::kInvalidRequest, "invalid request: \"method\" is missing");
    }
    if (!j["method"].is_string())
        return error(id, RpcCode::kInvalidRequest, "invalid request: \"method\" must be a string");
    if (has_id && id.is_null())
        return error(nullptr, RpcCode::kInvalidRequest,
                     "invalid request: \"id\" must not be null (MCP)");
    Incoming in;
    in.kind = has_id ? Incoming::Kind::kRequest : Incoming::Kind::kNotification;
    in.id = id;
    in.method = j["method"].get<std::string>();
    if (j.contains("params")) {
        if (!j["params"].is_object() && !j["params"].is_array())
            return error(id, RpcCode::kInvalidRequest,
                         "invalid request: \"params\" must be an object or an array");
        in.params = j["params"];
    }
    return in;
}

json rpc_result(const json& id, json result) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json rpc_error(const json& id, RpcCode code, const std::string& message, json data) {
    json e{{"code", static_cast<int>(code)}, {"message", message}};
    if (!data.is_null()) e["data"] = std::move(data);
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(e)}};
}

}  // namespace kforge::mcp
