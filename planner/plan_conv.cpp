// Convolutions in the fusion planner (planner/partition.h).
#include "codegen/lower_conv.h"
#include "planner/knobs.h"
#include "planner/partition.h"

namespace kforge::planner::detail {

using dsl::ChainOp;
using dsl::ChainOpKind;

// conv1d/2d/3d(x, w [, b]) and conv_transpose1d/2d/3d: one conv2d kernel (the implicit GEMM of
// M = N*P*Q, N = K, K = C*R*S; a transposed convolution as CUTLASS's dgrad, groups > 1 as its
// group fprop or, depthwise, its direct convolution: codegen/lower_conv_forms.cpp) whose chain
// adds the bias and absorbs the element-wise ops that follow as a gemm's epilogue does (operands
// [], [K] or the output's [N,K,P,Q]; one store, at the end). What CUTLASS's kernels cannot run
// is refused by name, with the constraint.
Status Planner::add_conv2d(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& w = tensor(op.inputs[1]);
    const Tensor& y = tensor(op.output);
    const bool transpose = is_conv_transpose(op.kind);  // CUTLASS's dgrad
    const int spatial = spatial_rank(op.kind);
    const bool one_d = spatial == 1;    // a conv2d kernel with H = 1
    const bool three_d = spatial == 3;  // a conv2d kernel on CUTLASS's 3-D fprop / dgrad
    if (spatial == 0) return not_expressible(op, "not a convolution");
    const int64_t groups = op.attrs.groups;
    const std::string name(to_string(op.kind));
    const size_t rank = static_cast<size_t>(spatial) + 2;
    if (x.shape.size() != rank || w.shape.size() != rank || y.shape.size() != rank)
        return not_expressible(op, "a conv2d kernel of a " + std::string(to_string(op.kind)) +
                                       " takes x and w of rank " + std::to_string(rank));
    const DType dt = dtype_of(x.name);
    if (dt != dtype_of(w.name) || !is_float_storage(dt)) {
        return not_expressible(op, "conv2d input " + x.name + " and weight " + w.name +
                                       " must share one dtype of f32, f16 or bf16");
    }
    // kforge's direct convolution runs it (f32; groups whose filters come in tiles of 8)
    const bool direct = dt == DType::kF32 && limits.cc_major >= 8 &&
                        (groups == 1 || (y.shape[1] / groups) % 8 == 0);
    if (groups != 1 && three_d && !transpose && !direct) {
        return not_expressible(op, "not supported: grouped conv3d (groups " +
                                       std::to_string(groups) + ") of " +
                                       std::string(to_string(dt)) + " operands or " +
                                       std::to_string(y.shape[1] / groups) + " filters a group: "
                                       "CUTLASS has no 3-D group fprop, and the direct "
                                       "convolution takes f32 groups of whole tiles of 8 filters");
    }
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kConv2d;
    kn.args = {ref(x.name), ref(w.name)};
    if (op.inputs.size() > 2) {
        ChainOp c = stmt(ChainOpKind::kAdd);
        c.tensor = ref(op.inputs[2]);
        kn.chain.push_back(c);
    }
    DType value = DType::kF32;
    if (auto st = absorb(kn, op.output, value, op); !st) return st;
    GemmShape s;
    s.dtype = dt;
    s.m = y.shape[0];
    s.n = y.shape[1];
    s.k = transpose ? w.shape[0] : w.shape[1];  // input channels per output (per group)
    int64_t taps = 1;
    for (size_t i = 2; i < rank; ++i) {
        s.m *= y.shape[i];
        s.k *= w.shape[i];
        taps *= w.shape[i];
    }
    const int64_t c = x.shape[1], k = y.shape[1];
    if (groups != 1 && !transpose && dt != DType::kF32 && (c / groups) % 2 != 0) {
        return not_expressible(op, "not supported: a grouped " + name + " of " +
                                       std::string(to_string(dt)) + " operands with " +
                                       std::to_string(c / groups) + " channel(s) per group "
                                       "(CUTLASS's cp.async reads at least 4 bytes, two " +
                                       std::string(to_string(dt)) + " channels, and its direct "
                                       "depthwise convolution is run here on f32 only)");
    }
    // the Hopper form (codegen/lower_conv_sm90.cpp): the dense 2-D / 1-D fprop whose 3xTF32
    // chunks take at least 4 channels (conv_sm90_split)
    const ConvSplit split = codegen::conv_sm90_split(x.shape[1], taps, seed_math(p.policy, dt), dt);
    const bool hopper = groups == 1 && !transpose && !three_d && split.cc > 0;
    ConvCandidateFacts facts;
    if (groups == 1 && !transpose && !three_d)
        facts = {x.shape[1], y.shape[1], hopper, split.chunks};
    std::vector<dsl::GemmConfig> candidates =
        groups == 1 || transpose ? conv2d_candidates(s, p.policy, limits, facts)  // dgrad: dense
        : three_d                ? std::vector<dsl::GemmConfig>{}  // the direct one only
                    : grouped_conv_candidates(s, groups, c, k, taps, p.policy, limits);
    // a conv1d's direct depthwise tile is one row: CUTLASS's threads cover it on tile N 16 only
    // (codegen/lower_conv_forms.cpp direct_warp_m)
    if (one_d && groups != 1 && !transpose)
        for (dsl::GemmConfig& cfg : candidates)
            if (cfg.math == dsl::MathMode::kF32Simt) cfg.tile_n = 16;
    if (groups != 1 && !transpose && !three_d && candidates.empty()) {
        // filters per group that CUTLASS's group fprop cannot tile (3 groups of 40): one dense
        // fprop on a block-diagonal filter (codegen/lower_conv.h group_fprop_tiles), the dense
        // conv's tiles where tile N does not tile the group either, at groups times the MMA work
        GemmShape dense = s;
        dense.k = c * taps;
        for (const dsl::GemmConfig& cfg : conv2d_candidates(dense, p.policy, limits))
            if (!codegen::group_fprop_tiles(k / groups, cfg.tile_n)) candidates.push_back(cfg);
    }
    // kforge's direct convolution (exact f32 FMA, one launch, no layout passes; transposed too,
    // over the zero-inserted input; groups whose filters come in tiles of 8): first for filters
    // of few products an output (kConvDirectMaxProducts), last otherwise (the search still
    // tries it)
    if (direct && (opt.conv_direct || candidates.empty())) {
        const ConvDirectFacts d{c / groups, k / groups, groups, c / groups * taps};
        const std::vector<dsl::GemmConfig> configs = conv_direct_candidates(d);
        candidates.insert(d.products <= kConvDirectMaxProducts ? candidates.begin()
                                                               : candidates.end(),
                          configs.begin(), configs.end());
    }
    if (groups != 1 && !transpose && candidates.empty()) {
        return not_expressible(op, "not supported: " + name + " with " +
                                       std::to_string(k / groups) + " filters per group "
                                       "(CUTLASS's group fprop tiles neither them nor, as one "
                                       "dense fprop on a block-diagonal filter, any dense tile)");
    }
    PlannedKernel pk{{}, op.json_path + " " + name};
    for (const auto& cfg : candidates) {
        kn.gemm = cfg;
        pk.candidates.push_back(kn);
    }
    kernels.push_back(std::move(pk));
    return Ok{};
}

}  // namespace kforge::planner::detail
