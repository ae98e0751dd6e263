// Fuzz target for the launch plan read back from disk (plan.json in an output folder, the plan in
// a worker's evaluate payload): any bytes that parse as JSON go through launch_plan_from_json,
// which must either give a user error that names a place or a plan that survives
// to_json -> launch_plan_from_json unchanged. An exception escaping the reader is a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "codegen/launch_plan.h"

namespace {

[[noreturn]] void fail(const char* what, std::string_view text) {
    std::fprintf(stderr, "launch_plan_fuzz: %s\n---\n%.*s\n---\n", what,
                 static_cast<int>(text.size()), text.data());
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace kforge::codegen;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return 0;
    const auto plan = launch_plan_from_json(j);
    if (!plan.ok()) {
        if (plan.error().message.empty()) fail("an error without a message", text);
        return 0;
    }
    const std::string written = to_json(*plan).dump();
    const auto again = launch_plan_from_json(nlohmann::json::parse(written));
    if (!again.ok()) fail("a written plan does not read back", written);
    if (to_json(*again).dump() != written) fail("the plan changed on a round trip", written);
    return 0;
}
