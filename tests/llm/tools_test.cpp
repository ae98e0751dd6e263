// llm/tools.h without the binary or a server: the prompts previewed for a suite problem with its
// program as the best so far, and the user errors of a missing spec or an unknown device.
#include <gtest/gtest.h>

#include "llm/prompt.h"
#include "llm/tools.h"

namespace kforge::llm {
namespace {

TEST(LlmTools, PreviewOfASuiteProblem) {
    const std::string p = std::string(KFORGE_SOURCE_DIR) + "/problems/linear_bias_gelu_tanh_bf16";
    auto prompts = preview_prompts({p + ".json", p + ".kf", "h200", 3});
    ASSERT_TRUE(prompts) << prompts.error().to_string();
    EXPECT_EQ(prompts->system, system_prompt());
    EXPECT_NE(prompts->user.find("# Problem linear_bias_gelu_tanh_bf16"), std::string::npos);
    EXPECT_NE(prompts->user.find("fused bound T_sol"), std::string::npos);
    EXPECT_NE(prompts->user.find("tile 128x256x64"), std::string::npos);
    EXPECT_NE(prompts->user.find("Write 3 new programs"), std::string::npos);
}

TEST(LlmTools, PreviewErrorsAreTheUsers) {
    auto missing = preview_prompts({"/nonexistent.json", "", "h200", 4});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().to_string(), "/nonexistent.json: cannot read the file");
    const std::string spec = std::string(KFORGE_SOURCE_DIR) + "/problems/layer_norm_f32.json";
    auto device = preview_prompts({spec, "", "no_such_gpu", 4});
    ASSERT_FALSE(device);
    EXPECT_NE(device.error().to_string().find("no_such_gpu"), std::string::npos);
}

}  // namespace
}  // namespace kforge::llm
