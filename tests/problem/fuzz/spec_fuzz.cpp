// libFuzzer target: any byte string through parse_problem. A valid problem must also survive
// problem_to_json -> parse_problem, rebinding every dim to 2, and (when small) interpretation
// on generated inputs. Crashes, hangs, sanitizer reports or a failed round trip are findings.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "problem/inputs.h"
#include "problem/interpret.h"
#include "problem/spec.h"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

void exercise(const kforge::Problem& p) {
    int64_t total = 0;
    for (const kforge::Tensor& t : p.tensors) total += t.numel();
    if (total > 4096) return;
    kforge::TensorValues inputs;
    for (const kforge::Tensor* t : p.graph_inputs()) {
        inputs[t->name] = kforge::generate(*t, kforge::Distribution::kNormal, 1);
    }
    auto out = kforge::interpret(p, inputs, 4096);
    check(out.ok());
    check(out->size() == p.outputs.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto p = kforge::parse_problem(text, "fuzz");
    if (!p.ok()) {
        check(!p.error().message.empty());
        return 0;
    }
    auto again = kforge::parse_problem(kforge::problem_to_json(*p).dump(), "round trip");
    check(again.ok());
    check(again->tensors.size() == p->tensors.size() && again->ops.size() == p->ops.size());
    exercise(*p);
    std::map<std::string, int64_t> small;
    for (const auto& [name, value] : p->dims) {
        if (p->derived_dims.count(name) == 0) small[name] = 2;
    }
    auto rebound = kforge::rebind_dims(*p, small);
    if (rebound.ok()) exercise(*rebound);
    return 0;
}
