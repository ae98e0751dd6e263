// The copy kernel kind's knob table (dsl/knobs.h): threads per block and the vector width of
// the output stores (kernels/copy.cuh).
#include <optional>
#include <string>
#include <vector>

#include "dsl/knobs.h"

namespace kforge::dsl {

std::vector<KnobSpec> copy_knobs() {
    return {
        {"threads", KnobValueKind::kInts, {}, {IntDomain{{}, 32, 1024, 32}}, {}, "256",
         "threads per block",
         [](Kernel& k, const KnobValue& v) {
             k.copy.threads = static_cast<int>(v.ints.at(0));
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             return KnobValue{{k.copy.threads}, {}, 0.0};
         }},
        {"vec", KnobValueKind::kInts, {}, {IntDomain{{1, 2, 4, 8}, 0, 0, 1}}, {}, "4",
         "consecutive outputs per thread along the last axis (one vector store; the widest of "
         "8, 4, 2, 1 up to it that divides the last extent)",
         [](Kernel& k, const KnobValue& v) {
             k.copy.vec = static_cast<int>(v.ints.at(0));
             return std::string();
         },
         [](const Kernel& k) -> std::optional<KnobValue> {
             return KnobValue{{k.copy.vec}, {}, 0.0};
         }},
    };
}

}  // namespace kforge::dsl
