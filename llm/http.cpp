#include "llm/http.h"

#include <curl/curl.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <mutex>

namespace kforge::llm {
namespace {

struct BodySink {
    std::string* body;
    size_t max_bytes;  // 0: no limit
    bool truncated = false;
};

// Keeps at most max_bytes; returning less than was given makes curl stop the transfer.
size_t on_body(char* data, size_t size, size_t count, void* user) {
    auto* sink = static_cast<BodySink*>(user);
    const size_t n = size * count;
    if (sink->max_bytes > 0 && sink->body->size() + n > sink->max_bytes) {
        sink->body->append(data, sink->max_bytes - sink->body->size());
        sink->truncated = true;
        return 0;
    }
    sink->body->append(data, n);
    return n;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
    std::string line(data, size * count);
    std::string lower;
    for (char c : line) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string key = "retry-after:";
    if (lower.rfind(key, 0) == 0) {
        const char* v = line.c_str() + key.size();
        char* end = nullptr;
        double s = std::strtod(v, &end);
        if (end != v && s >= 0.0) *static_cast<std::optional<double>*>(user) = s;
        // An HTTP-date Retry-After is ignored: the backoff applies instead.
    }
    return size * count;
}

long to_ms(double s) { return static_cast<long>(s * 1000.0 + 0.5); }

}  // namespace

HttpResponse http_post(const std::string& url, const std::vector<std::string>& headers,
                       const std::string& body, double connect_timeout_s, double timeout_s,
                       size_t max_body_bytes) {
    static std::once_flag init;
    std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    HttpResponse r;
    CURL* curl = curl_easy_init();
    if (!curl) {
        r.transport_error = "curl_easy_init failed";
        return r;
    }
    curl_slist* list = nullptr;
    for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
    curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, to_ms(connect_timeout_s));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, to_ms(timeout_s));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // thread-safe timeouts
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    BodySink sink{&r.body, max_body_bytes};
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &r.retry_after_s);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "kforge/" KFORGE_VERSION);
    const auto start = std::chrono::steady_clock::now();
    CURLcode rc = curl_easy_perform(curl);
    r.latency_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                             start).count();
    r.body_truncated = sink.truncated;
    if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && sink.truncated)) {
        long status = 0;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
        r.status = static_cast<int>(status);
    } else {
        r.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
        r.transport_error = curl_easy_strerror(rc);
        r.status = 0;
    }
    curl_slist_free_all(list);
    curl_easy_cleanup(curl);
    return r;
}

}  // namespace kforge::llm
