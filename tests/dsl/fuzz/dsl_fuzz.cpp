// libFuzzer target for the kernel-language front end: any input either parses, and then
// prints canonically and round-trips (parse(print(p)) == p, print is a fixed point), or gives
// a located user error with a caret. Anything else (crash, hang, sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "dsl/parser.h"
#include "dsl/printer.h"

namespace {

[[noreturn]] void fail(const char* what, std::string_view text) {
    std::fprintf(stderr, "dsl_fuzz: %s\n---\n%.*s\n---\n", what, static_cast<int>(text.size()),
                 text.data());
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace kforge::dsl;
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto parsed = parse_program(text, "fuzz.kf");
    if (!parsed.ok()) {
        const kforge::Error& e = parsed.error();
        if (e.where.rfind("fuzz.kf:", 0) != 0 || e.message.empty()) fail("error without location", text);
        if (e.detail.find('^') == std::string::npos) fail("error without caret", text);
        return 0;
    }
    std::string printed = print_canonical(*parsed);
    auto again = parse_program(printed, "canonical.kf");
    if (!again.ok()) fail("canonical text does not parse", printed);
    if (!(strip_locations(*again) == strip_locations(*parsed))) fail("round trip changed the program", printed);
    if (print_canonical(*again) != printed) fail("canonical text is not a fixed point", printed);
    return 0;
}
