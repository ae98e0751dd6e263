// The checker's rule for `impl cutlass_mea` (dsl/attention_mea.h, dsl/check_attention.cpp): an
// attention kernel runs on CUTLASS's memory-efficient attention where that kernel computes it
// (sm_80+, Q, K, V, O of one dtype among f32 / bf16 / f16, head dims multiples of 4, one of
// PyTorch's sm_80 tiles holding them, an additive mask of the inputs' dtype (or a bool one
// filled with -inf) that folds over the batch dims, a causal mask triu d >= 1 filled with -inf, a chain that only stores O);
// everywhere else the error names why.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "dsl/attention_mea.h"
#include "tests/dsl/check_test_util.h"

namespace kforge::dsl {
namespace {

using testing::check_text;
using testing::h200;

struct Spec {
    std::string dtype = "f32", policy = "fp32_strict";
    int64_t s = 128, e = 64, f = 64, l = 72;
    std::string mask;                    // "", "add" (mask of mask_dtype) or "bool"
    std::string mask_dtype = "f32";
    std::string mask_shape = R"("S", "L")";
    std::string causal;                  // "" or a masked_fill's "mask"/"diagonal" attributes
    std::string fill = "\"-inf\"";         // a bool mask's masked_fill value
    double scale = 0.125;
};

std::string spec_json(const Spec& c) {
    std::string j = R"({"name": "a", "dims": {"B": 2, "H": 3, "S": )" + std::to_string(c.s) +
                    R"(, "L": )" + std::to_string(c.l) + R"(, "E": )" + std::to_string(c.e) +
                    R"(, "F": )" + std::to_string(c.f) + R"(},
        "inputs": {"q": {"shape": ["B", "H", "S", "E"], "dtype": ")" + c.dtype + R"("},
                   "k": {"shape": ["B", "H", "L", "E"], "dtype": ")" + c.dtype + R"("},
                   "v": {"shape": ["B", "H", "L", "F"], "dtype": ")" + c.dtype + R"("})";
    if (c.mask == "add")
        j += R"(, "m": {"shape": [)" + c.mask_shape + R"(], "dtype": ")" + c.mask_dtype + R"("})";
    if (c.mask == "bool") j += R"(, "m": {"shape": [)" + c.mask_shape + R"(], "dtype": "bool"})";
    j += R"(},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "scale", "inputs": ["s"], "value": )" + std::to_string(c.scale) +
         R"(, "output": "t"},)";
    if (c.mask == "add") j += R"({"op": "add", "inputs": ["t", "m"], "output": "u"},)";
    else if (c.mask == "bool")
        j += R"({"op": "masked_fill", "inputs": ["t", "m"], "output": "u", "value": )" + c.fill +
             "},";
    else if (!c.causal.empty())
        j += R"({"op": "masked_fill", "inputs": ["t"], "output": "u", "value": "-inf", )" +
             c.causal + "},";
    const bool masked = !c.mask.empty() || !c.causal.empty();
    j += std::string(R"({"op": "softmax", "inputs": [")") + (masked ? "u" : "t") +
         R"("], "output": "p", "axis": -1},
                  {"op": "matmul", "inputs": ["p", "v"], "output": "o"}],
        "outputs": ["o"], "precision": {"policy": ")" + c.policy + R"("}})";
    return j;
}

std::string mask_dims(const Spec& c) {
    std::string d = c.mask_shape;
    d.erase(std::remove(d.begin(), d.end(), '"'), d.end());
    d.erase(std::remove(d.begin(), d.end(), ' '), d.end());
    return d;
}

std::string program(const Spec& c, const std::string& knobs, const std::string& chain = "") {
    return "program t for \"a\"\nkernel k0 = attention(q[B,H,S,E], k[B,H,L,E], v[B,H,L,F]" +
           (c.mask.empty() ? std::string() : ", m[" + mask_dims(c) + "]") + ") scale " +
           std::to_string(c.scale) + " " + knobs + "\n    { " +
           (!chain.empty() ? chain : c.dtype == "f32" ? "" : "cast " + c.dtype + "; ") +
           "store o[B,H,S,F] }\n";
}

// The errors' messages, one a line; "" when the program checks.
std::string first_error(const Spec& c, const std::string& knobs, const std::string& chain = "",
                        const DeviceLimits& limits = h200()) {
    CheckResult r = check_text(spec_json(c), program(c, knobs, chain), limits);
    std::string out;
    for (const auto& e : r.errors) out += e.message + "\n";
    return out;
}

const std::string kMea = "impl cutlass_mea mea_tile 32x128";

