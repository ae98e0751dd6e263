// One HTTP POST over libcurl with connect and total timeouts. No retries here (llm/client.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kforge::llm {

struct HttpResponse {
    int status = 0;                     // 0 when no response came
    std::string body;
    std::optional<double> retry_after_s;  // Retry-After in seconds, when sent
    bool timed_out = false;
    bool body_truncated = false;        // the body passed max_body_bytes: reading stopped there
    std::string transport_error;        // curl's message when no response came
    double latency_ms = 0.0;
};

// Reads at most `max_body_bytes` of the reply body (0: no limit): a longer one ends the transfer
// at the cap, with body holding its first max_body_bytes and body_truncated set.
HttpResponse http_post(const std::string& url, const std::vector<std::string>& headers,
                       const std::string& body, double connect_timeout_s, double timeout_s,
                       size_t max_body_bytes = 0);

}  // namespace kforge::llm
