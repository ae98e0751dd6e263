// The reply cache: replies stored on disk as one JSON file per request, keyed by the SHA-256 of
// (provider, model, messages, temperature), so a run can be replayed without the network.
#pragma once

#include <optional>
#include <string>

#include "common/expected.h"
#include "llm/client.h"
#include "llm/config.h"

namespace kforge::llm {

// The request hash: sha256 hex of the canonical JSON of provider, model, messages, temperature.
std::string request_hash(const LlmConfig& config, const ChatRequest& request);

class ReplyCache {
public:
    explicit ReplyCache(std::string dir) : dir_(std::move(dir)) {}
    const std::string& dir() const { return dir_; }

    // The stored reply, or nullopt when absent or unreadable (a damaged file is a miss).
    std::optional<ChatReply> find(const std::string& hash) const;
    // Writes atomically (temp file + rename); creates the directory.
    Status put(const std::string& hash, const ChatReply& reply) const;

private:
    std::string dir_;
};

}  // namespace kforge::llm
