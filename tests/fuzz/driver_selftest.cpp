// A target that misbehaves on request, to check that the mutation driver tells each kind of
// finding apart: "crash" aborts, "hang" spins past the CPU limit, "oom" allocates past the
// memory limit, anything else returns.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    if (in == "crash") std::abort();
    if (in == "hang") {
        volatile uint64_t spin = 0;
        for (;;) spin = spin + 1;
    }
    if (in == "oom") {
        static std::vector<std::vector<char>> held;
        for (;;) held.emplace_back(64u << 20, 'x');
    }
    return 0;
}
