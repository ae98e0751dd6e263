// Fuzz target for the evaluation JSON read back from other processes and from the store: an
// evaluation report (a worker's answer; the evidence an evaluation-cache hit rebuilds its gates
// from), a timing report, a warm-up report and a device description. Any bytes that parse as
// JSON go through every reader: each gives a user error or a value, and a report that reads
// must survive to_json -> report_from_json. An exception escaping a reader is a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "device/device_json.h"
#include "eval/evaluate.h"
#include "eval/time_programs.h"

namespace {

[[noreturn]] void fail(const char* what, std::string_view text) {
    std::fprintf(stderr, "eval_report_fuzz: %s\n---\n%.*s\n---\n", what,
                 static_cast<int>(text.size()), text.data());
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace kforge::eval;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return 0;
    if (auto r = report_from_json(j); r.ok()) {
        const std::string written = to_json(*r, /*with_artefacts=*/true).dump();
        auto again = report_from_json(nlohmann::json::parse(written));
        if (!again.ok()) fail("a written report does not read back", written);
        // (Compared as JSON values: a worker's report is read unordered, so key order may move.)
        if (nlohmann::json::parse(to_json(*again, true).dump()) != nlohmann::json::parse(written))
            fail("the report changed on a round trip", written);
    }
    if (auto gates = gates_from_evidence(text); gates.size() > 1000000) fail("gates", text);
    (void)time_report_from_json(j);
    (void)warm_report_from_json(j);
    (void)device_info_from_json(j);
    return 0;
}
