// Legality of a gemm kernel on the target device: schedule vs architecture, math mode vs
// precision policy, tile shape, accumulator registers, cluster, pipeline stages vs shared memory,
// split-K, and TMA alignment. Divisibility of M and N by the tile is a warning (CUTLASS
// predicates the edge tiles).
#include <algorithm>
#include <cctype>

#include "dsl/check_internal.h"
#include "dsl/conv_direct.h"
#include "dsl/math_policy.h"
#include "sol/target.h"

namespace kforge::dsl {
namespace {

bool is_tma(Schedule s) { return s != Schedule::kMultistage && s != Schedule::kDirect; }

std::string kib(int64_t bytes) { return std::to_string((bytes + 1023) / 1024) + " KiB"; }

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

int64_t extent(const Problem& problem, const std::string& dim) {
    auto it = problem.dims.find(dim);
    if (it != problem.dims.end()) return it->second;
    return !dim.empty() && std::all_of(dim.begin(), dim.end(), ::isdigit) ? std::stoll(dim) : 0;
}

std::string or_list(const std::vector<MathMode>& modes) {
    std::string s;
    for (size_t i = 0; i < modes.size(); ++i)
        s += (i == 0 ? "" : i + 1 == modes.size() ? " or " : ", ") + std::string(to_string(modes[i]));
    return s;
}

// Consumer threads that hold the accumulator tile.
int consumer_threads(const GemmConfig& c) {
    switch (c.schedule) {
    case Schedule::kCooperative:
    case Schedule::kStreamK: return 256;  // two consumer warpgroups share one tile
    case Schedule::kTmaWarpSpecialized:
    case Schedule::kPingpong: return 128;  // one consumer warpgroup holds a whole tile
    case Schedule::kMultistage:
    case Schedule::kDirect: break;
    }
    // CUTLASS 2.x: 64x64 warp tiles, 4 to 8 warps per CTA.
    return std::clamp(c.tile_m * c.tile_n / 4096, 4, 8) * 32;
}

void check_math(const Kernel& kn, DType a, DType b, const Problem& problem, Reporter& rep) {
    const GemmConfig& c = kn.gemm;
    const SourceLoc at = knob_loc(kn, "math");
    if (a != b) {
        rep.error(kn.loc, "gemm operands differ in dtype (" + std::string(to_string(a)) + " and " +
                              std::string(to_string(b)) + "); both must have one dtype");
        return;
    }
    const std::string policy(to_string(problem.policy));
    if (a == DType::kBF16 || a == DType::kF16) {
        const MathMode want = resolve_math(problem.policy, a).math;  // what auto means
        if (!resolve_math(problem.policy, a, c.math).ok()) {
            rep.error(at, "math " + std::string(to_string(c.math)) + " on " +
                              std::string(to_string(a)) + " operands; use math " +
                              std::string(to_string(want)) + " (or auto)");
        }
    } else if (a == DType::kF32) {
        auto allowed = allowed_f32_math(problem.policy);
        if (c.math != MathMode::kAuto &&
            std::find(allowed.begin(), allowed.end(), c.math) == allowed.end()) {
            rep.error(at, "math " + std::string(to_string(c.math)) + " on f32 operands is not allowed "
                          "under precision policy " + policy + "; " + policy + " allows " +
                          or_list(allowed));
        }
    } else {
        rep.error(kn.loc, "gemm operands are " + std::string(to_string(a)) +
                              "; kforge's gemm takes f32, bf16 or f16");
    }
    if (c.acc == DType::kF16 && !(problem.policy == PrecisionPolicy::kFp16 && a == DType::kF16)) {
        rep.error(knob_loc(kn, "acc"), "acc f16 needs f16 operands and precision policy fp16 (the "
                                       "problem's is " + policy + "); use acc f32");
    }
    if (c.math == MathMode::kF32Simt && is_tma(c.schedule)) {
        rep.error(at, "math f32_simt runs on CUDA cores; the Hopper schedule " +
                          std::string(to_string(c.schedule)) + " is tensor-core only: use schedule "
                          "multistage, or math tf32x3");
    }
}

// "128x128x64", as the program writes the tile.
std::string tile_text(const GemmConfig& c) {
    return std::to_string(c.tile_m) + "x" + std::to_string(c.tile_n) + "x" +
           std::to_string(c.tile_k);
}

void check_tile(const Kernel& kn, int bytes, Reporter& rep) {
    const GemmConfig& c = kn.gemm;
    const SourceLoc at = knob_loc(kn, "tile");
    const std::string tile = tile_text(c);
    if (c.tile_m != 64 && c.tile_m != 128 && c.tile_m != 256)
        rep.error(at, "tile " + tile + ": tile M must be 64, 128 or 256");
    if (c.tile_n < 16 || c.tile_n > 256 || c.tile_n % 16 != 0)
        rep.error(at, "tile " + tile + ": tile N must be a multiple of 16 from 16 to 256");
    if (c.tile_k != 16 && c.tile_k != 32 && c.tile_k != 64 && c.tile_k != 128)
        rep.error(at, "tile " + tile + ": tile K must be 16, 32, 64 or 128");
    const bool two_warpgroups =
        c.schedule == Schedule::kCooperative || c.schedule == Schedule::kStreamK;
    if (two_warpgroups && c.tile_m < 128) {
        rep.error(at, "tile " + tile + ": schedule " + std::string(to_string(c.schedule)) +
                          " splits tile M over two consumer warpgroups of 64 rows, so tile M "
                          "must be 128 or 256; use tma_ws or pingpong for tile M 64");
    }
    const int k_multiple = is_tma(c.schedule) ? 64 : 32;
    if (c.tile_k * bytes % k_multiple != 0) {
        std::string legal;
        for (int k : {16, 32, 64, 128})
            if (k * bytes % k_multiple == 0) legal += (legal.empty() ? "" : ", ") + std::to_string(k);
        rep.error(at, "tile " + tile + ": tile K " + std::to_string(c.tile_k) + " x " +
                          std::to_string(bytes) + " bytes = " + std::to_string(c.tile_k * bytes) +
                          " bytes; " + (is_tma(c.schedule) ? "TMA schedules" : "multistage") +
                          " need a multiple of " + std::to_string(k_multiple) + " bytes: tile K in {" +
                          legal + "}");
    }
    // multistage's tensor-core mainloop keeps a K-contiguous operand tile in CUTLASS's crosswise
    // shared-memory layout, whose row (tile K elements) must fit one 128-byte line (a static
    // assertion in cutlass/layout/tensor_op_multiplicand_sm75.h otherwise: f32 tile K 64 failed
    // to compile after passing this checker)
    if (!is_tma(c.schedule) && c.math != MathMode::kF32Simt && c.tile_k * bytes > 128) {
        rep.error(at, "tile " + tile + ": tile K " + std::to_string(c.tile_k) + " x " +
                          std::to_string(bytes) + " bytes = " + std::to_string(c.tile_k * bytes) +
                          " bytes; multistage's tensor-core shared-memory rows hold at most 128: "
                          "tile K <= " + std::to_string(128 / bytes));
    }
    const int threads = consumer_threads(c);
    const int acc_regs = c.tile_m * c.tile_n * (c.acc == DType::kF16 ? 1 : 2) / 2 / threads;
    if (acc_regs > 255) {
        rep.error(at, "tile " + tile + " keeps " + std::to_string(acc_regs) +
                          " accumulator registers per thread (" + std::to_string(threads) +
                          " consumer threads); a thread has at most 255: use a smaller tile" +
                          (threads == 128 ? " or schedule cooperative" : ""));
    }
}

// math tf32x3 on a Hopper schedule promotes wgmma's accumulator into a second fp32 accumulator
// (codegen/lower_gemm.cpp: CUTLASS's FP8 mainloop), so each consumer thread holds the tile's
// accumulator twice. It must fit the registers a consumer thread has - the CUTLASS kernels give
// their consumer warpgroups 232 (setmaxnreg, cooperative and pingpong; tma_ws does not
// reconfigure: 255) - with kPromotionWorkingRegs left for addresses, loop and pipeline state.
// Calibrated by nvcc for sm_90a (bench/kernels/tf32x3_accum, 2026-12-01): cooperative 128x192
// (2 x 96) compiles without spills, 128x256 (2 x 128) spills 820 bytes. Cooperative splits tile
// M over two consumer warpgroups; pingpong and tma_ws give one warpgroup the whole tile.
constexpr int kPromotionWorkingRegs = 40;

int consumer_register_budget(Schedule s) {
    return s == Schedule::kTmaWarpSpecialized ? 255 : 232;
}

void check_promotion(const Kernel& kn, DType operands, const Problem& problem, Reporter& rep) {
    const GemmConfig& c = kn.gemm;
    const bool tf32x3 = resolve_math(problem.policy, operands, c.math).math == MathMode::kTf32x3;
    if (!tf32x3 || !is_tma(c.schedule)) return;
    const int threads = consumer_threads(c);
    const int budget = consumer_register_budget(c.schedule) - kPromotionWorkingRegs;
    auto acc_regs = [&](int tile_n) { return c.tile_m * tile_n / threads; };  // f32 accumulator
    if (2 * acc_regs(c.tile_n) <= budget) return;
    int fit_n = 0;
    for (int n = 16; n <= 256; n += 16)
        if (2 * acc_regs(n) <= budget) fit_n = n;
    rep.error(knob_loc(kn, "tile"),
              "tile " + tile_text(c) + " with math tf32x3 on schedule " + std::string(to_string(c.schedule)) +
                  ": 3xTF32 promotes wgmma's accumulator into a second fp32 accumulator, so each of "
                  "the " + std::to_string(threads) + " consumer threads holds 2 x " +
                  std::to_string(acc_regs(c.tile_n)) + " accumulator registers; with " +
                  std::to_string(kPromotionWorkingRegs) + " for the mainloop that exceeds the " +
                  std::to_string(consumer_register_budget(c.schedule)) +
                  " a consumer thread has, and the kernel spills (cooperative 128x256: 820 bytes "
                  "of spill stores) - " +
                  (fit_n > 0 ? "use tile " + std::to_string(c.tile_m) + "xN with N <= " +
                                   std::to_string(fit_n) + " (cooperative 128x128x32 cluster 2x1 "
                                   "measured fastest)"
                             : std::string("use a smaller tile M")));
}

// The schedule against the device's architecture.
void check_arch(const Kernel& kn, const DeviceLimits& limits, Reporter& rep) {
    const GemmConfig& c = kn.gemm;
    const std::string sched(to_string(c.schedule));
    const std::string device = upper(limits.name);
    const std::string arch = sm_name(limits.cc_major, limits.cc_minor);
    if (is_tma(c.schedule) && limits.cc_major < 9) {
        rep.error(knob_loc(kn, "schedule"), "schedule " + sched + " needs sm_90 (Hopper TMA and "
                  "wgmma); the " + device + " is " + arch + ": use schedule multistage");
    }
    if (!is_tma(c.schedule) && limits.cc_major < 8) {
        rep.error(knob_loc(kn, "schedule"), "schedule multistage needs sm_80 or newer; the " +
                                                device + " is " + arch);
    }
}

// Stages vs shared memory: operand tiles per stage, plus the epilogue's staging of D (and C
// where the epilogue reads a residual) for the TMA epilogue, plus pipeline barriers.
void check_stages(const Kernel& kn, const KernelFacts& facts, int bytes, const DeviceLimits& limits,
                  Reporter& rep) {
    const GemmConfig& c = kn.gemm;
    const std::string device = upper(limits.name);
    const int64_t per_stage = int64_t{c.tile_m + c.tile_n} * c.tile_k * bytes;
    const int64_t epi_tile = int64_t{c.tile_m} * std::min(c.tile_n, 32) * facts.max_out_bytes * 2;
    const int64_t epilogue = is_tma(c.schedule) ? epi_tile * (facts.reads_residual ? 2 : 1) : 0;
    const int64_t limit = limits.smem_per_block_optin_bytes;
    auto need = [&](int stages) { return stages * per_stage + epilogue + stages * 32; };
    const int fit = static_cast<int>((limit - epilogue) / (per_stage + 32));
    const SourceLoc st = knob_loc(kn, "stages");
    if (c.stages != 0 && (c.stages < 2 || c.stages > 8)) {
        rep.error(st, "stages " + std::to_string(c.stages) + ": use auto or 2..8");
    }
    if (c.stages >= 2 && need(c.stages) > limit) {
        rep.error(st, "stages " + std::to_string(c.stages) + " needs " + kib(need(c.stages)) +
                          " of shared memory; the " + device + " allows " + kib(limit) +
                          (fit >= 2 ? "; at most " + std::to_string(fit) + " fit"
                                    : "; even 2 stages do not fit: use a smaller tile"));
    } else if (c.stages == 0 && fit < 2) {
        rep.error(knob_loc(kn, "tile"), "tile needs " + kib(per_stage) + " of shared memory per "
                  "stage; even 2 stages (" + kib(need(2)) + ") exceed the " + device + "'s " +
                  kib(limit) + ": use a smaller tile");
    }
}

void check_swizzle(const Kernel& kn, Reporter& rep) {
    const GemmConfig& c = kn.gemm;
    if (c.swizzle != 1 && c.swizzle != 2 && c.swizzle != 4 && c.swizzle != 8)
        rep.error(knob_loc(kn, "swizzle"), "swizzle must be 1, 2, 4 or 8");
}

}  // namespace

void check_legality_gemm(const Kernel& kn, const KernelFacts& facts, const Problem& problem,
                         const CheckResult& tensors, const DeviceLimits& limits, Reporter& rep) {
    const GemmConfig& c = kn.gemm;
    const ResolvedTensor* a = tensors.find_tensor(kn.args[0].name);
    const ResolvedTensor* b = tensors.find_tensor(kn.args[1].name);
    if (a == nullptr || b == nullptr) return;
    const std::string device = upper(limits.name);
    if (c.schedule == Schedule::kDirect) {
        rep.error(knob_loc(kn, "schedule"), "schedule direct is a conv2d kernel's (kforge's "
                                            "direct convolution); a gemm runs tma_ws, "
                                            "cooperative, pingpong, stream_k or multistage");
        return;
    }
    check_arch(kn, limits, rep);
    check_math(kn, a->dtype, b->dtype, problem, rep);
    const int bytes = dtype_bytes(a->dtype);
    check_tile(kn, bytes, rep);
    check_promotion(kn, a->dtype, problem, rep);

    // Cluster.
    const SourceLoc cl = knob_loc(kn, "cluster");
    auto pow_ok = [](int v) { return v == 1 || v == 2 || v == 4; };
    const std::string cluster = std::to_string(c.cluster_m) + "x" + std::to_string(c.cluster_n);
    if (!pow_ok(c.cluster_m) || !pow_ok(c.cluster_n) || c.cluster_m * c.cluster_n > 4) {
        rep.error(cl, "cluster " + cluster + ": each dim must be 1, 2 or 4 and M*N at most 4");
    } else if (c.cluster_m * c.cluster_n > 1 && (!is_tma(c.schedule) || limits.cluster_max < 2)) {
        rep.error(cl, "cluster " + cluster + " needs an sm_90 schedule (tma_ws, cooperative, "
                      "pingpong, stream_k) on an sm_90 device; use cluster 1x1");
    } else if (c.cluster_m * c.cluster_n > limits.cluster_max) {
        rep.error(cl, "cluster " + cluster + ": the " + device + " allows at most " +
                          std::to_string(limits.cluster_max) + " CTAs per cluster");
    }

    check_stages(kn, facts, bytes, limits, rep);

    // Split-K, against the contracted extent.
    int64_t k_extent = 0;
    for (const auto& d : named_dims(a->dim_names)) {
        const auto& bd = b->dim_names;
        const auto& vd = facts.value_dims;
        if (std::find(bd.begin(), bd.end(), d) != bd.end() &&
            std::find(vd.begin(), vd.end(), d) == vd.end())
            k_extent = extent(problem, d);
    }
    const SourceLoc sk = knob_loc(kn, "splitk");
    if (c.split_k < 1 || c.split_k > 16) rep.error(sk, "splitk must be 1..16");
    if (c.split_k > 1 && c.schedule == Schedule::kStreamK) {
        rep.error(sk, "splitk " + std::to_string(c.split_k) + " with schedule stream_k: stream-K "
                      "already splits K; use splitk 1, or schedule cooperative with split-K");
    }
    if (c.split_k > 1 && c.schedule != Schedule::kStreamK && c.schedule != Schedule::kCooperative) {
        // CUTLASS splits K only through the stream-K tile scheduler of the cooperative kernel
        // (tma_ws and pingpong have none; the sm80 visitor epilogue has no serial reduction)
        rep.error(sk, "splitk " + std::to_string(c.split_k) + " with schedule " +
                          std::string(to_string(c.schedule)) + ": split-K needs schedule "
                          "cooperative; use splitk 1 or schedule cooperative");
    }
    const int64_t k_tiles = (k_extent + c.tile_k - 1) / c.tile_k;
    if (k_extent > 0 && c.split_k > k_tiles) {
        rep.error(sk, "splitk " + std::to_string(c.split_k) + " leaves splits without work: K = " +
                          std::to_string(k_extent) + " has " + std::to_string(k_tiles) +
                          " k-tiles of " + std::to_string(c.tile_k));
    }
    check_swizzle(kn, rep);

    // Alignment of each operand's contiguous (last) dim: TMA needs 16-byte row strides;
    // multistage's cp.async needs 4 bytes on tensor cores (SIMT takes any).
    for (const TensorRef& ref : kn.args) {
        const ResolvedTensor* t = tensors.find_tensor(ref.name);
        if (t == nullptr || t->shape.empty()) continue;
        const int64_t row = t->shape.back() * dtype_bytes(t->dtype);
        const std::string what = ref_text(ref) + ": its contiguous dim " + t->dim_names.back() +
                                 " = " + std::to_string(t->shape.back()) + " elements of " +
                                 std::to_string(dtype_bytes(t->dtype)) + " bytes = " +
                                 std::to_string(row) + " bytes";
        // An odd row of f16/bf16 (2 bytes short of 4) fits no schedule: f32_simt takes f32
        // operands only (codegen/gemm_spec.cpp), so the fix is an f32 copy (what the seed plans).
        const std::string half_fix = "no schedule reads it (f32_simt takes f32 operands only): "
                                     "cast " + ref.name + " to f32 in a map kernel first, or pad " +
                                     t->dim_names.back();
        if (is_tma(c.schedule) && row % 16 != 0) {
            rep.error(ref.loc, what + ", not a multiple of 16 as TMA requires; " +
                                   (row % 4 != 0 && dtype_bytes(t->dtype) < 4
                                        ? "nor of 4 as multistage's cp.async requires: " + half_fix
                                        : "use schedule multistage (smaller alignment) or pad " +
                                              t->dim_names.back()));
        } else if (!is_tma(c.schedule) && c.math != MathMode::kF32Simt && row % 4 != 0) {
            rep.error(ref.loc, what + ", not a multiple of 4 as cp.async requires; " +
                                   (dtype_bytes(t->dtype) < 4 ? half_fix
                                                              : "use math f32_simt or pad " +
                                                                    t->dim_names.back()));
        }
    }
    // Divisibility: a warning.
    const auto& vd = facts.value_dims;
    if (vd.size() >= 2) {
        const int64_t m = extent(problem, vd[vd.size() - 2]), n = extent(problem, vd.back());
        if (m % c.tile_m != 0 || n % c.tile_n != 0) {
            rep.warn(knob_loc(kn, "tile"), "kernel " + kn.name + ": M x N = " + std::to_string(m) +
                     " x " + std::to_string(n) + " is not a multiple of the tile " +
                     std::to_string(c.tile_m) + " x " + std::to_string(c.tile_n) +
                     "; CUTLASS predicates the edge tiles");
        }
    }
}

}  // namespace kforge::dsl

