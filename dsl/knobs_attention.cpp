// The attention kernel kind's knob table (dsl/knobs.h): the query x key tile and the scale.
#include <optional>
#include <string>
#include <vector>

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
    };
}

}  // namespace kforge::dsl
