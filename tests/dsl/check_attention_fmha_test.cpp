// The checker's rule for `impl cutlass_fmha` (dsl/attention_fmha.h, dsl/check_attention.cpp):
// an attention kernel runs on CUTLASS's Hopper FMHA only where that kernel computes it (sm_90a,
// bf16 / f16 under its policy, one head dim that the tile holds, query rows a multiple of 8, no
// mask, one of 88_hopper_fmha's instantiations, a chain that only stores O);
// everywhere else the error names why.
#include <gtest/gtest.h>

#include <string>

#include "tests/dsl/check_test_util.h"

namespace kforge::dsl {
namespace {

using testing::check_text;
using testing::h200;

struct Spec {
    std::string dtype = "bf16", policy = "bf16";
    int64_t s = 128, e = 64, f = 64;
    std::string mask;  // "" or "masked_fill"
    double scale = 0.125;
};

std::string spec_json(const Spec& c) {
    const std::string l = c.mask.empty() ? "L" : "S";
    std::string j = R"({"name": "a", "dims": {"B": 2, "H": 3, "S": )" + std::to_string(c.s) +
                    R"(, "L": 72, "E": )" + std::to_string(c.e) + R"(, "F": )" +
                    std::to_string(c.f) + R"(},
        "inputs": {"q": {"shape": ["B", "H", "S", "E"], "dtype": ")" + c.dtype + R"("},
                   "k": {"shape": ["B", "H", ")" + l + R"(", "E"], "dtype": ")" + c.dtype + R"("},
                   "v": {"shape": ["B", "H", ")" + l + R"(", "F"], "dtype": ")" + c.dtype + R"("})";
    if (!c.mask.empty()) j += R"(, "m": {"shape": ["S", "S"], "dtype": "bool"})";
    j += R"(},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "scale", "inputs": ["s"], "value": )" + std::to_string(c.scale) +
         R"(, "output": "t"},)";
    j += c.mask.empty() ? R"({"op": "softmax", "inputs": ["t"], "output": "p", "axis": -1},)"
                        : R"({"op": "masked_fill", "inputs": ["t", "m"], "output": "u", "value": "-inf"},
                             {"op": "softmax", "inputs": ["u"], "output": "p", "axis": -1},)";
    j += R"({"op": "matmul", "inputs": ["p", "v"], "output": "o"}],
        "outputs": ["o"], "precision": {"policy": ")" + c.policy + R"("}})";
    return j;
}

std::string program(const Spec& c, const std::string& knobs, const std::string& chain = "") {
    const std::string l = c.mask.empty() ? "L" : "S";
    return "program t for \"a\"\nkernel k0 = attention(q[B,H,S,E], k[B,H," + l + ",E], v[B,H," +
           l + ",F]" + (c.mask.empty() ? "" : ", m[S,S]") + ") scale " +
           std::to_string(c.scale) + " " + knobs + "\n    { " +
           (!chain.empty() ? chain : c.dtype == "f32" ? "" : "cast " + c.dtype + "; ") + "store o[B,H,S,F] }\n";
}

const std::string kFmha = "impl cutlass_fmha fmha_tile 128x64x64 fmha_schedule cooperative";

// The errors' messages, one a line; "" when the program checks.
std::string first_error(const Spec& c, const std::string& knobs, const std::string& chain = "",
                        const DeviceLimits& limits = h200()) {
    CheckResult r = check_text(spec_json(c), program(c, knobs, chain), limits);
    std::string out;
    for (const auto& e : r.errors) out += e.message + "\n";
    return out;
}

TEST(CheckAttentionFmha, AcceptedWhereCutlassComputesIt) {
    EXPECT_EQ(first_error(Spec{}, kFmha), "");
    Spec f16{"f16", "fp16"};
    EXPECT_EQ(first_error(f16, kFmha), "");
    // each instantiation of its head dim; a head dim below the tile's (96 in a 128 tile)
    for (const char* k : {"fmha_tile 128x64x64 fmha_schedule pingpong",
                          "fmha_tile 64x128x64 fmha_schedule tma",
                          "fmha_tile 128x128x128 fmha_schedule cooperative"})
        EXPECT_EQ(first_error(Spec{}, std::string("impl cutlass_fmha ") + k), "") << k;
    Spec d96;
    d96.e = d96.f = 96;
    EXPECT_EQ(first_error(d96, "impl cutlass_fmha fmha_tile 128x128x128 fmha_schedule pingpong"), "");
    // the WMMA kernel stays as it was
    EXPECT_EQ(first_error(Spec{}, "tile 64x64"), "");
}

TEST(CheckAttentionFmha, RefusedWithTheReason) {
    struct Case {
        Spec spec;
        std::string knobs, chain, want;
    };
    Spec mask;
    mask.mask = "masked_fill";
    Spec f32{"f32", "fp32_strict"};
    Spec bf16_inputs_fp16{"bf16", "fp16"};
    Spec two_dims;
    two_dims.f = 48;
    Spec wide;
    wide.e = wide.f = 96;
    Spec rows;
    rows.s = 100;
    const std::vector<Case> cases = {
        {mask, kFmha, "", "takes no mask tensor"},
        {f32, kFmha, "", "bf16 under the bf16 policy or f16 under fp16"},
        {bf16_inputs_fp16, kFmha, "", "policy fp16"},
        {two_dims, kFmha, "", "one head dim for Q, K and V (E=64, F=48)"},
        {wide, kFmha, "", "at most the tile's 64"},
        {rows, kFmha, "", "S=100 must be a multiple of 8"},
        {Spec{}, "impl cutlass_fmha fmha_tile 64x128x64 fmha_schedule cooperative", "",
         "not one 88_hopper_fmha instantiates"},
        {Spec{}, kFmha, "relu; cast bf16; ", "the chain may only cast to the inputs' type"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.want);
        const std::string e = first_error(c.spec, c.knobs, c.chain);
        EXPECT_NE(e.find(c.want), std::string::npos) << e;
        EXPECT_NE(e.find("impl cutlass_fmha: "), std::string::npos) << e;
        EXPECT_NE(e.find("use impl wmma"), std::string::npos) << e;
    }
    // not a Hopper GPU
    DeviceLimits a100 = h200();
    a100.cc_major = 8;
    const std::string e = first_error(Spec{}, kFmha, "", a100);
    EXPECT_NE(e.find("needs an sm_90a target"), std::string::npos) << e;
}

TEST(CheckAttentionFmha, KnobsParseAndPrintOnlyForCutlass) {
    auto parsed = parse_program(program(Spec{}, kFmha), "t.kf");
    ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
    const AttentionConfig& c = parsed->kernels.at(0).attention;
    EXPECT_EQ(c.impl, AttentionImpl::kCutlassFmha);
    EXPECT_EQ(c.fmha_m, 128);
    EXPECT_EQ(c.fmha_n, 64);
    EXPECT_EQ(c.fmha_d, 64);
    EXPECT_FALSE(parse_program(program(Spec{}, "impl cutlass_fmha fmha_tile 96x64x64"), "t.kf").ok());
    EXPECT_FALSE(parse_program(program(Spec{}, "impl flash"), "t.kf").ok());
}

}  // namespace
}  // namespace kforge::dsl
