// What kforge's code generators can lower today, checked before compile so a search never
// spends a compile on a program that codegen would refuse. These are limits of the lowering,
// not of the device (check_legality*.cpp) or of the language: each message says so and names
// the nearest program that lowers. Keep in step with codegen/gemm_spec.cpp, codegen/chain.cpp
// and codegen/lower_rowwise*.cpp.
#include <algorithm>
#include <map>

#include "dsl/check_internal.h"

namespace kforge::dsl {

namespace {

void check_chain_lowerable(const Kernel& kn, Reporter& rep) {
    for (const ChainOp& op : kn.chain) {
        if (op.kind == ChainOpKind::kReduce) {
            rep.error(op.loc, "reduce in a chain is not lowered yet (no CUTLASS epilogue or "
                              "template reduction); store the value to an intermediate and add a "
                              "rowwise " + std::string(to_string(op.reduce)) + " kernel over it");
        }
    }
}

// CUTLASS's sm80 SIMT mainloop (codegen/lower_gemm_sm80.cpp refuses the same): each of the
// 2x2 warps spans 4x8 lanes, and a K-major operand is transposed into shared memory with a
// padding of tile K / 32 elements that the lane tile (min(4, warp extent / lanes)) must divide.
// Refused here so that the search spends no compile on them.
void check_simt_tile(const Kernel& kn, Reporter& rep) {
    const auto& g = kn.gemm;
    const int warp_m = g.tile_m / 2, warp_n = g.tile_n / 2;
    if (warp_m % 4 != 0 || warp_n % 8 != 0) {
        rep.error(knob_loc(kn, "tile"), "math f32_simt with tile " + std::to_string(g.tile_m) +
                                            "x" + std::to_string(g.tile_n) +
                                            ": each of the 2x2 warps spans 4x8 lanes, so tile M "
                                            "must be a multiple of 8 and tile N of 16");
        return;
    }
    if (kn.args.size() < 2 || kn.args[0].dims.size() < 2 || kn.args[1].dims.size() < 2) return;
    // The contracted dim: the one of A's last two that B's last two share.
    // conv2d: both operands are K-major (staged NHWC and KRSC: channels innermost).
    const auto& a = kn.args[0].dims;
    const auto& b = kn.args[1].dims;
    const std::string a0 = a[a.size() - 2], a1 = a.back(), b0 = b[b.size() - 2], b1 = b.back();
    const std::string k = (a1 == b0 || a1 == b1) ? a1 : a0;
    const bool conv = kn.kind == KernelKind::kConv2d;
    const bool a_k_major = conv || a1 == k, b_k_major = conv || b1 == k;
    const int lane_m = std::min(4, warp_m / 4), lane_n = std::min(4, warp_n / 8);
    const int pad = g.tile_k / 32;
    if ((a_k_major && pad % lane_m != 0) || (b_k_major && pad % lane_n != 0))
        rep.error(knob_loc(kn, "tile"),
                  "math f32_simt with tile K " + std::to_string(g.tile_k) +
                      " and a K-major operand: CUTLASS's SIMT mainloop pads its shared-memory "
                      "transpose by tile K / 32 elements, a multiple of the lane tile " +
                      std::to_string(a_k_major && pad % lane_m != 0 ? lane_m : lane_n) +
                      "; use tile K 8 or 16");
}

// A gemm's epilogue lowers to CUTLASS's epilogue visitor tree (codegen/evt_emit.cpp), a tree:
// every use of a `let` value (`add t`, `use t`) copies the nodes that computed it, so reusing
// values doubles the tree (and its arguments, and the host code that fills them) each time.
// Counted as emit_evt builds it: the accumulator fetch, one node per compute step (a binary
// step also its operand: a tensor leaf or the named value's tree), one per cast and one store.
void check_epilogue_tree(const Kernel& kn, Reporter& rep) {
    int64_t nodes = 1;  // the accumulator fetch
    std::map<std::string, int64_t> named;
    for (const ChainOp& op : kn.chain) {
        switch (op.kind) {
        case ChainOpKind::kLet: named[op.name] = nodes; continue;
        case ChainOpKind::kUse: {
            auto it = named.find(op.name);
            if (it != named.end()) nodes = it->second;
            continue;
        }
        case ChainOpKind::kStore:
        case ChainOpKind::kReduce: nodes += 2; break;
        default: {
            int64_t operand = 0;
            if (is_binary(op.kind) && op.tensor) operand = 1;
            if (is_binary(op.kind) && !op.name.empty()) {
                auto it = named.find(op.name);
                operand = it != named.end() ? it->second : 1;
            }
            nodes += 1 + operand;
            break;
        }
        }
        if (nodes > kMaxEpilogueTreeNodes) {
            rep.error(op.loc, "the gemm epilogue's visitor tree would have more than " +
                                  std::to_string(kMaxEpilogueTreeNodes) +
                                  " nodes here: CUTLASS's epilogue is a tree, so each use of a "
                                  "`let` value copies the nodes that computed it; reuse named "
                                  "values less, or store the matmul and finish the chain in a "
                                  "map kernel (which computes a named value once)");
            return;
        }
    }
}

}  // namespace

// GEMMs: nothing to refuse. tf32 with MN-major operands lowers staged K-major, and 3xTF32 on the
// Hopper schedules as one tf32 GEMM over K' = 3K of staged hi/lo parts (codegen/gemm_stage.h)
// whose accumulator is promoted every 4 k-blocks (codegen/lower_gemm.cpp; unpromoted it failed
// the fp32_strict precision profile on the H200: median relative error 4.1e-5 at 4096^3,
// promoted 3.6e-7, bench/kernels/tf32x3_accum). The tiles whose doubled accumulator does not fit
// a consumer thread's registers are refused with the other register limits (check_legality.cpp).
void check_lowering(const Kernel& kn, Reporter& rep) {
    check_chain_lowerable(kn, rep);
    if (kn.kind == KernelKind::kGemm) check_epilogue_tree(kn, rep);
    // math f32_simt lowers to CUTLASS's SIMT GemmUniversal with its default epilogue: the Sm80
    // epilogue visitor tree assumes the tensor-op accumulator layout (f32_simt through it wrote
    // almost all zeros on the H200, 2026-12-02; codegen/lower_gemm_sm80.cpp).
    if (kn.kind == KernelKind::kGemm && kn.gemm.math == MathMode::kF32Simt) {
        for (const ChainOp& op : kn.chain) {
            if (op.kind != ChainOpKind::kStore && op.kind != ChainOpKind::kCast) {
                rep.error(op.loc, "math f32_simt lowers with a plain store only (CUTLASS's sm80 "
                                  "epilogue visitor tree has no SIMT thread map): store the "
                                  "matmul, or use math tf32x3 for a fused epilogue");
                break;
            }
        }
        check_simt_tile(kn, rep);
    }
    // A conv2d kernel's chain runs in its own transposing epilogue kernel (codegen/lower_conv.cpp),
    // not CUTLASS's: f32_simt takes any chain there, the SIMT tile rules hold.
    // schedule direct is kforge's own kernel: its tile rules are check_conv_direct's.
    if (kn.kind == KernelKind::kConv2d && kn.gemm.math == MathMode::kF32Simt &&
        kn.gemm.schedule != Schedule::kDirect)
        check_simt_tile(kn, rep);
    if (kn.kind == KernelKind::kRowwise) {
        const bool over_last = kn.over.empty() || (!kn.args.empty() && !kn.args[0].dims.empty() &&
                                                   kn.over == kn.args[0].dims.back());
        if (over_last && kn.rowwise.split > kMaxRowSplit) {
            rep.error(knob_loc(kn, "split"),
                      "split " + std::to_string(kn.rowwise.split) + ": a split row is one thread-"
                      "block cluster, at most " + std::to_string(kMaxRowSplit) + " CTAs");
        }
        const bool set = over_is_set(kn);
        if (!kn.pre.empty() && !over_last && !set) {
            rep.error(knob_loc(kn, "over"), "pre { .. } with over " + kn.over +
                                                ": a prologue is lowered for reductions over the "
                                                "last dim or a set of dims only (a column "
                                                "reduction has none)");
        }
        const RowOp op = kn.row_op;
        if ((op == RowOp::kL1Normalize || op == RowOp::kL2Normalize) && !over_last) {
            rep.error(knob_loc(kn, "over"), std::string(to_string(op)) + " over " + kn.over +
                                                ": lowered over the last dim only");
        }
        if (op == RowOp::kCumsum || op == RowOp::kCumprod) {
            const std::string name(to_string(op));
            if (!over_last) {
                rep.error(knob_loc(kn, "over"),
                          name + " over " + kn.over + ": lowered over the last dim only");
            }
            if (kn.rowwise.split != 1) {
                rep.error(knob_loc(kn, "split"),
                          name + " scans a row in one thread block (a running carry over its "
                                 "tiles); split is not lowered for scans: use split 1");
            }
            if (kn.rowwise.passes != 1) {
                rep.error(knob_loc(kn, "passes"),
                          name + " reads the row once, tile by tile: passes 2 does not apply");
            }
            if (kn.rowwise.smem_stage) {
                rep.error(knob_loc(kn, "smem_stage"),
                          name + " reads the row once: drop smem_stage");
            }
            const int per_row = kn.rowwise.rows_per_block > 0
                                    ? kn.rowwise.threads / kn.rowwise.rows_per_block
                                    : kn.rowwise.threads;
            if (kn.rowwise.rows_per_block > 1 && per_row > 32) {
                rep.error(knob_loc(kn, "rows_per_block"),
                          name + " with rows_per_block " +
                              std::to_string(kn.rowwise.rows_per_block) + ": a row group of " +
                              std::to_string(per_row) + " threads; several rows per block scan "
                              "one row per warp or less (threads / rows_per_block <= 32)");
            }
        }
        const bool one_sweep = op == RowOp::kSum || op == RowOp::kMean || op == RowOp::kMax ||
                               op == RowOp::kMin || op == RowOp::kProd ||
                               (op == RowOp::kLogsumexp && kn.rowwise.online);
        if (kn.rowwise.smem_stage && one_sweep) {
            rep.error(knob_loc(kn, "smem_stage"),
                      "smem_stage stages a row that is swept more than once; " +
                          std::string(to_string(op)) +
                          (kn.rowwise.online ? " online" : "") + " reads it once: drop smem_stage");
        }
    }
}

}  // namespace kforge::dsl
