// Fenced programs out of LLM replies: tags, bare fences, rationales, prose, truncation.
#include <gtest/gtest.h>

#include "llm/extract.h"

namespace kforge::llm {
namespace {

TEST(LlmExtract, TaggedAndBareFencesWithRationales) {
    const char* reply =
        "Here are two.\n\nRationale: bigger tile\n```kforge\nprogram a for \"p\"\nkernel k0\n```\n"
        "**Rationale:** fewer stages\n```kf\nprogram b for \"p\"\n```\n"
        "```\nprogram c for \"p\"\n```\nRationale: after the block\n"
        "```python\nprint('program x')\n```\n```\nno program line here\n```\n";
    auto got = extract_programs(reply);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].text, "program a for \"p\"\nkernel k0\n");
    EXPECT_EQ(got[0].rationale, "bigger tile");
    EXPECT_EQ(got[1].rationale, "fewer stages");
    EXPECT_EQ(got[2].text, "program c for \"p\"\n");
    EXPECT_EQ(got[2].rationale, "after the block");
    EXPECT_EQ(got[2].index, 3);
}

TEST(LlmExtract, ProseGivesNothing) {
    EXPECT_TRUE(extract_programs("I would use a larger tile and more stages.").empty());
    EXPECT_TRUE(extract_programs("").empty());
    EXPECT_TRUE(extract_programs("```kforge\n```\n").empty());
}

TEST(LlmExtract, UnterminatedFenceRunsToTheEnd) {
    auto got = extract_programs("```kforge\r\nprogram a for \"p\"\r\nkernel k0 = gemm(");
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].text, "program a for \"p\"\nkernel k0 = gemm(\n");
}

}  // namespace
}  // namespace kforge::llm
