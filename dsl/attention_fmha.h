// Where an attention kernel may run as CUTLASS's Hopper FMHA (`impl cutlass_fmha`: the
// forward kernel of CUTLASS's examples/88_hopper_fmha, included from the installed CUTLASS
// package, never copied), stated once for the checker, the planner, the lowering and the time
// model (inline: codegen and perfmodel read it without linking the dsl stage).
//
// The kernel computes O = softmax(scale * Q K^T) V for Q [B, H, S, D], K and V [B, H, L, D] and
// O [B, H, S, D], all of one 16-bit type, row-major and packed, accumulating in f32; it writes
// the rows' log-sum-exp too (kforge gives it the launch workspace). Its own rules
// (FmhaMainloop*::can_implement): D at most the tile's head dim and D and S multiples of 8
// (16-byte TMA rows). Only the tile shapes and schedules 88_hopper_fmha.cu instantiates are
// offered. It has no mask tensor: its only mask is CausalFusion, which computes a structured
// `mask triu` `diagonal 1` (a causal mask, filled with -inf: problem/problem.h TriMask).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/ast.h"
#include "problem/problem.h"

namespace kforge::dsl {

inline std::string_view to_string(AttentionImpl i) {
    return i == AttentionImpl::kCutlassFmha  ? "cutlass_fmha"
           : i == AttentionImpl::kCutlassMea ? "cutlass_mea"
                                             : "wmma";
}
inline std::optional<AttentionImpl> attention_impl_from_string(std::string_view s) {
    for (AttentionImpl i : {AttentionImpl::kWmma, AttentionImpl::kCutlassFmha,
                            AttentionImpl::kCutlassMea})
        if (to_string(i) == s) return i;
    return std::nullopt;
}
inline std::string_view to_string(FmhaSchedule s) {
    return s == FmhaSchedule::kPingpong ? "pingpong" : s == FmhaSchedule::kTma ? "tma" : "cooperative";
}
inline std::optional<FmhaSchedule> fmha_schedule_from_string(std::string_view s) {
    for (FmhaSchedule f : {FmhaSchedule::kCooperative, FmhaSchedule::kPingpong, FmhaSchedule::kTma})
        if (to_string(f) == s) return f;
    return std::nullopt;
}

// One instantiation of 88_hopper_fmha.cu's forward runners (run_fwd_32 .. run_fwd_256, 16-bit).
struct FmhaInstance {
    int m, n, d;
    FmhaSchedule schedule;
};
inline constexpr FmhaInstance kFmhaInstances[] = {
    {64, 128, 32, FmhaSchedule::kTma},           {128, 64, 32, FmhaSchedule::kCooperative},
    {64, 128, 64, FmhaSchedule::kTma},           {128, 64, 64, FmhaSchedule::kCooperative},
    {128, 64, 64, FmhaSchedule::kPingpong},      {128, 128, 128, FmhaSchedule::kCooperative},
    {128, 128, 128, FmhaSchedule::kPingpong},    {128, 64, 256, FmhaSchedule::kCooperative},
};

// What the rule reads of a kernel and its problem.
struct FmhaFacts {
    DType q = DType::kF32, k = DType::kF32, v = DType::kF32;
    std::optional<DType> out;  // the stored tensor's dtype, where known
    PrecisionPolicy policy = PrecisionPolicy::kFp32Strict;
    int64_t s = 0, e = 0, f = 0;
    bool mask = false;
    TriMask tri = TriMask::kNone;  // the kernel's structured mask, its diagonal and fill
    int64_t tri_diagonal = 0;
    double tri_fill = 0.0;
    int64_t l = 0;  // key rows
    double scale = 1.0;
    bool sm90a = true;  // the target is a Hopper GPU (sm_90a)
};

inline std::string fmha_tile_text(int m, int n, int d) {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(d);
}

// Why `c`'s CUTLASS FMHA cannot compute the kernel `f` describes; empty when it can.
inline std::string fmha_misfit(const AttentionConfig& c, const FmhaFacts& f) {
    if (!f.sm90a) return "CUTLASS's Hopper FMHA needs an sm_90a target";
    if (f.mask)
        return "CUTLASS's FMHA takes no mask tensor (its only mask is causal, and a spec's mask is "
               "data whose values a causal kernel would ignore)";
    if (f.tri != TriMask::kNone &&
        (f.tri != TriMask::kTriu || f.tri_diagonal != 1 || !(f.tri_fill < 0 && std::isinf(f.tri_fill))))
        return "CUTLASS's FMHA masks only causally (triu 1, filled with -inf: CausalFusion)";
    if (f.tri != TriMask::kNone && f.s > f.l && f.l % c.fmha_n != 0)
        return "CUTLASS's causal FMHA with more query rows than key rows needs the key rows L=" +
               std::to_string(f.l) + " a multiple of the tile's " + std::to_string(c.fmha_n) +
               " (CausalFusion does not mask the padding keys)";
    const bool bf16 = f.q == DType::kBF16 && f.policy == PrecisionPolicy::kBf16;
    const bool f16 = f.q == DType::kF16 && f.policy == PrecisionPolicy::kFp16;
    if (!bf16 && !f16)
        return "CUTLASS's FMHA reads Q, K, V in place as bf16 under the bf16 policy or f16 under "
               "fp16 (inputs " + std::string(to_string(f.q)) + ", policy " +
               std::string(to_string(f.policy)) + ")";
    if (f.k != f.q || f.v != f.q || (f.out && *f.out != f.q))
        return "CUTLASS's FMHA needs Q, K, V and O of one dtype";
    if (f.e != f.f)
        return "CUTLASS's FMHA has one head dim for Q, K and V (E=" + std::to_string(f.e) +
               ", F=" + std::to_string(f.f) + ")";
    if (f.e % 8 != 0 || f.e > c.fmha_d)
        return "head dim " + std::to_string(f.e) + " must be a multiple of 8 and at most the "
               "tile's " + std::to_string(c.fmha_d);
    if (f.s % 8 != 0)
        return "query rows S=" + std::to_string(f.s) + " must be a multiple of 8 (16-byte TMA rows)";
    if (!(f.scale > 0))
        return "scale must be positive (the kernel scales the row max it subtracts)";
    for (const FmhaInstance& i : kFmhaInstances)
        if (i.m == c.fmha_m && i.n == c.fmha_n && i.d == c.fmha_d && i.schedule == c.fmha_schedule)
            return "";
    std::string offered;
    for (const FmhaInstance& i : kFmhaInstances)
        offered += (offered.empty() ? "" : ", ") + fmha_tile_text(i.m, i.n, i.d) + " " +
                   std::string(to_string(i.schedule));
    return "fmha_tile " + fmha_tile_text(c.fmha_m, c.fmha_n, c.fmha_d) + " " +
           std::string(to_string(c.fmha_schedule)) + " is not one 88_hopper_fmha instantiates (" +
           offered + ")";
}

// The planner's configurations for head dim `e`, best first: the instances of the smallest
// head-dim tile that holds e (cooperative first, as 88_hopper_fmha lists them).
inline std::vector<FmhaInstance> fmha_instances_for(int64_t e) {
    std::vector<FmhaInstance> out;
    for (int d : {32, 64, 128, 256}) {
        if (e > d) continue;
        for (const FmhaInstance& i : kFmhaInstances)
            if (i.d == d && i.schedule == FmhaSchedule::kCooperative) out.push_back(i);
        for (const FmhaInstance& i : kFmhaInstances)
            if (i.d == d && i.schedule != FmhaSchedule::kCooperative) out.push_back(i);
        break;
    }
    return out;
}

}  // namespace kforge::dsl
