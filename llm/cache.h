// The reply cache: replies stored on disk as one JSON file per request, keyed by the SHA-256 of
// (provider, model, messages, temperature), so a run can be replayed without the network.
#pragma once

#include <cstddef>
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
    // A stored file larger than max_bytes (0: no limit) is not read: a miss.
    explicit ReplyCache(std::string dir, size_t max_bytes = 0)
        : dir_(std::move(dir)), max_bytes_(max_bytes) {}
    const std::string& dir() const { return dir_; }

    // The stored reply, or nullopt when absent or unreadable (a damaged file is a miss).
    std::optional<ChatReply> find(const std::string& hash) const;
    // Writes atomically (temp file + rename); creates the directory.
    Status put(const std::string& hash, const ChatReply& reply) const;

private:
    std::string dir_;
    size_t max_bytes_ = 0;
};

}  // namespace kforge::llm
