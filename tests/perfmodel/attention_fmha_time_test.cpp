// The time model of attention's `impl cutlass_fmha` (perfmodel/attention_time.cpp): on the bench's
// bf16 d64 s2048 shape it ranks CUTLASS's warp-specialized FMHA ahead of its plain TMA schedule
// and both far ahead of the WMMA kernel (measured 4-5% of the bf16 peak), and none beats the
// tensor-core peak.
#include <gtest/gtest.h>

#include <string>

#include "dsl/parser.h"
#include "perfmodel/sim_model.h"
#include "problem/spec.h"
#include "sol/device.h"

namespace kforge::perfmodel {
namespace {

TEST(AttentionFmhaTime, RanksCutlassFmhaAheadOfWmma) {
    auto p = parse_problem(R"({"name": "a", "dims": {"B": 4, "H": 16, "S": 2048, "L": 2048, "E": 64},
        "inputs": {"q": {"shape": ["B", "H", "S", "E"], "dtype": "bf16"},
                   "k": {"shape": ["B", "H", "L", "E"], "dtype": "bf16"},
                   "v": {"shape": ["B", "H", "L", "E"], "dtype": "bf16"}},
        "graph": [{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                  {"op": "scale", "inputs": ["s"], "value": 0.125, "output": "t"},
                  {"op": "softmax", "inputs": ["t"], "output": "p", "axis": -1},
                  {"op": "matmul", "inputs": ["p", "v"], "output": "o"}],
        "outputs": ["o"], "precision": {"policy": "bf16"}})", "a");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    auto spec = find_device("h200");
    ASSERT_TRUE(spec.ok());
    const Ceilings c = effective_ceilings(*spec, std::nullopt);
    auto time_of = [&](const std::string& knobs) {
        const std::string text = "program g for \"a\"\nkernel k0 = attention(q[B,H,S,E], "
                                 "k[B,H,L,E], v[B,H,L,E]) scale 0.125 " + knobs +
                                 " { cast bf16; store o[B,H,S,E] }\n";
        auto prog = dsl::parse_program(text, "<t>");
        EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
        auto e = model_time(*p, *prog, c, spec->sm_count);
        EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().to_string());
        return e.ok() ? e->time_ns : 0.0;
    };
    const double coop = time_of("impl cutlass_fmha fmha_tile 128x64x64 fmha_schedule cooperative");
    const double tma = time_of("impl cutlass_fmha fmha_tile 64x128x64 fmha_schedule tma");
    const double wmma = time_of("tile 64x64");
    EXPECT_LT(coop, tma);
    EXPECT_LT(tma, wmma);
    EXPECT_GT(wmma, 5 * coop);
    const double flops = 4.0 * 64 * 2048.0 * 2048.0 * 64;
    EXPECT_GT(coop, flops / c.peak(ComputeUnit::kBf16Tensor) * 1e9);
}

}  // namespace
}  // namespace kforge::perfmodel
