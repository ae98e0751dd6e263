// Worker protocol: message construction, line encoding and exception-free decoding.
#include "worker/protocol.h"

#include <array>
#include <utility>

namespace kforge::eval {

namespace {

constexpr std::array<std::pair<MessageType, std::string_view>, 4> kMessageTypes{{
    {MessageType::kHello, "hello"},
    {MessageType::kTask, "task"},
    {MessageType::kResult, "result"},
    {MessageType::kError, "error"},
}};

constexpr std::array<std::pair<TaskKind, std::string_view>, 6> kTaskKinds{{
    {TaskKind::kEvaluate, "evaluate"},
    {TaskKind::kTime, "time"},
    {TaskKind::kWarm, "warm"},
    {TaskKind::kPing, "ping"},
    {TaskKind::kMemory, "memory"},
    {TaskKind::kShutdown, "shutdown"},
}};

template <typename E, size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
    for (const auto& [v, s] : table)
        if (v == e) return s;
    return "?";
}

template <typename E, size_t N>
std::optional<E> value_of(const std::array<std::pair<E, std::string_view>, N>& table,
                          std::string_view s) {
    for (const auto& [v, name] : table)
        if (name == s) return v;
    return std::nullopt;
}

// Field readers that report the field's name instead of throwing.
Expected<std::string> get_string(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string())
        return make_error(key, "missing or not a string");
    return it->get<std::string>();
}

Expected<int64_t> get_int(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer())
        return make_error(key, "missing or not an integer");
    return it->get<int64_t>();
}

Expected<nlohmann::json> get_object(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_object()) return make_error(key, "missing or not an object");
    return *it;
}

// nlohmann's parser recurses per nesting level; garbage such as "[[[[..." must not overflow the
// stack, so the depth is bounded before parsing (strings skipped, escapes honoured).
bool nesting_within(std::string_view text, int max_depth) {
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth) return false;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return true;
}

Status decode_body(const nlohmann::json& j, Message& m) {
    switch (m.type) {
    case MessageType::kHello: {
        auto dev = get_object(j, "device");
        if (!dev) return dev.error();
        auto info = device_info_from_json(*dev);
        if (!info) return info.error();
        m.device = std::move(*info);
        auto pid = get_int(j, "pid");
        if (!pid) return pid.error();
        m.pid = *pid;
        return Ok{};
    }
    case MessageType::kTask: {
        auto kind = get_string(j, "kind");
        if (!kind) return kind.error();
        auto k = task_kind_from_string(*kind);
        if (!k) return make_error("kind", "unknown task kind '" + *kind + "'");
        m.kind = *k;
        auto payload = get_object(j, "payload");
        if (!payload) return payload.error();
        m.payload = std::move(*payload);
        return Ok{};
    }
    case MessageType::kResult: {
        auto status = get_string(j, "status");
        if (!status) return status.error();
        auto s = eval_status_from_string(*status);
        if (!s) return make_error("status", "unknown status '" + *status + "'");
        m.status = *s;
        auto report = get_object(j, "report");
        if (!report) return report.error();
        m.report = std::move(*report);
        auto it = j.find("restart");
        if (it != j.end() && !it->is_boolean()) return make_error("restart", "not a boolean");
        m.restart = it != j.end() && it->get<bool>();
        return Ok{};
    }
    case MessageType::kError: {
        auto text = get_string(j, "message");
        if (!text) return text.error();
        m.message = std::move(*text);
        return Ok{};
    }
    }
    return make_error("type", "unhandled message type");
}

}  // namespace

std::string_view to_string(MessageType t) { return name_of(kMessageTypes, t); }
std::optional<MessageType> message_type_from_string(std::string_view s) {
    return value_of(kMessageTypes, s);
}
std::string_view to_string(TaskKind k) { return name_of(kTaskKinds, k); }
std::optional<TaskKind> task_kind_from_string(std::string_view s) {
    return value_of(kTaskKinds, s);
}

Message make_hello(const DeviceInfo& device, int64_t pid) {
    Message m;
    m.type = MessageType::kHello;
    m.device = device;
    m.pid = pid;
    return m;
}

Message make_task(uint64_t id, TaskKind kind, nlohmann::json payload) {
    Message m;
    m.type = MessageType::kTask;
    m.id = id;
    m.kind = kind;
    m.payload = std::move(payload);
    return m;
}

Message make_result(uint64_t id, EvalStatus status, nlohmann::json report, bool restart) {
    Message m;
    m.type = MessageType::kResult;
    m.id = id;
    m.status = status;
    m.report = std::move(report);
    m.restart = restart;
    return m;
}

Message make_error_message(uint64_t id, std::string message) {
    Message m;
    m.type = MessageType::kError;
    m.id = id;
    m.message = std::move(message);
    return m;
}

std::string encode(const Message& m) {
    nlohmann::ordered_json j;
    j["type"] = to_string(m.type);
    j["protocol_version"] = m.protocol_version;
    switch (m.type) {
    case MessageType::kHello:
        j["device"] = to_json(m.device);
        j["pid"] = m.pid;
        break;
    case MessageType::kTask:
        j["id"] = m.id;
        j["kind"] = to_string(m.kind);
        j["payload"] = m.payload;
        break;
    case MessageType::kResult:
        j["id"] = m.id;
        j["status"] = to_string(m.status);
        j["report"] = m.report;
        j["restart"] = m.restart;
        break;
    case MessageType::kError:
        j["id"] = m.id;
        j["message"] = m.message;
        break;
    }
    // Invalid UTF-8 in a message (e.g. a compiler log) is replaced, never thrown on.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Expected<Message> decode(std::string_view line) {
    if (line.size() > kMaxMessageBytes) return make_error("message", "line too long");
    if (!nesting_within(line, 64)) return make_error("message", "nested too deeply");
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded())
        return make_error("message", "not JSON: " + std::string(line.substr(0, 80)));
    if (!j.is_object()) return make_error("message", "not a JSON object");
    auto version = get_int(j, "protocol_version");
    if (!version) return version.error();
    if (*version != kProtocolVersion)
        return make_error("protocol_version",
                          "protocol version mismatch: peer speaks " + std::to_string(*version) +
                              ", this kforge speaks " + std::to_string(kProtocolVersion) +
                              " (worker and supervisor must be the same kforge build)");
    auto type = get_string(j, "type");
    if (!type) return type.error();
    auto t = message_type_from_string(*type);
    if (!t) return make_error("type", "unknown message type '" + *type + "'");
    Message m;
    m.type = *t;
    if (m.type != MessageType::kHello) {
        auto id = j.find("id");
        if (id == j.end() || !id->is_number_unsigned())
            return make_error("id", "missing or not a non-negative integer");
        m.id = id->get<uint64_t>();
    }
    auto body = decode_body(j, m);
    if (!body) return body.error();
    return m;
}

void LineReader::append(std::string_view bytes) {
    buffer_.append(bytes);
    size_t newline = buffer_.find('\n', scan_from_);
    if (newline == std::string::npos) {
        scan_from_ = buffer_.size();
        if (buffer_.size() > kMaxMessageBytes) overflowed_ = true;
    }
}

std::optional<std::string> LineReader::next_line() {
    size_t newline = buffer_.find('\n');
    if (newline == std::string::npos) {
        scan_from_ = buffer_.size();
        return std::nullopt;
    }
    std::string line = buffer_.substr(0, newline);
    buffer_.erase(0, newline + 1);
    scan_from_ = 0;
    if (line.size() > kMaxMessageBytes) overflowed_ = true;
    return line;
}

}  // namespace kforge::eval
