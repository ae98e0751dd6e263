// Replays the fuzz seed corpus (tests/dsl/fuzz/corpus) through the parser and the printer:
// valid_* files parse and round-trip, bad_* files fail with a located error, and any other file
// (a regression input found by the fuzzer) does one or the other without crashing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "dsl/parser.h"
#include "dsl/printer.h"

namespace kforge::dsl {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(FuzzCorpus, ReplaysThroughParserAndPrinter) {
    fs::path dir = fs::path(KFORGE_TEST_DATA_DIR) / "fuzz" / "corpus";
    int valid = 0, bad = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        std::string name = entry.path().filename().string();
        std::string text = read_file(entry.path());
        auto parsed = parse_program(text, name);
        if (name.rfind("valid_", 0) == 0) {
            ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.error().to_string();
            ++valid;
        } else if (name.rfind("bad_", 0) == 0) {
            ASSERT_FALSE(parsed.ok()) << name << " parsed";
            ++bad;
        }
        if (!parsed.ok()) {
            EXPECT_EQ(parsed.error().where.rfind(name + ":", 0), 0u) << name;
            EXPECT_NE(parsed.error().detail.find('^'), std::string::npos) << name;
            continue;
        }
        std::string printed = print_canonical(*parsed);
        auto again = parse_program(printed, "canonical.kf");
        ASSERT_TRUE(again.ok()) << name << ": " << again.error().to_string() << "\n" << printed;
        EXPECT_EQ(strip_locations(*again), strip_locations(*parsed)) << name;
        EXPECT_EQ(print_canonical(*again), printed) << name;
    }
    EXPECT_GE(valid, 5);
    EXPECT_GE(bad, 5);
}

}  // namespace
}  // namespace kforge::dsl
