#include "perfmodel/sim_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "codegen/gemm_spec.h"
#include "codegen/gemm_stage.h"
#include "codegen/lower_conv.h"
#include "dsl/conv_direct.h"
#include "dsl/math_policy.h"
#include "perfmodel/attention_time.h"
#include "perfmodel/chain_cost.h"
#include "perfmodel/rnn_time.h"
#include "problem/pool.h"
#include "sol/bounds.h"
#include "sol/device.h"

namespace kforge::perfmodel {
namespace {

struct Shape {
    std::vector<int64_t> dims;
    DType dtype = DType::kF32;
    double numel() const {
        double n = 1;
        for (int64_t d : dims) n *= static_cast<double>(d);
        return n;
    }
    double bytes() const { return numel() * dtype_bytes(dtype); }
};

Expected<Shape> shape_of(const dsl::TensorRef& ref, const Problem& problem) {
    Shape s;
    if (const Tensor* t = problem.find_tensor(ref.name)) s.dtype = t->dtype;
    for (const std::string& d : ref.dims) {
        auto it = problem.dims.find(d);
        if (it != problem.dims.end()) {
            s.dims.push_back(it->second);
            continue;
        }
        char* end = nullptr;
        long long v = std::strtoll(d.c_str(), &end, 10);
        if (d.empty() || *end != '\0' || v <= 0)
            return make_error(ref.name, "unknown dim '" + d + "' in the simulated time model");
        s.dims.push_back(v);
    }
    return s;
}

double vec_efficiency(int vec) {
    if (vec <= 1) return 0.55;
    if (vec == 2) return 0.72;
    if (vec < 8) return 0.86;
    return 0.9;
}

// CUTLASS 2.x mma.sync (schedule multistage) on a device with wgmma (sm_90): measured on the
// H200, 3xTF32 multistage ran at 0.6x of the rate cuBLAS's wgmma TF32 reaches per useful FLOP
// (gemm_f32_4096: 1.89 ms for 3 x 2 * 4096^3 FLOPs vs cuBLAS TF32 376 us for one).
constexpr double kMultistageOnWgmmaEfficiency = 0.6;

bool has_wgmma(const Ceilings& ceil) {
    auto spec = find_device(ceil.device);
    return spec.ok() && spec->cc_major >= 9;
}

double stage_efficiency(int stages) {
    if (stages == 0 || stages >= 4) return 0.93;
    if (stages == 3) return 0.88;
    if (stages == 2) return 0.75;
    return 0.55;
}

// The math the kernel runs (dsl/math_policy.h: what the lowering runs for `math auto`, e.g.
// 3xTF32 for an fp32_strict f32 gemm, not f32 SIMT); on a math the operands cannot feed, the
// mode as written.
dsl::MathMode gemm_math(const dsl::GemmConfig& g, PrecisionPolicy policy, DType operand) {
    return dsl::resolve_math(policy, operand, g.math).math;
}

ComputeUnit gemm_unit(dsl::MathMode math, PrecisionPolicy policy, DType operand) {
    switch (math) {
        case dsl::MathMode::kF32Simt: return ComputeUnit::kFp32Simt;
        case dsl::MathMode::kTf32:
        case dsl::MathMode::kTf32x3: return ComputeUnit::kTf32Tensor;
        case dsl::MathMode::kBf16: return ComputeUnit::kBf16Tensor;
        case dsl::MathMode::kF16: return ComputeUnit::kFp16Tensor;
        case dsl::MathMode::kAuto: break;
    }
    return matrix_unit(policy, operand);
}

// Bytes of the chain's tensors: reads (add/mul/... with a tensor) and writes (store, reduce).
Expected<std::pair<double, double>> chain_bytes(const dsl::Kernel& k, const Problem& problem) {
    double read = 0, written = 0;
    // A rowwise prologue's operands are read like the chain's (a prologue never stores).
    for (const std::vector<dsl::ChainOp>* ops : {&k.pre, &k.chain})
        for (const dsl::ChainOp& op : *ops) {
            if (!op.tensor) continue;
            auto s = shape_of(*op.tensor, problem);
            if (!s) return s.error();
            bool writes =
                op.kind == dsl::ChainOpKind::kStore || op.kind == dsl::ChainOpKind::kReduce;
            (writes ? written : read) += s->bytes();
        }
    return std::make_pair(read, written);
}

// The SIMT and SFU busy times of `ins` on `ceil` (one instruction = one FMA slot = 2 FLOPs of
// the fp32 peak; MUFU at the SFU rate), as sol/bounds.cpp prices the same instructions.
struct PipeTimes {
    double simt_s = 0, sfu_s = 0;
};
PipeTimes pipe_times(const OpInstructions& ins, const Ceilings& ceil) {
    return PipeTimes{2.0 * ins.simt / ceil.peak(ComputeUnit::kFp32Simt),
                     ceil.sfu_ops_per_s > 0 ? ins.sfu / ceil.sfu_ops_per_s : 0.0};
}

// Elements of the value a chain runs on: its first store's (0 when it stores nothing).
double value_elements(const dsl::Kernel& k, const Problem& problem) {
    for (const dsl::ChainOp& op : k.chain)
        if (op.kind == dsl::ChainOpKind::kStore && op.tensor)
            if (auto s = shape_of(*op.tensor, problem)) return s->numel();
    return 0;
}

Expected<SimKernelTime> gemm_time(const dsl::Kernel& k, const Problem& problem,
                                  const Ceilings& ceil, int sm_count) {
    SimKernelTime t{k.name};
    if (k.args.size() < 2) return make_error(k.name, "gemm kernel without two operands");
    auto a = shape_of(k.args[0], problem);
    if (!a) return a.error();
    auto b = shape_of(k.args[1], problem);
    if (!b) return b.error();
    const dsl::TensorRef* store = nullptr;
    for (const dsl::ChainOp& op : k.chain)
        if (op.kind == dsl::ChainOpKind::kStore && op.tensor) {
            store = &*op.tensor;
            break;
        }
    if (!store) return make_error(k.name, "gemm kernel without a store");
    auto out = shape_of(*store, problem);
    if (!out) return out.error();
    if (out->dims.size() < 2 || a->dims.empty()) return make_error(k.name, "gemm rank < 2");
    double n = static_cast<double>(out->dims.back());
    double m = static_cast<double>(out->dims[out->dims.size() - 2]);
    double batch = out->numel() / (m * n);
    double kk = a->numel() / (batch * m);
    // K from A's matrix dims, which A without batch dims of its own needs ([M,K] x [B,K,N])
    const auto& ra = k.args[0].dims;
    const auto& rb = k.args[1].dims;
    if (ra.size() >= 2 && rb.size() >= 2 && store->dims.size() >= 2)
        if (const auto layout = codegen::resolve_gemm_layout(
                {ra.end() - 2, ra.end()}, {rb.end() - 2, rb.end()},
                store->dims[store->dims.size() - 2], store->dims.back()))
            kk = static_cast<double>(a->dims[a->dims.size() - (layout->a_row_major ? 1 : 2)]);
    const dsl::GemmConfig& g = k.gemm;
    double tiles = std::ceil(m / g.tile_m) * std::ceil(n / g.tile_n) * batch;
    double waves = std::ceil(tiles / std::max(1, sm_count));
    double quant = tiles / (waves * std::max(1, sm_count));
    double tile_eff = std::pow(std::min(1.0, double(g.tile_m) * g.tile_n / (128.0 * 128.0)), 0.25);
    const dsl::MathMode math = gemm_math(g, problem.policy, a->dtype);
    ComputeUnit unit = gemm_unit(math, problem.policy, a->dtype);
    double peak = ceil.peak(unit);
    if (peak <= 0) peak = ceil.peak(ComputeUnit::kFp32Simt);
    if (math == dsl::MathMode::kTf32x3) peak /= 3;
    if (g.schedule == dsl::Schedule::kMultistage && unit != ComputeUnit::kFp32Simt &&
        has_wgmma(ceil))
        peak *= kMultistageOnWgmmaEfficiency;
    t.flops = 2.0 * batch * m * n * kk;
    double compute_s = t.flops / (peak * quant * stage_efficiency(g.stages) * tile_eff);
    // The epilogue's statements per output element (sol/op_cost.h's table): on the SIMT and SFU
    // pipes beside the tensor cores, on the same pipe as an f32 SIMT product.
    const PipeTimes epi = pipe_times(
        kernel_instructions(k, problem, a->numel(), out->numel(), ceil.arch), ceil);
    compute_s = unit == ComputeUnit::kFp32Simt ? compute_s + epi.simt_s
                                               : std::max(compute_s, epi.simt_s);
    compute_s = std::max(compute_s, epi.sfu_s);
    auto cb = chain_bytes(k, problem);
    if (!cb) return cb.error();
    // Operands staged K-major by a pre-kernel (codegen/gemm_stage.h): it reads the operand and
    // writes k_parts copies, and the GEMM then reads the copies; its own launch time and
    // traffic add to the kernel's (a separate launch: nothing overlaps it).
    const codegen::OperandStaging st =
        codegen::plan_operand_staging(k, problem.policy, a->dtype);
    const double a_gemm = a->bytes() * (st.stage_a ? st.k_parts : 1);
    const double b_gemm = b->bytes() * (st.stage_b ? st.k_parts : 1);
    double stage_bytes = 0, stage_launches = 0;
    for (auto [staged, bytes] : {std::pair{st.stage_a, a->bytes()}, {st.stage_b, b->bytes()}}) {
        if (!staged) continue;
        stage_bytes += bytes * (1 + st.k_parts);
        stage_launches += 1;
    }
    t.bytes = a_gemm + b_gemm + cb->first + cb->second;
    if (g.split_k > 1) t.bytes += 2.0 * g.split_k * out->numel() * 4;  // f32 partials
    // Fewer CTAs than SMs cannot keep DRAM busy: a matvec's [2048,65536] x [65536,1] as 32
    // tiles of 64 rows ran at 10% of its memory bound on the H200 (1.236 ms).
    const double ctas = tiles * std::max(1, g.split_k);
    double memory_s = t.bytes / (ceil.dram_bytes_per_s *
                                 std::min(1.0, ctas / std::max(1, sm_count)));
    t.compute_bound = compute_s >= memory_s;
    t.time_ns = std::max(compute_s, memory_s) * 1e9;
    t.time_ns += stage_bytes / ceil.dram_bytes_per_s * 1e9 + stage_launches * kSimLaunchOverheadNs;
    t.bytes += stage_bytes;
    return t;
}

// schedule direct (codegen/lower_conv_direct.cpp, kernels/conv_direct.cuh): one launch, the
// padded tiles' products as f32 FMAs on the CUDA cores (kConvDirectFmaShare of the issue slots:
// each tap of a thread's 8 x 4 outputs also reads 4 inputs and 2 vectors of weights from shared
// memory), blocks in waves of the resident ones, and DRAM for x, w, y and the chain's operands
// once each (the patches' halo reloads hit L2). Not yet fitted to GPU measurements.
constexpr double kConvDirectFmaShare = 0.75;
Expected<SimKernelTime> conv_direct_time(const dsl::Kernel& k, const Op& conv,
                                         const Problem& problem, const Ceilings& ceil,
                                         int sm_count) {
    SimKernelTime t{k.name};
    auto shape = dsl::conv_direct_shape(conv, problem);
    if (!shape) return make_error(k.name, shape.error().message);
    auto tiling = dsl::conv_direct_tiling(*shape, k.gemm.tile_m, k.gemm.tile_n, k.gemm.tile_k,
                                          k.gemm.stages, 227 * 1024);
    if (!tiling) return make_error(k.name, tiling.error().message);
    const dsl::ConvDirectShape& g = *shape;
    const dsl::ConvDirectTiling& d = *tiling;
    const double blocks = double(d.grid[0]) * double(d.grid[1]) * double(d.grid[2]);
    // resident blocks an SM: threads, shared memory, registers (about 128 a thread)
    const double resident = std::max(
        1.0, std::min({std::floor(2048.0 / d.threads), std::floor(65536.0 / (d.threads * 128.0)),
                       std::floor(228.0 * 1024 / double(d.smem_bytes + 1024))}));
    const double slots = resident * std::max(1, sm_count);
    const double waves = std::ceil(blocks / slots);
    const double quant = blocks / (waves * slots);
    const double positions = double(d.grid[0]) * d.tile_p * d.tile_q * double(d.grid[2]);
    const double filters = double(d.grid[1]) * d.tile_n;
    const double steps = std::ceil(double(g.c / g.groups) / d.tile_c);
    t.flops = 2.0 * positions * filters * steps * d.tile_c * double(g.t * g.r * g.s);
    double compute_s =
        t.flops / (ceil.peak(ComputeUnit::kFp32Simt) * kConvDirectFmaShare * quant);
    const Tensor* x = problem.find_tensor(conv.inputs[0]);
    const Tensor* w = problem.find_tensor(conv.inputs[1]);
    const Tensor* y = problem.find_tensor(conv.output);
    if (!x || !w || !y) return make_error(k.name, "conv operands not in the problem");
    const PipeTimes epi = pipe_times(
        kernel_instructions(k, problem, static_cast<double>(y->numel()),
                            static_cast<double>(y->numel()), ceil.arch),
        ceil);
    compute_s = std::max(compute_s + epi.simt_s, epi.sfu_s);
    auto cb = chain_bytes(k, problem);
    if (!cb) return cb.error();
    t.bytes = static_cast<double>(x->bytes() + w->bytes()) + cb->first + cb->second;
    const double memory_s =
        t.bytes / (ceil.dram_bytes_per_s * std::min(1.0, blocks / std::max(1, sm_count)));
    t.compute_bound = compute_s >= memory_s;
    t.time_ns = std::max(compute_s, memory_s) * 1e9;
    return t;
}

// conv2d (codegen/lower_conv.cpp's four launches): x NCHW -> xs NHWC with the channels padded to
// Cp, w -> ws [Kp, R, S, Cp], the CUTLASS 2.x implicit-GEMM fprop (M = N*P*Q, N = Kp,
// K = R*S*Cp: tiles, waves, stages and tile efficiency as a gemm's, mma.sync multistage) into an
// f32 workspace ys [N, P, Q, Kp], and ys -> y NCHW through the chain. The staging and epilogue
// launches are DRAM streams; each adds a launch overhead (model_time adds the fourth).
Expected<SimKernelTime> conv2d_time(const dsl::Kernel& k, const Problem& problem,
                                    const Ceilings& ceil, int sm_count) {
    SimKernelTime t{k.name};
    if (k.args.size() < 2) return make_error(k.name, "conv2d kernel without input and weight");
    const Op* conv = codegen::find_conv_op(k, problem);
    if (!conv)
        return make_error(k.name, "no conv2d op of the problem reads " + k.args[0].name +
                                      " and " + k.args[1].name);
    if (k.gemm.schedule == dsl::Schedule::kDirect)
        return conv_direct_time(k, *conv, problem, ceil, sm_count);
    const Tensor* x = problem.find_tensor(conv->inputs[0]);
    const Tensor* w = problem.find_tensor(conv->inputs[1]);
    const Tensor* y = problem.find_tensor(conv->output);
    const size_t rank = static_cast<size_t>(spatial_rank(conv->kind)) + 2;
    if (!x || !w || !y || x->shape.size() != rank || w->shape.size() != rank ||
        y->shape.size() != rank)
        return make_error(k.name, "conv operands are not " + std::to_string(rank) + "-D");
    auto spatial = [](const Tensor* t) {  // the product of the spatial dims
        int64_t v = 1;
        for (size_t i = 2; i < t->shape.size(); ++i) v *= t->shape[i];
        return v;
    };
    const double elem = dtype_bytes(x->dtype);
    const int64_t align = elem >= 4 ? 4 : 8;  // 16-byte cp.async rows
    auto up = [&](int64_t v) { return static_cast<double>((v + align - 1) / align * align); };
    const double n = static_cast<double>(x->shape[0]);
    double cp = up(x->shape[1]), kp = up(y->shape[1]);
    const double rs = static_cast<double>(spatial(w));
    const double m = n * static_cast<double>(spatial(y));
    // K (GEMM) per output: C*R*S; grouped: C/groups*R*S (unpadded, codegen/lower_conv_forms.cpp),
    // times the groups a CTA walks (tile N / (K / groups)), depthwise on SIMT FMA; transposed:
    // dgrad reads every input position once per tap, N*H*W*C*K*R*S in all.
    const int64_t groups = conv->attrs.groups;
    double gemm_k = cp * rs;
    const bool transpose = is_conv_transpose(conv->kind);  // groups: a block-diagonal filter
    // a grouped fprop whose filters per group CUTLASS's group fprop cannot tile at this tile N
    // runs dense on a block-diagonal filter (codegen/lower_conv.h group_fprop_tiles): C*R*S
    const bool block_diagonal = groups > 1 && !transpose &&
                                k.gemm.math != dsl::MathMode::kF32Simt &&
                                !codegen::group_fprop_tiles(y->shape[1] / groups, k.gemm.tile_n);
    if (groups > 1 && !transpose && !block_diagonal) {
        cp = static_cast<double>(x->shape[1]), kp = static_cast<double>(y->shape[1]);
        const double kg = kp / groups;
        gemm_k = cp / groups * rs * (k.gemm.math == dsl::MathMode::kF32Simt
                                         ? 1.0 : std::max(1.0, k.gemm.tile_n / kg));
    } else if (transpose) {
        gemm_k = cp * rs * static_cast<double>(spatial(x)) / static_cast<double>(spatial(y));
        bool dilated = false;  // stride with dilation: zeros inserted, stride^dims the taps
        double strides = 1;
        for (size_t i = 0; i < conv->attrs.stride.size(); ++i)
            strides *= conv->attrs.stride[i], dilated = dilated || conv->attrs.dilation[i] > 1;
        if (dilated) gemm_k *= strides;
    }
    // schedule tma_ws (codegen/lower_conv_sm90.cpp): wgmma without the multistage derate, the
    // staged channels as conv_sm90_split chunks them (3xTF32: 3 parts of cc channels, each tap's
    // run in whole tile-K steps), and each chunk after the first reading the f32 sum back
    const bool sm90 = k.gemm.schedule == dsl::Schedule::kTmaWarpSpecialized;
    // the dense multistage fprop walks C in tile-K steps per filter position (CUTLASS's
    // optimized iterator: C = 4 under tile K 32 multiplies 28 zero lanes a step), the
    // few-channels iterator the flattened R*S*C (kb_09's fprop, 53 us at C = 3, 12% warps)
    if (!sm90 && groups == 1 && !transpose && k.gemm.math != dsl::MathMode::kF32Simt &&
        k.gemm.tile_k > 0) {
        const double tk = k.gemm.tile_k;
        gemm_k = k.gemm.iterator == dsl::ConvIterator::kFewChannels
                     ? std::ceil(cp * rs / tk) * tk
                     : std::ceil(cp / tk) * tk * rs;
    }
    const dsl::MathMode math = gemm_math(k.gemm, problem.policy, x->dtype);
    double chunks = 1, staged_channels = cp;
    if (sm90 && groups == 1 && !transpose) {
        const int parts = codegen::conv_sm90_parts(math);
        const ConvSplit sp =
            codegen::conv_sm90_split(x->shape[1], static_cast<int64_t>(rs), math, x->dtype);
        if (sp.cc > 0) {
            const double tk = 128.0 / (elem >= 4 ? 4.0 : elem);
            chunks = static_cast<double>(sp.chunks);
            staged_channels = chunks * parts * static_cast<double>(sp.cc);
            gemm_k = chunks * std::ceil(parts * static_cast<double>(sp.cc) / tk) * tk / parts * rs;
        }
    }
    const double xs_bytes = n * static_cast<double>(spatial(x)) * staged_channels * elem,
                 ws_bytes = kp * rs * staged_channels /
                            static_cast<double>(transpose || block_diagonal ? 1 : groups) * elem;
    const double ys_bytes = m * kp * 4.0;

    const dsl::GemmConfig& g = k.gemm;
    const double tiles = std::ceil(m / g.tile_m) * std::ceil(kp / g.tile_n);
    const double waves = std::ceil(tiles / std::max(1, sm_count));
    const double quant = tiles / (waves * std::max(1, sm_count));
    const double tile_eff =
        std::pow(std::min(1.0, double(g.tile_m) * g.tile_n / (128.0 * 128.0)), 0.25);
    const ComputeUnit unit = gemm_unit(math, problem.policy, x->dtype);
    double peak = ceil.peak(unit);
    if (peak <= 0) peak = ceil.peak(ComputeUnit::kFp32Simt);
    if (math == dsl::MathMode::kTf32x3) peak /= 3;
    if (unit != ComputeUnit::kFp32Simt && has_wgmma(ceil) && !sm90)
        peak *= kMultistageOnWgmmaEfficiency;
    // what the padded implicit GEMM executes: whole tiles of filters (K = 6 in a tile N of 64
    // computes 64)
    t.flops = 2.0 * m * std::ceil(kp / std::max(1, g.tile_n)) * std::max(1, g.tile_n) * gemm_k;
    const double compute_s = t.flops / (peak * quant * stage_efficiency(g.stages) * tile_eff);
    const double main_bytes = xs_bytes + ws_bytes + ys_bytes * (2 * chunks - 1);
    const double memory_s =
        main_bytes / (ceil.dram_bytes_per_s * std::min(1.0, tiles / std::max(1, sm_count)));
    t.compute_bound = compute_s >= memory_s;

    auto cb = chain_bytes(k, problem);
    if (!cb) return cb.error();
    const double stage_bytes = static_cast<double>(x->bytes()) + xs_bytes +
                               static_cast<double>(w->bytes()) + ws_bytes;
    const double epilogue_bytes = ys_bytes + cb->first + cb->second;
    // the epilogue launch: a DRAM stream, or its chain's instructions where they take longer
    const PipeTimes epi = pipe_times(
        kernel_instructions(k, problem, m * kp, static_cast<double>(y->numel()), ceil.arch),
        ceil);
    const double epilogue_s =
        std::max({ys_bytes / ceil.dram_bytes_per_s + (cb->first + cb->second) /
                                                          ceil.dram_bytes_per_s,
                  epi.simt_s, epi.sfu_s});
    t.bytes = stage_bytes + main_bytes + epilogue_bytes;
    t.time_ns = (std::max(compute_s, memory_s) + stage_bytes / ceil.dram_bytes_per_s +
                 epilogue_s) * 1e9 +
                3 * kSimLaunchOverheadNs;
    return t;
}

Expected<SimKernelTime> streaming_time(const dsl::Kernel& k, const Problem& problem,
                                       const Ceilings& ceil) {
    SimKernelTime t{k.name};
    double read = 0, numel = 0, first_numel = 0;
    for (const dsl::TensorRef& arg : k.args) {
        auto s = shape_of(arg, problem);
        if (!s) return s.error();
        read += s->bytes();
        numel = std::max(numel, s->numel());
        if (&arg == &k.args.front()) first_numel = s->numel();
    }
    // passes 2 re-reads the row, unless smem_stage holds it on chip (most of it, at worst);
    // sum / mean / max / min / prod sweep it once whatever passes says (kernels/reduce_row.cuh)
    const bool one_sweep = k.row_op == dsl::RowOp::kSum || k.row_op == dsl::RowOp::kMean ||
                           k.row_op == dsl::RowOp::kMax || k.row_op == dsl::RowOp::kMin ||
                           k.row_op == dsl::RowOp::kProd;
    if (k.kind == dsl::KernelKind::kRowwise && k.rowwise.passes > 1 && !k.rowwise.smem_stage &&
        !one_sweep && !k.args.empty())
        read *= 1.0 + 1.0 / std::max<double>(1.0, double(k.args.size()));
    auto cb = chain_bytes(k, problem);
    if (!cb) return cb.error();
    t.bytes = read + cb->first + cb->second;
    int vec = k.kind == dsl::KernelKind::kMap    ? k.map.vec
              : k.kind == dsl::KernelKind::kCopy ? k.copy.vec
                                                 : k.rowwise.vec;
    t.flops = numel * (4.0 + static_cast<double>(k.chain.size() + k.pre.size()));
    double memory_s = t.bytes / (ceil.dram_bytes_per_s * vec_efficiency(vec));
    // the busier of the SIMT pipe (the nominal FLOPs or the statements' instructions from
    // sol/op_cost.h's table, whichever is more, as the SOL bound counts an op) and the SFU
    const double out_numel = value_elements(k, problem);
    const PipeTimes pipes = pipe_times(
        kernel_instructions(k, problem, first_numel, out_numel > 0 ? out_numel : numel,
                            ceil.arch),
        ceil);
    double compute_s = std::max({t.flops / ceil.peak(ComputeUnit::kFp32Simt), pipes.simt_s,
                                 pipes.sfu_s});
    t.compute_bound = compute_s > memory_s;
    t.time_ns = std::max(memory_s, compute_s) * 1e9;
    return t;
}

// A pool kernel (kernels/pool.cuh): x read once (overlapping windows hit L1/L2) plus the chain's
// bytes, at the efficiency of scalar loads that neighbouring threads coalesce (0.8; 0.86 where a
// thread computes 2+ neighbouring outputs that share input rows; a window of 64+ taps read by
// one thread streams its own region, uncoalesced: 0.3 unless lanes split it); one compare / add
// per window tap per output on the SIMT pipe, plus the chain's instructions.
Expected<SimKernelTime> pool_time(const dsl::Kernel& k, const Problem& problem,
                                  const Ceilings& ceil) {
    SimKernelTime t{k.name};
    if (k.args.empty()) return make_error(k.name, "pool kernel without an input");
    const Op* op = nullptr;
    for (const Op& o : problem.ops)
        if (o.kind == k.pool_op && !o.inputs.empty() && o.inputs[0] == k.args[0].name && !op)
            op = &o;
    if (!op) return make_error(k.name, "no pool op of the problem reads " + k.args[0].name);
    const Tensor* x = problem.find_tensor(op->inputs[0]);
    const Tensor* y = problem.find_tensor(op->output);
    if (!x || !y) return make_error(k.name, "pool operands missing");
    auto cb = chain_bytes(k, problem);
    if (!cb) return cb.error();
    const double taps = static_cast<double>(
        pool_window_size(op->kind, pool_axes(*op, x->shape, y->shape)));
    const double outputs = static_cast<double>(y->numel());
    t.bytes = static_cast<double>(x->bytes()) + cb->first + cb->second;
    t.flops = outputs * (taps + static_cast<double>(k.chain.size()));
    // max / avg with lanes 1 run kernels/pool.cuh's tiles (compile-time windows, loads shared
    // across a tile): vector loads near a copy's rate; else a window of 64+ taps read by fewer
    // than 8 lanes streams a thread's own region (0.3)
    const bool tiled = (op->kind == OpKind::kMaxPool || op->kind == OpKind::kAvgPool) &&
                       k.pool.lanes == 1 && taps <= 256;
    const double eff = tiled ? (k.pool.vec > 1 ? 0.86 : 0.8)
                       : taps >= 64 && k.pool.lanes < 8 ? 0.3
                       : k.pool.items > 1              ? 0.86
                                                       : 0.8;
    const double memory_s = t.bytes / (ceil.dram_bytes_per_s * eff);
    const PipeTimes pipes = pipe_times(
        kernel_instructions(k, problem, outputs, outputs, ceil.arch), ceil);
    const double compute_s = std::max({t.flops / ceil.peak(ComputeUnit::kFp32Simt),
                                       pipes.simt_s, pipes.sfu_s});
    t.compute_bound = compute_s > memory_s;
    t.time_ns = std::max(memory_s, compute_s) * 1e9;
    return t;
}

}  // namespace

Expected<SimEstimate> model_time(const Problem& problem, const dsl::Program& program,
                                 const Ceilings& ceilings, int sm_count) {
    if (ceilings.dram_bytes_per_s <= 0 || ceilings.peak(ComputeUnit::kFp32Simt) <= 0)
        return make_error(ceilings.device, "the simulated model needs bandwidth and fp32 peak");
    SimEstimate e;
    for (const dsl::Kernel& k : program.kernels) {
        auto t = k.kind == dsl::KernelKind::kGemm ? gemm_time(k, problem, ceilings, sm_count)
                 : k.kind == dsl::KernelKind::kConv2d
                     ? conv2d_time(k, problem, ceilings, sm_count)
                 : k.kind == dsl::KernelKind::kPool ? pool_time(k, problem, ceilings)
                 : k.kind == dsl::KernelKind::kAttention  // perfmodel/attention_time.cpp
                     ? attention_time(k, problem, ceilings, sm_count)
                 : k.kind == dsl::KernelKind::kRnn ? rnn_time(k, problem, ceilings)  // rnn_time.cpp
                                                    : streaming_time(k, problem, ceilings);
        if (!t) return t.error();
        t->kind = k.kind;
        t->time_ns += kSimLaunchOverheadNs;
        e.time_ns += t->time_ns;
        e.kernels.push_back(*t);
    }
    // The speed of light of the same problem on the same ceilings and arch is the model's floor
    // (see sim_model.h).
    if (auto bounds = compute_bounds(problem, ceilings); bounds.ok()) {
        e.time_sol_ns = bounds->time_fused_s * 1e9;
        e.time_kernels_ns = e.time_ns;
        if (e.time_ns < e.time_sol_ns) {
            e.time_ns = e.time_sol_ns;
            e.floored_at_sol = true;
        }
    } else {
        e.time_kernels_ns = e.time_ns;
    }
    return e;
}

double sim_noise_factor(const std::string& key, int64_t index) {
    uint64_t h = 1469598103934665603ULL;
    for (char c : key) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    h ^= static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ULL;
    double sum = 0;  // Irwin-Hall of 4 uniforms: mean 2, sd ~0.577
    for (int i = 0; i < 4; ++i) {
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        sum += static_cast<double>(h >> 11) / 9007199254740992.0;
    }
    return 1.0 + 0.01 * (sum - 2.0) / 0.577;
}

}  // namespace kforge::perfmodel