namespace kforge::dsl {

namespace {

// The chain's operands, against the output's dims [N,K,P,Q]: what the epilogue broadcasts.
void check_conv_chain_operands(const Kernel& kn, const KernelFacts& facts, const Op& op,
                               Reporter& rep) {
    const std::vector<std::string>& out = facts.value_dims;
    if (out.size() < 2) return;
    // K: the output's second dim where none is dropped, else the weight's first (transposed:
    // its second, K/groups)
    const std::string k = out.size() == kn.args[0].dims.size() ? out[1]
                          : is_conv_transpose(op.kind)         ? kn.args[1].dims.at(1)
                                                               : kn.args[1].dims.at(0);
    for (const ChainOp& s : kn.chain) {
        if (!s.tensor || s.kind == ChainOpKind::kStore || s.kind == ChainOpKind::kReduce) continue;
        const std::vector<std::string> d = named_dims(s.tensor->dims);
        if (d.empty() || d == out || d == std::vector<std::string>{k}) continue;
        rep.error(s.tensor->loc, std::string(to_string(s.kind)) + " " + ref_text(*s.tensor) +
                                     ": a conv2d chain reads per-channel tensors [" + k +
                                     "], tensors of the output's dims " + dims_text(out) +
                                     " and scalars ([]); broadcast " + s.tensor->name +
                                     " in a map kernel after the conv2d");
    }
}

// schedule direct (dsl/conv_direct.h, kernels/conv_direct.cuh): the forms, operands and math
// it runs, its tile, stages and shared memory on this device.
void check_conv_direct(const Kernel& kn, const Op& op, const Problem& problem,
                       const DeviceLimits& limits, Reporter& rep) {
    const GemmConfig& c = kn.gemm;
    auto shape = conv_direct_shape(op, problem);
    if (!shape) {
        rep.error(knob_loc(kn, "schedule"), "schedule direct " + shape.error().message +
                                                "; use schedule multistage");
        return;
    }
    if (c.math != MathMode::kF32Simt)
        rep.error(knob_loc(kn, "math"), "math " + std::string(to_string(c.math)) +
                                            " with schedule direct: the direct convolution "
                                            "multiplies in f32 on the CUDA cores; use math "
                                            "f32_simt");
    if (c.iterator != ConvIterator::kAuto)
        rep.error(knob_loc(kn, "iterator"), "iterator with schedule direct: the iterator knob is "
                                            "the multistage kernel's; leave it auto");
    if (c.acc != DType::kF32)
        rep.error(knob_loc(kn, "acc"), "acc f16 with schedule direct: it accumulates in f32");
    if (c.swizzle != 1)
        rep.error(knob_loc(kn, "swizzle"), "swizzle with schedule direct: it has no tile "
                                           "swizzle; use swizzle 1");
    if (c.cluster_m * c.cluster_n != 1 || c.split_k != 1 || c.raster != Raster::kAuto)
        rep.error(kn.loc, "kernel " + kn.name + ": a conv2d kernel has no cluster, splitk or "
                                                "raster (they are Hopper gemm knobs)");
    if (c.stages < 1 || c.stages > 6)
        rep.error(knob_loc(kn, "stages"), "stages " + std::to_string(c.stages) +
                                              " with schedule direct: 1..6 channel steps in "
                                              "flight");
    if (limits.cc_major < 8)
        rep.error(knob_loc(kn, "schedule"), "schedule direct stages with cp.async: sm_80 or "
                                            "newer; the " + upper(limits.name) + " is " +
                                            sm_name(limits.cc_major, limits.cc_minor));
    auto tiling = conv_direct_tiling(*shape, c.tile_m, c.tile_n, c.tile_k, c.stages,
                                     limits.smem_per_block_optin_bytes);
    if (!tiling) rep.error(knob_loc(kn, "tile"), tiling.error().where + ": " + tiling.error().message);
}

}  // namespace

// A conv2d kernel: the implicit GEMM (M = N*P*Q, N = K, K = C*R*S) of CUTLASS's sm80 multistage
// convolution, so the multistage gemm's checks (architecture, math vs policy, tile, shared memory
// per stage, swizzle) with the operand dtype of X; no cluster or split-K. The lowering zero-pads
// the channels (codegen/lower_conv.cpp), so no alignment is required of C or K. The chain reads
// per-channel tensors [K], tensors of the output's dims [N,K,P,Q] and scalars.
void check_legality_conv2d(const Kernel& kn, const KernelFacts& facts, const Problem& problem,
                           const CheckResult& tensors, const DeviceLimits& limits, Reporter& rep) {
    const GemmConfig& c = kn.gemm;
    const ResolvedTensor* x = tensors.find_tensor(kn.args[0].name);
    const ResolvedTensor* w = tensors.find_tensor(kn.args[1].name);
    if (x == nullptr || w == nullptr || facts.conv == nullptr) return;
    const Op& op = *facts.conv;
    // groups > 1 (CUTLASS's group fprop) and transposed convolutions (its dgrad): what those
    // kernels cannot run (3-D groups, grouped transposed, stride with dilation) the lowering
    // refuses by name (codegen/lower_conv_forms.cpp).
    const bool sm90 = c.schedule == Schedule::kTmaWarpSpecialized;
    if (c.schedule != Schedule::kMultistage && !sm90 && c.schedule != Schedule::kDirect) {
        rep.error(knob_loc(kn, "schedule"), "schedule " + std::string(to_string(c.schedule)) +
                                                ": a conv2d kernel runs on schedule multistage "
                                                "(CUTLASS's sm80 implicit-GEMM convolution), "
                                                "tma_ws (its sm90 one) or direct (kforge's "
                                                "direct convolution)");
    }
    if (c.schedule == Schedule::kDirect) {
        check_math(kn, x->dtype, w->dtype, problem, rep);
        check_conv_direct(kn, op, problem, limits, rep);
        check_conv_chain_operands(kn, facts, op, rep);
        return;
    }
    if (sm90) {
        // CUTLASS 3.x's sm90 fprop (codegen/lower_conv_sm90.cpp): dense 2-D and 1-D, one
        // consumer warp group, tile K one 128-byte swizzle row of the staged dtype
        const bool dense_2d = op.attrs.groups == 1 && !is_conv_transpose(op.kind) &&
                              op.kind != OpKind::kConv3d;
        if (!dense_2d)
            rep.error(knob_loc(kn, "schedule"), "schedule tma_ws: CUTLASS's sm90 convolution runs "
                                                "the dense conv1d/conv2d fprop here (no groups, "
                                                "transposed or 3-D); use schedule multistage");
        if (c.tile_m != 64 && c.tile_m != 128)
            rep.error(knob_loc(kn, "tile"), "tile " + tile_text(c) + " with schedule tma_ws: tile "
                                            "M 64 or 128 (one consumer warp group)");
        const int staged = x->dtype == DType::kF32 ? 4 : dtype_bytes(x->dtype);
        if (c.tile_k * staged != 128)
            rep.error(knob_loc(kn, "tile"), "tile " + tile_text(c) + " with schedule tma_ws: "
                                            "tile K " + std::to_string(128 / staged) +
                                            " (one 128-byte row of the staged operands)");
        if (c.math == MathMode::kF32Simt)
            rep.error(knob_loc(kn, "math"), "math f32_simt with schedule tma_ws: wgmma runs "
                                            "tf32x3, tf32, f16 or bf16");
        if (c.iterator != ConvIterator::kAuto)
            rep.error(knob_loc(kn, "iterator"), "iterator " +
                      std::string(c.iterator == ConvIterator::kFewChannels ? "few_channels"
                                                                           : "optimized") +
                      " with schedule tma_ws: TMA im2col walks the filter (the iterator knob is "
                      "the multistage kernel's)");
    }
    if (c.cluster_m * c.cluster_n != 1 || c.split_k != 1 || c.raster != Raster::kAuto) {
        rep.error(kn.loc, "kernel " + kn.name + ": a conv2d kernel has no cluster, splitk or raster "
                                                "(they are Hopper gemm knobs)");
    }
    check_arch(kn, limits, rep);
    check_math(kn, x->dtype, w->dtype, problem, rep);
    // Limits of the lowering (codegen/lower_conv.cpp): the staging copies x and w channels-last
    // without rounding them, and the epilogue kernel reads the accumulators as f32.
    if (x->dtype == DType::kF32 &&
        resolve_math(problem.policy, x->dtype, c.math).refusal == MathRefusal::kNeedsItsDtype) {
        rep.error(knob_loc(kn, "math"), "math " + std::string(to_string(c.math)) +
                                            " on f32 operands: a conv2d kernel stages x and w "
                                            "without rounding them; use math tf32 or tf32x3, or "
                                            "cast x and w in a map kernel first");
    }
    // CUTLASS's optimized fprop iterator keeps one mask bit per filter row and column.
    if (w->shape.size() == 4 && (w->shape[2] > 32 || w->shape[3] > 32)) {
        rep.error(kn.args[1].loc, "a " + std::to_string(w->shape[2]) + "x" +
                                      std::to_string(w->shape[3]) + " filter: CUTLASS's optimized "
                                      "conv2d iterator takes R, S <= 32");
    }
    if (c.iterator == ConvIterator::kFewChannels && c.math == MathMode::kF32Simt) {
        rep.error(knob_loc(kn, "iterator"), "iterator few_channels with math f32_simt: CUTLASS's "
                                            "few-channels fprop is a tensor-op mainloop; use "
                                            "iterator optimized (or auto), or a tensor-op math");
    }
    if (c.acc != DType::kF32) {
        rep.error(knob_loc(kn, "acc"), "acc f16: a conv2d kernel's accumulators are staged as f32 "
                                       "for its epilogue kernel; use acc f32");
    }
    const int bytes = dtype_bytes(x->dtype);
    check_tile(kn, bytes, rep);
    // the sm80 tensor-op fprop's epilogue maps 2x2 warps' accumulators onto rows of the tile:
    // tile N 16 leaves it no row iterations (a static assertion in CUTLASS's
    // output_tile_thread_map.h: LeNet5's conv at 64x16x32 failed to compile, 64x32x32 built)
    if (!sm90 && c.math != MathMode::kF32Simt && op.attrs.groups == 1 && c.tile_n < 32) {
        rep.error(knob_loc(kn, "tile"), "tile " + tile_text(c) + ": a multistage tensor-op conv2d "
                                        "takes tile N 32 or more (CUTLASS's epilogue thread map "
                                        "has no row iterations at " + std::to_string(c.tile_n) + ")");
    }
    if (c.stages < 2 || c.stages > 6) {
        rep.error(knob_loc(kn, "stages"), "stages " + std::to_string(c.stages) +
                                              ": a conv2d kernel takes 2..6 stages");
    } else if (!sm90) {  // tma_ws: as many stages as fit beside its epilogue (CUTLASS's carveout)
        check_stages(kn, facts, bytes, limits, rep);
    }
    check_swizzle(kn, rep);
    check_conv_chain_operands(kn, facts, op, rep);
}

}  // namespace kforge::dsl
