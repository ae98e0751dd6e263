// The attention kernel kind's knob table (dsl/knobs.h): the query x key tile, the math and the
// scale of kforge's WMMA kernel; `impl`, CUTLASS's FMHA tile and schedule (dsl/attention_fmha.h),
// written only for `impl cutlass_fmha`, and CUTLASS's memory-efficient attention tile
// (dsl/attention_mea.h), written only for `impl cutlass_mea` (their programs omit the WMMA tile).
#include <optional>
#include <string>
#include <vector>

#include "dsl/attention_fmha.h"
#include "dsl/knobs.h"

namespace kforge::dsl {

std::vector<KnobSpec> attention_knobs() {
    return {
        {"tile", KnobValueKind::kInts, {"M", "N"},
         {IntDomain{{16, 32, 64, 128}}, IntDomain{{16, 32, 64, 128}}}, {}, "64x64",
         "query rows per CTA (a warp per 16) x key/value rows per shared-memory step",
         [](Kernel& k, const KnobValue& v) {
             k.attention.tile_m = static_cast<int>(v.ints.at(0));
             k.attention.tile_n = static_cast<int>(v.ints.at(1));
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (k.attention.impl != AttentionImpl::kWmma) return std::nullopt;
             return KnobValue{{k.attention.tile_m, k.attention.tile_n}, {}, 0.0};
         }},
        {"math", KnobValueKind::kWord, {}, {}, {"auto", "f32"}, "auto",
         "auto: tensor cores at the policy's precision (bf16/f16, 3xTF32 for fp32_strict, TF32); "
         "f32: FMA on the CUDA cores",
         [](Kernel& k, const KnobValue& v) {
             k.attention.f32_cores = v.word == "f32";
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (!k.attention.f32_cores) return std::nullopt;
             return KnobValue{{}, "f32", 0.0};
         }},
        {"scale", KnobValueKind::kNumber, {}, {}, {}, "the problem's",
         "the scores' factor (the problem's scale op; not a search move)",
         [](Kernel& k, const KnobValue& v) {
             k.attention.scale = v.number;
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (!k.attention.scale) return std::nullopt;
             return KnobValue{{}, {}, *k.attention.scale};
         }},
        {"mask", KnobValueKind::kWord, {}, {}, {"tril", "triu"}, "none",
         "the scores' structured mask, filled where j - i <= diagonal (tril) or >= diagonal "
         "(triu): a causal mask is triu 1 (the problem's masked_fill; not a search move)",
         [](Kernel& k, const KnobValue& v) {
             k.attention.tri_mask = v.word == "tril" ? TriMask::kTril : TriMask::kTriu;
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (k.attention.tri_mask == TriMask::kNone) return std::nullopt;
             return KnobValue{{}, k.attention.tri_mask == TriMask::kTril ? "tril" : "triu", 0.0};
         }},
        {"diagonal", KnobValueKind::kNumber, {}, {}, {}, "0",
         "the structured mask's diagonal offset (an integer)",
         [](Kernel& k, const KnobValue& v) {
             if (v.number != static_cast<double>(static_cast<int64_t>(v.number)))
                 return std::string("diagonal must be an integer");
             k.attention.tri_diagonal = static_cast<int64_t>(v.number);
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (k.attention.tri_mask == TriMask::kNone || k.attention.tri_diagonal == 0)
                 return std::nullopt;
             return KnobValue{{}, {}, static_cast<double>(k.attention.tri_diagonal)};
         }},
        {"impl", KnobValueKind::kWord, {}, {}, {"wmma", "cutlass_fmha", "cutlass_mea"}, "wmma",
         "wmma: kforge's kernel (any head dim, masks); cutlass_fmha: CUTLASS's Hopper FMHA "
         "(sm_90a, bf16/f16, no mask); cutlass_mea: CUTLASS's memory-efficient attention "
         "(sm_80+, f32 as 3xTF32 / bf16 / f16, head dims multiples of 4, additive masks)",
         [](Kernel& k, const KnobValue& v) {
             k.attention.impl = *attention_impl_from_string(v.word);
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (k.attention.impl == AttentionImpl::kWmma) return std::nullopt;
             return KnobValue{{}, std::string(to_string(k.attention.impl)), 0.0};
         }},
        {"fmha_tile", KnobValueKind::kInts, {"M", "N", "D"},
         {IntDomain{{64, 128}}, IntDomain{{64, 128}}, IntDomain{{32, 64, 128, 256}}}, {},
         "128x64x64", "cutlass_fmha: query rows x key rows x head dim of a CTA (88_hopper_fmha's)",
         [](Kernel& k, const KnobValue& v) {
             k.attention.fmha_m = static_cast<int>(v.ints.at(0));
             k.attention.fmha_n = static_cast<int>(v.ints.at(1));
             k.attention.fmha_d = static_cast<int>(v.ints.at(2));
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (k.attention.impl != AttentionImpl::kCutlassFmha) return std::nullopt;
             return KnobValue{{k.attention.fmha_m, k.attention.fmha_n, k.attention.fmha_d}, {}, 0.0};
         }},
        {"mea_tile", KnobValueKind::kInts, {"M", "N"}, {IntDomain{{32, 64}}, IntDomain{{64, 128}}},
         {}, "64x64", "cutlass_mea: query rows x key rows of a CTA (PyTorch's sm_80 tiles)",
         [](Kernel& k, const KnobValue& v) {
             k.attention.mea_m = static_cast<int>(v.ints.at(0));
             k.attention.mea_n = static_cast<int>(v.ints.at(1));
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (k.attention.impl != AttentionImpl::kCutlassMea) return std::nullopt;
             return KnobValue{{k.attention.mea_m, k.attention.mea_n}, {}, 0.0};
         }},
        {"fmha_schedule", KnobValueKind::kWord, {}, {}, {"cooperative", "pingpong", "tma"},
         "cooperative", "cutlass_fmha: warp-specialized cooperative / ping-pong, or plain TMA",
         [](Kernel& k, const KnobValue& v) {
             k.attention.fmha_schedule = *fmha_schedule_from_string(v.word);
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             if (k.attention.impl != AttentionImpl::kCutlassFmha) return std::nullopt;
             return KnobValue{{}, std::string(to_string(k.attention.fmha_schedule)), 0.0};
         }},
    };
}

}  // namespace kforge::dsl
