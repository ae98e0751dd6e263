// AST of the kforge kernel language (docs/language.md). Produced by parse_program()
// (dsl/parser.h); read by the checker, the canonical printer and codegen. Plain data.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "problem/problem.h"

namespace kforge::dsl {

struct SourceLoc {
    int line = 0;  // 1-based; 0 = unknown
    int col = 0;   // 1-based
    bool operator==(const SourceLoc&) const = default;
};

// A tensor as a program names it: `X[M,K]`. Dims are the problem's dim names, or integers
// written as text ("1"). A scalar tensor is `alpha[]`.
struct TensorRef {
    std::string name;
    std::vector<std::string> dims;
    SourceLoc loc;
    bool operator==(const TensorRef&) const = default;
};

// kConv2d: a 2-D convolution (NCHW input, KCRS weight) as an implicit GEMM; its knobs are the
// gemm knobs of a multistage kernel, stored in Kernel::gemm (docs/language.md).
// kPool: a pooling op of the problem (max_pool, avg_pool, adaptive_avg_pool, adaptive_max_pool)
// over X[N,C,*] (1-3 spatial axes), one thread per `items` consecutive outputs along the last
// axis (kernels/pool.cuh); the chain runs on each pooled value.
// kAttention: softmax(Q K^T * scale [masked] ) V over the problem's matmul, scale, optional
// masked_fill / additive mask, softmax, matmul (dsl/check_attention.cpp, kernels/attention.cuh):
// `attention(Q[..,S,E], K[..,L,E], V[..,L,F] [, M[..,S,L]])`, FlashAttention-2 style.
// kCopy: a shape op of the problem (reshape, expand, permute, slice, cat, pad) as one gather
// (problem/copy_op.h, kernels/copy.cuh): `copy cat(X0[..], X1[..])`; the chain runs on each
// moved value over the op's output.
// kRnn: a recurrent op of the problem (lstm, gru) as per-layer launches, a time-parallel input
// projection then a persistent recurrent kernel (codegen/lower_rnn.cpp, dsl/check_rnn.cpp):
// `rnn lstm(x[..], h0[..], c0[..])`; the chain is one store of the op's result.
enum class KernelKind { kGemm, kRowwise, kMap, kConv2d, kPool, kAttention, kCopy, kRnn };
std::string_view to_string(KernelKind k);
std::optional<KernelKind> kernel_kind_from_string(std::string_view s);

// One statement of a chain (`{ add b[N]; gelu tanh; cast bf16; store Y[M,N] }`).
enum class ChainOpKind {
    // binary with a tensor (broadcast by dims), a number or a named value (`let`)
    kAdd, kSub, kMul, kDiv,
    // reversed binary: operand - value, operand / value
    kRsub, kRdiv,
    // unary
    kRelu, kLeakyRelu, kGelu, kSilu, kSigmoid, kTanh, kMish, kSoftplus, kExp, kLog, kNeg, kAbs,
    kSqrt, kRsqrt, kSquare, kErf, kLog1p, kExpm1, kSin, kCos, kSign, kReciprocal,
    // with numbers; min / max also with a tensor or a named value (torch.minimum / maximum)
    kClamp, kMin, kMax,
    // select by a bool mask tensor: `masked_fill M[..] 1.5 | masked_fill M[..] t` is
    // M ? operand : value (problem masked_fill with a number; where(M, t, value) with a name)
    kMaskedFill,
    // `load T[..]`: the value is T's element (broadcast by dims): where(M, a, b) on a's map is
    // `let t; load B[..]; masked_fill M[..] t`
    kLoad,
    // dtype and memory
    kCast, kStore,
    // reduction of the value over one dim into a smaller tensor (gemm epilogue or map):
    // `reduce sum over N -> S[M]`
    kReduce,
    // named values: `let t` binds the value to t; `use t` makes t the value again
    kLet, kUse,
};
std::string_view to_string(ChainOpKind k);

// add/sub/mul/div/rsub/rdiv/min/max: statements with an operand (tensor, number or named
// value); `min c` / `max c` with a number are clamps, with a tensor or a name the element-wise
// minimum / maximum of two values.
inline bool is_binary(ChainOpKind k) {
    return k == ChainOpKind::kAdd || k == ChainOpKind::kSub || k == ChainOpKind::kMul ||
           k == ChainOpKind::kDiv || k == ChainOpKind::kRsub || k == ChainOpKind::kRdiv ||
           k == ChainOpKind::kMin || k == ChainOpKind::kMax;
}
// rsub/rdiv: the operand comes first (operand - value, operand / value).
inline bool is_reversed(ChainOpKind k) { return k == ChainOpKind::kRsub || k == ChainOpKind::kRdiv; }
std::optional<ChainOpKind> chain_op_from_string(std::string_view s);

enum class ReduceKind { kSum, kMax, kMin, kMean };
std::string_view to_string(ReduceKind k);
std::optional<ReduceKind> reduce_kind_from_string(std::string_view s);

struct ChainOp {
    ChainOpKind kind = ChainOpKind::kRelu;
    std::optional<TensorRef> tensor;   // add/sub/mul/div with a tensor; store; reduce target
    std::string name;                  // let/use: the name; add/sub/.. with a named value
    SourceLoc name_loc;                // where `name` is written
    std::vector<double> numbers;       // add/sub/mul/div by a number; leaky_relu slope; clamp lo hi;
                                       // min/max value; softplus beta threshold
    GeluApprox gelu = GeluApprox::kErf;
    DType cast_to = DType::kF32;       // cast
    ReduceKind reduce = ReduceKind::kSum;
    std::string reduce_over;           // dim name for reduce
    SourceLoc loc;
    bool operator==(const ChainOp&) const = default;
};

// GEMM knobs.
enum class Schedule {
    kTmaWarpSpecialized,  // `tma_ws`: Hopper TMA + warp-specialized, one tile per CTA
    kCooperative,         // `cooperative`: persistent, two consumer warpgroups share a tile
    kPingpong,            // `pingpong`: persistent, consumer warpgroups alternate tiles
    kStreamK,             // `stream_k`: cooperative with the stream-K tile scheduler
    kMultistage,          // `multistage`: Ampere-style cp.async multistage (sm_80+), also SIMT
    kDirect,              // `direct`: conv2d kernels only, kforge's direct convolution (f32 FMA)
};
std::string_view to_string(Schedule s);
std::optional<Schedule> schedule_from_string(std::string_view s);

// Operand precision of the multiply: what the tensor cores (or SIMT units) consume.
enum class MathMode { kAuto, kF32Simt, kTf32, kTf32x3, kBf16, kF16 };

// conv2d: how CUTLASS's fprop walks GEMM-K (= C*R*S). kOptimized: filter position by filter
// position, C in tile-K steps (channels beyond C are masked zeros: wasteful where C is below
// tile K); kFewChannels: the flattened (r, s, c) in accesses of the alignment (tensor ops only);
// kAuto: kOptimized.
enum class ConvIterator { kAuto, kOptimized, kFewChannels };
std::string_view to_string(MathMode m);
std::optional<MathMode> math_from_string(std::string_view s);

enum class Raster { kAuto, kAlongM, kAlongN };
std::string_view to_string(Raster r);
std::optional<Raster> raster_from_string(std::string_view s);

struct GemmConfig {
    int tile_m = 128, tile_n = 128, tile_k = 64;
    int cluster_m = 1, cluster_n = 1;
    int stages = 0;  // 0 = auto (as many as shared memory allows)
    Schedule schedule = Schedule::kCooperative;
    MathMode math = MathMode::kAuto;
    DType acc = DType::kF32;
    Raster raster = Raster::kAuto;
    int swizzle = 1;   // 1, 2, 4, 8
    int split_k = 1;
    ConvIterator iterator = ConvIterator::kAuto;  // conv2d only
    bool operator==(const GemmConfig&) const = default;
};

// A conv2d kernel's knobs where the program writes none: the parser starts every conv2d kernel
// from this (tile 128x64x32 suits every precision: an f32 tile K row of 128 bytes).
inline GemmConfig conv2d_default_config() {
    GemmConfig c;
    c.tile_m = 128, c.tile_n = 64, c.tile_k = 32;
    c.stages = 3;
    c.schedule = Schedule::kMultistage;
    return c;
}

enum class RowOp { kSoftmax, kLogSoftmax, kLogsumexp, kLayerNorm, kRmsNorm, kGroupNorm, kSum, kMean, kMax, kMin,
                   kProd, kL1Normalize, kL2Normalize, kCumsum, kCumprod,
                   kArgmax, kArgmin,   // the i64 index of the first max / min (codegen/lower_rowwise_arg.cpp)
                   kCrossEntropy,      // (logits[N,C], targets[N]) -> mean loss (a scalar)
                   kTril, kTriu };     // the problem op's triangle of the last two dims, zero elsewhere
std::string_view to_string(RowOp r);
std::optional<RowOp> row_op_from_string(std::string_view s);

struct RowwiseConfig {
    int rows_per_block = 1;
    int threads = 256;
    int vec = 4;         // elements per vector access
    int passes = 1;      // 1: row cached in registers/smem; 2: re-read from memory
    bool online = false; // online softmax (running max and sum in one sweep)
    int split = 1;       // blocks (or cluster CTAs) cooperating on one row
    bool smem_stage = false;  // the CTA's part of the row staged in shared memory (cp.async)
    bool reverse = false;     // cumsum / cumprod: scan from the row's end
    bool exclusive = false;   // cumsum / cumprod: element i combines the elements before it
    bool operator==(const RowwiseConfig&) const = default;
};

struct MapConfig {
    int block = 256;
    int vec = 4;
    int items_per_thread = 1;
    bool grid_stride = false;
    bool operator==(const MapConfig&) const = default;
};

// A pool kernel's op word (`pool max(X[..])`): max, avg, adaptive_avg, adaptive_max.
inline std::string_view pool_word(OpKind k) {
    switch (k) {
        case OpKind::kAvgPool: return "avg";
        case OpKind::kAdaptiveAvgPool: return "adaptive_avg";
        case OpKind::kAdaptiveMaxPool: return "adaptive_max";
        default: return "max";
    }
}
inline std::optional<OpKind> pool_op_from_word(std::string_view w) {
    for (OpKind k : {OpKind::kMaxPool, OpKind::kAvgPool, OpKind::kAdaptiveAvgPool,
                     OpKind::kAdaptiveMaxPool})
        if (pool_word(k) == w) return k;
    return std::nullopt;
}

struct PoolConfig {
    int threads = 256;  // threads per block
    int items = 1;      // consecutive outputs (along the last spatial axis) per thread group
    int lanes = 1;      // threads that split one output's window (1..32, a power of two)
    int rows = 1;       // consecutive outputs along the next-to-last spatial axis per thread
    int vec = 1;        // elements per input load along the last axis (1, 2, 4)
    bool operator==(const PoolConfig&) const = default;
};

// An attention kernel's knobs (kernels/attention.cuh): tile = query rows x key rows per step
// (a warp per 16 query rows); scale = the scores' factor (the problem's scale op).
// `impl`: kforge's WMMA template, CUTLASS's Hopper FMHA (dsl/attention_fmha.h) with its
// tile (query rows x key rows x head dim) and kernel schedule, or CUTLASS's memory-efficient
// attention (dsl/attention_mea.h: any head dim, f32 as 3xTF32, additive masks) with its tile.
enum class AttentionImpl { kWmma, kCutlassFmha, kCutlassMea };
enum class FmhaSchedule { kCooperative, kPingpong, kTma };
struct AttentionConfig {
    int tile_m = 64;   // query rows per CTA (16 per warp)
    int tile_n = 64;   // key / value rows per shared-memory tile
    std::optional<double> scale;
    bool f32_cores = false;  // `math f32`: f32 FMA on the CUDA cores (else the policy's, auto)
    AttentionImpl impl = AttentionImpl::kWmma;
    int fmha_m = 128, fmha_n = 64, fmha_d = 64;  // `fmha_tile`: CUTLASS's TileShape
    FmhaSchedule fmha_schedule = FmhaSchedule::kCooperative;
    int mea_m = 64, mea_n = 64;  // `mea_tile`: query rows x key rows of a CTA (cutlass_mea)
    // `mask tril|triu` + `diagonal d`: the scores' structured mask (a causal mask is triu 1),
    // computed from the indices, fully masked key tiles skipped (the problem's, not a search move)
    TriMask tri_mask = TriMask::kNone;
    int64_t tri_diagonal = 0;
    bool operator==(const AttentionConfig&) const = default;
};

// A copy kernel's op word (`copy permute(X[..])`): the shape op's own name.
inline std::optional<OpKind> copy_op_from_word(std::string_view w) {
    for (OpKind k : {OpKind::kReshape, OpKind::kExpand, OpKind::kPermute, OpKind::kSlice,
                     OpKind::kCat, OpKind::kPad})
        if (to_string(k) == w) return k;
    return std::nullopt;
}

struct CopyConfig {
    int threads = 256;  // threads per block
    int vec = 4;        // consecutive outputs per thread (a vector store)
    bool operator==(const CopyConfig&) const = default;
};

// An rnn kernel's knobs (codegen/lower_rnn.cpp): the recurrent kernel's CTAs each own `units`
// hidden units of every gate (their W_hh rows in shared memory), `threads` per CTA.
struct RnnConfig {
    int units = 8;
    int threads = 256;
    bool operator==(const RnnConfig&) const = default;
};

struct Kernel {
    std::string name;
    KernelKind kind = KernelKind::kMap;
    std::vector<TensorRef> args;  // gemm: A, B; rowwise: X [, weight [, bias]]; map: the chain start;
                                  // conv2d: X[N,C,H,W], Wt[K,C,R,S]
    RowOp row_op = RowOp::kSoftmax;   // rowwise
    std::string over;                 // rowwise: dim reduced/normalized (empty: the last)
    std::optional<double> eps;        // layer_norm / rms_norm / group_norm / l1,l2_normalize
    std::optional<int64_t> groups;    // group_norm
    GemmConfig gemm;                  // gemm and conv2d (conv2d: schedule multistage)
    RowwiseConfig rowwise;
    MapConfig map;
    OpKind pool_op = OpKind::kMaxPool;  // pool: the problem op it computes (`pool max(X[..])`)
    PoolConfig pool;
    AttentionConfig attention;        // attention
    OpKind copy_op = OpKind::kReshape;  // copy: the shape op it computes (`copy cat(X0, X1)`)
    CopyConfig copy;
    OpKind rnn_op = OpKind::kLstm;      // rnn: lstm or gru (`rnn lstm(x, h0, c0)`)
    RnnConfig rnn;
    // rowwise sum/mean/max/min: the element-wise prologue `pre { .. }` applied to every element
    // of the row input before it is reduced (operands indexed like the input or broadcast into
    // it; no stores). Empty: the row input is reduced as loaded.
    std::vector<ChainOp> pre;
    std::vector<ChainOp> chain;       // applied to the accumulator / row-op result / value; ends in stores
    std::vector<std::pair<std::string, SourceLoc>> knob_locs;  // knob name -> where written
    SourceLoc loc;
    bool operator==(const Kernel&) const = default;  // compares locations too
};

struct Program {
    std::string name;
    std::string problem;  // the problem's name
    std::vector<Kernel> kernels;
    SourceLoc loc;
    bool operator==(const Program&) const = default;  // compares locations too
};

// `p` with every SourceLoc and knob_locs cleared: compare programs by meaning.
Program strip_locations(Program p);

// Whether `over` names a set of dims (more than one).
inline bool over_is_set(const Kernel& kernel) {
    return kernel.over.find(',') != std::string::npos;
}

// The row ops that reduce a set of dims in one kernel (`over N,H,W`): sum, mean, max, min.
inline bool reduces_a_set(RowOp op) {
    return op == RowOp::kSum || op == RowOp::kMean || op == RowOp::kMax || op == RowOp::kMin;
}

// The dim of a rowwise kernel's input (args[0]) that it reduces or normalizes from, as an
// index into args[0].dims: `over` (its last occurrence), else for layer_norm / rms_norm as many
// trailing dims as the weight (args[1]) has, else the last dim. Norms cover every dim from there
// to the end (one row of their product). nullopt when `over` names no dim of the input or the
// input has no dims. (Inline: codegen reads the AST without linking the dsl stage.)
inline std::optional<size_t> row_axis(const Kernel& kernel) {
    if (kernel.args.empty() || kernel.args[0].dims.empty()) return std::nullopt;
    if (over_is_set(kernel)) return std::nullopt;  // a set: over_axes()
    const std::vector<std::string>& dims = kernel.args[0].dims;
    const size_t rank = dims.size();
    if (!kernel.over.empty()) {
        auto it = std::find(dims.rbegin(), dims.rend(), kernel.over);
        if (it == dims.rend()) return std::nullopt;
        return rank - 1 - static_cast<size_t>(it - dims.rbegin());
    }
    const bool norm = kernel.row_op == RowOp::kLayerNorm || kernel.row_op == RowOp::kRmsNorm;
    if (norm && kernel.args.size() > 1 && kernel.args[1].dims.size() <= rank)
        return rank - std::max<size_t>(1, kernel.args[1].dims.size());
    return rank - 1;
}

// The dims a rowwise kernel's `over` names, in the order written: one, or several joined by
// commas (`over N,H,W`: sum, mean, max or min over that set of dims in one kernel). Empty when
// `over` is unset.
inline std::vector<std::string> over_dims(const Kernel& kernel) {
    std::vector<std::string> dims;
    size_t from = 0;
    while (!kernel.over.empty()) {
        const size_t comma = kernel.over.find(',', from);
        dims.push_back(kernel.over.substr(from, comma - from));
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    return dims;
}


// For a set `over`: the axes of the input (args[0]) it names, ascending (each dim's last
// occurrence, as row_axis); nullopt when one names no dim of the input or two name the same.
inline std::optional<std::vector<size_t>> over_axes(const Kernel& kernel) {
    if (kernel.args.empty()) return std::nullopt;
    const std::vector<std::string>& dims = kernel.args[0].dims;
    std::vector<size_t> axes;
    for (const std::string& d : over_dims(kernel)) {
        auto it = std::find(dims.rbegin(), dims.rend(), d);
        if (it == dims.rend()) return std::nullopt;
        axes.push_back(dims.size() - 1 - static_cast<size_t>(it - dims.rbegin()));
    }
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
    return axes;
}

}  // namespace kforge::dsl