TEST(CheckAttentionMea, AcceptedWhereCutlassComputesIt) {
    EXPECT_EQ(first_error(Spec{}, kMea), "");                          // f32 (3xTF32)
    EXPECT_EQ(first_error(Spec{}, "impl cutlass_mea mea_tile 64x64"), "");
    for (const char* t : {"bf16", "f16"}) {
        Spec s{t, t == std::string("bf16") ? "bf16" : "fp16"};
        EXPECT_EQ(first_error(s, "impl cutlass_mea mea_tile 64x128"), "") << t;
    }
    Spec wide;  // any head dim on 32x128 (the kernel loops over the value columns)
    wide.e = 1024, wide.f = 1000;
    EXPECT_EQ(first_error(wide, kMea), "");
    Spec add;  // an additive mask broadcast over the batch dims, over all of them, or none
    add.mask = "add";
    EXPECT_EQ(first_error(add, kMea), "");
    add.mask_shape = R"("B", "H", "S", "L")";
    EXPECT_EQ(first_error(add, kMea), "");
    add.mask_shape = R"(1, 1, "S", "L")";
    EXPECT_EQ(first_error(add, kMea), "");
    Spec bool_mask;  // masked_fill -inf: converted to the additive form (adding -inf fills)
    bool_mask.mask = "bool";
    EXPECT_EQ(first_error(bool_mask, kMea), "");
    Spec causal;  // triu 1 (and any diagonal past it) filled with -inf
    causal.s = causal.l = 128;
    causal.causal = R"("mask": "triu", "diagonal": 1)";
    EXPECT_EQ(first_error(causal, kMea + " mask triu diagonal 1"), "");
    EXPECT_EQ(first_error(Spec{}, "impl cutlass_mea mea_tile 32x128", "", [] {
                  DeviceLimits a100 = h200();
                  a100.cc_major = 8;
                  return a100;
              }()),
              "");
}

TEST(CheckAttentionMea, RefusedWithTheReason) {
    struct Case {
        Spec spec;
        std::string knobs, chain, want;
    };
    Spec bool_finite;  // filled with a number: replacing the score is not adding to it
    bool_finite.mask = "bool";
    bool_finite.fill = "-10000.0";
    Spec bf16_mask;  // f32 inputs, a bf16 mask (the kernel reads its bias as the inputs' type)
    bf16_mask.mask = "add";
    bf16_mask.mask_dtype = "bf16";
    Spec half_folded;
    half_folded.mask = "add";
    half_folded.mask_shape = R"("B", 1, "S", "L")";
    Spec key_broadcast;
    key_broadcast.mask = "add";
    key_broadcast.mask_shape = R"("S", 1)";
    Spec odd;
    odd.e = 62;
    Spec wide;
    wide.e = wide.f = 96;
    Spec tril;
    tril.s = tril.l = 128;
    tril.causal = R"("mask": "tril", "diagonal": -1)";
    const std::vector<Case> cases = {
        {bool_finite, kMea, "", "a bool mask filled with -10000.000000 is not an addition"},
        {bf16_mask, kMea, "", "mask bf16, inputs f32"},
        {half_folded, kMea, "", "present along some batch dims and broadcast along others"},
        {key_broadcast, kMea, "", "broadcast along the keys"},
        {odd, kMea, "", "must be multiples of 4"},
        {wide, "impl cutlass_mea mea_tile 64x64", "", "holds head dims up to 64"},
        {Spec{}, "impl cutlass_mea mea_tile 64x128", "", "a 16-bit tile"},
        {Spec{}, "impl cutlass_mea mea_tile 32x64", "", "not one PyTorch's sm_80 kernels"},
        {tril, kMea + " mask tril diagonal -1", "", "masks only causally"},
        {Spec{}, kMea, "relu; ", "the chain may only cast to the inputs' type"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.want);
        const std::string e = first_error(c.spec, c.knobs, c.chain);
        EXPECT_NE(e.find(c.want), std::string::npos) << e;
        EXPECT_NE(e.find("impl cutlass_mea: "), std::string::npos) << e;
        EXPECT_NE(e.find("use impl wmma"), std::string::npos) << e;
    }
    DeviceLimits turing = h200();
    turing.cc_major = 7;
    const std::string e = first_error(Spec{}, kMea, "", turing);
    EXPECT_NE(e.find("needs sm_80 or later"), std::string::npos) << e;
}

TEST(CheckAttentionMea, TilesForHeadDims) {
    auto text = [](const std::vector<MeaInstance>& v) {
        std::string s;
        for (const MeaInstance& i : v) s += mea_tile_text(i.m, i.n) + " ";
        return s;
    };
    EXPECT_EQ(text(mea_instances_for(DType::kBF16, 64, 64)), "64x64 64x128 32x128 ");
    EXPECT_EQ(text(mea_instances_for(DType::kF32, 64, 64)), "64x64 32x128 ");
    EXPECT_EQ(text(mea_instances_for(DType::kF16, 128, 96)), "64x128 32x128 ");
    EXPECT_EQ(text(mea_instances_for(DType::kF32, 1024, 1024)), "32x128 ");
    EXPECT_EQ(mea_max_k(128, 128, 64), 128);
    EXPECT_EQ(mea_max_k(128, 1024, 1024), kMeaUnboundedK);
    MeaFacts f;
    f.q = DType::kBF16, f.e = 64, f.f = 64, f.l = 72;
    EXPECT_TRUE(mea_aligned(f));
    f.e = 60;  // 120 bytes a row: 4-element accesses
    EXPECT_FALSE(mea_aligned(f));
}

TEST(CheckAttentionMea, KnobsParseAndPrintOnlyForMea) {
    auto parsed = parse_program(program(Spec{}, "impl cutlass_mea mea_tile 64x64"), "t.kf");
    ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
    const AttentionConfig& c = parsed->kernels.at(0).attention;
    EXPECT_EQ(c.impl, AttentionImpl::kCutlassMea);
    EXPECT_EQ(c.mea_m, 64);
    EXPECT_EQ(c.mea_n, 64);
    EXPECT_FALSE(parse_program(program(Spec{}, "impl cutlass_mea mea_tile 48x64"), "t.kf").ok());
}

}  // namespace
}  // namespace kforge::dsl
