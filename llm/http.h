// One HTTP POST over libcurl with connect and total timeouts. No retries here (llm/client.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kforge::llm {

struct HttpResponse {
    int status = 0;                     // 0 when no response came
    std::string body;
    std::optional<double> retry_after_s;  // Retry-After in seconds, when sent
    bool timed_out = false;
    std::string transport_error;        // curl's message when no response came
    double latency_ms = 0.0;
};

HttpResponse http_post(const std::string& url, const std::vector<std::string>& headers,
                       const std::string& body, double connect_timeout_s, double timeout_s);

}  // namespace kforge::llm
