// lower_conv2d: see lower_conv.h.
#include "codegen/lower_conv.h"

#include <algorithm>
#include <sstream>

#include "codegen/chain.h"
#include "codegen/gemm_emit_common.h"
#include "codegen/gemm_spec.h"
#include "codegen/kernel_entry.h"
#include "codegen/lower_conv_forms.h"
#include "dsl/math_policy.h"

namespace kforge::codegen {
namespace {

constexpr int kTile = 32;      // kernels/conv_layout.cuh kConvTile
constexpr int kTileRows = 8;   // kConvTileRows
constexpr int64_t kMaxGridYZ = 65535;

Error unsupported(const dsl::Kernel& k, const std::string& what) {
    return make_error(k.name, "not supported by the conv2d lowering: " + what);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }


// The kernel's math on its operands (dsl/math_policy.h), or why the lowering cannot run it.
Expected<dsl::MathMode> conv_math(const dsl::Kernel& k, DType operand, PrecisionPolicy p) {
    const dsl::ResolvedMath r = dsl::resolve_math(p, operand, k.gemm.math);
    const std::string m(math_name(r.math));
    switch (r.refusal) {
        case dsl::MathRefusal::kNone: return r.math;
        case dsl::MathRefusal::kOperandsDiffer:
        case dsl::MathRefusal::kOperandDtype:
            return unsupported(k, "operands of dtype " + std::string(to_string(operand)));
        case dsl::MathRefusal::kNeedsItsDtype:
            return unsupported(k, "math " + m + " on operands stored as " +
                                      std::string(to_string(operand)) +
                                      " (the staging copies operands, it does not round them)");
        case dsl::MathRefusal::kNotForHalf:
            return unsupported(k, "math " + m + " on " + std::string(to_string(operand)) +
                                      " operands");
    }
    return unsupported(k, "math " + m);
}


Status check_tile(const dsl::Kernel& kernel, dsl::MathMode math) {
    const dsl::GemmConfig& c = kernel.gemm;
    const bool sm90 = c.schedule == dsl::Schedule::kTmaWarpSpecialized;
    if (c.schedule != dsl::Schedule::kMultistage && !sm90)
        return unsupported(kernel, "schedule " + std::string(dsl::to_string(c.schedule)) +
                                       " (conv2d runs CUTLASS's sm80 multistage kernel, schedule "
                                       "multistage, or its sm90 one, schedule tma_ws)");
    if (c.split_k > 1) return unsupported(kernel, "splitk > 1");
    if (c.cluster_m * c.cluster_n > 1) return unsupported(kernel, "a cluster");
    if (c.acc != DType::kF32)
        return unsupported(kernel, "acc " + std::string(to_string(c.acc)) +
                                       " (the accumulators are staged as f32)");
    if (sm90) return Ok{};  // its tiles: check_conv_sm90
    if (c.tile_m % 2 != 0 || c.tile_n % 2 != 0 || c.tile_m / 2 < 16 || c.tile_n / 2 < 8)
        return unsupported(kernel, "tile " + std::to_string(c.tile_m) + "x" +
                                       std::to_string(c.tile_n) + " (2x2 warps of at least 16x8)");
    if (c.stages != 0 && (c.stages < 2 || c.stages > 6))
        return unsupported(kernel, "stages " + std::to_string(c.stages) + " (2..6)");
    if (math == dsl::MathMode::kF32Simt) {
        // CUTLASS's sm80 SIMT mainloop (as lower_gemm_sm80_simt): 4x8 lanes per warp, and the
        // K-major operands' shared-memory transpose padded by tile K / 32 elements.
        const int warp_m = c.tile_m / 2, warp_n = c.tile_n / 2;
        if (warp_m % 4 != 0 || warp_n % 8 != 0)
            return unsupported(kernel, "math f32_simt with tile " + std::to_string(c.tile_m) +
                                           "x" + std::to_string(c.tile_n) +
                                           " (tile M a multiple of 8, tile N of 16)");
        const int lane_m = std::min(4, warp_m / 4), lane_n = std::min(4, warp_n / 8);
        const int pad = c.tile_k / 32;
        if (pad % lane_m != 0 || pad % lane_n != 0)
            return unsupported(kernel, "math f32_simt with tile K " + std::to_string(c.tile_k) +
                                           " (CUTLASS's SIMT mainloop pads its shared-memory "
                                           "transpose by tile K / 32 elements, a multiple of the "
                                           "lane tile): use tile K 8 or 16");
    }
    return Ok{};
}

}  // namespace

const Op* find_conv_op(const dsl::Kernel& kernel, const Problem& problem) {
    for (const Op& op : problem.ops)
        if ((op.kind == OpKind::kConv2d || op.kind == OpKind::kConv1d ||
             op.kind == OpKind::kConv3d || is_conv_transpose(op.kind)) && op.inputs.size() >= 2 &&
            op.inputs[0] == kernel.args[0].name && op.inputs[1] == kernel.args[1].name)
            return &op;
    return nullptr;
}

int conv_channel_multiple(DType staged) { return 16 / dtype_bytes(staged); }

std::string conv_buffer_name(const std::string& kernel, const char* what) {
    return kernel + "_conv_" + what;
}

std::string conv_dim_expr(const Problem& problem, const std::string& name, int64_t value) {
    int i = 0;
    for (const auto& [n, v] : problem.dims) {
        (void)v;
        if (n == name) return "in->dims[" + std::to_string(i) + "]";
        ++i;
    }
    return std::to_string(value);
}

void add_conv_layout_launch(KernelCode& code, const dsl::Kernel& kernel, const std::string& symbol,
                            std::array<unsigned, 3> grid, std::vector<KernelParam> params,
                            const std::string& buffer, DType dtype, std::vector<int64_t> shape) {
    KernelLaunch l;
    l.name = kernel.name;
    l.symbol = symbol;
    l.grid = grid;
    l.block = {unsigned(kTile), unsigned(kTileRows), 1};
    l.params = std::move(params);
    code.launches.push_back(l);
    BufferDecl b;
    b.name = buffer;
    b.dtype = dtype;
    b.shape = std::move(shape);
    b.workspace = true;
    code.buffers.push_back(b);
}

std::string conv_builder_head(const dsl::Kernel& kernel, const LowerContext& ctx,
                              const ConvGeometry& g, const std::string& ns) {
    const Problem& pr = *ctx.problem;
    const TensorInfo& x = ctx.tensors.at(kernel.args[0].name);
    std::ostringstream h;
    h << "extern \"C\" int " << builder_symbol_of(kernel.name)
      << "(const KforgeBuildArgs* in, KforgeBuiltLaunch* out) {\n"
      << "    using namespace " << ns << ";\n"
      << "    if (in == nullptr || out == nullptr || in->abi_version != KFORGE_HOST_ABI_VERSION ||\n"
      << "        in->num_tensors != 3 || in->tensors == nullptr)\n"
      << "        return KFORGE_BUILD_BAD_ARGS;\n"
      << "    if (in->dims == nullptr || in->num_dims != " << pr.dims.size()
      << ") return KFORGE_BUILD_BAD_ARGS;\n"
      << "    int64_t N = " << conv_dim_expr(pr, x.dim_names[0], g.n)
      << ", C = " << conv_dim_expr(pr, x.dim_names[1], g.c)
      << ", H = " << (g.one_d ? "1" : conv_dim_expr(pr, x.dim_names[x.dim_names.size() - 2], g.h))
      << ", W = " << conv_dim_expr(pr, x.dim_names.back(), g.w) << ";\n";
    return h.str();
}

Expected<ConvGeometry> conv_geometry(const dsl::Kernel& kernel, const LowerContext& ctx) {
    if (kernel.args.size() != 2)
        return make_error(kernel.name, "conv2d takes two operands: X[N,C,H,W], W[K,C,R,S]");
    const Op* op = find_conv_op(kernel, *ctx.problem);
    if (op == nullptr)
        return make_error(kernel.name, "no conv2d op of the problem reads " +
                                           kernel.args[0].name + " and " + kernel.args[1].name);
    auto x = ctx.tensors.find(kernel.args[0].name);
    auto w = ctx.tensors.find(kernel.args[1].name);
    if (x == ctx.tensors.end() || w == ctx.tensors.end())
        return make_error(kernel.name, "conv2d operand not in the tensor table");
    // conv1d: x [N,C,W] and w [K,C,S] viewed as [N,C,1,W] and [K,C,1,S]
    const bool transpose = is_conv_transpose(op->kind);
    const bool one_d = op->kind == OpKind::kConv1d || op->kind == OpKind::kConvTranspose1d;
    const bool three_d = op->kind == OpKind::kConv3d || op->kind == OpKind::kConvTranspose3d;
    const size_t rank = one_d ? 3 : three_d ? 5 : 4;
    if (x->second.shape.size() != rank || w->second.shape.size() != rank)
        return make_error(kernel.name, std::string(to_string(op->kind)) + " operands have " +
                                           std::to_string(rank) + " dims: X[N,C,...], W[K,C,...]");
    if (x->second.dtype != w->second.dtype)
        return unsupported(kernel, "operands of different dtypes (" +
                                       std::string(to_string(x->second.dtype)) + ", " +
                                       std::string(to_string(w->second.dtype)) + ")");
    ConvGeometry g;
    const auto& xs = x->second.shape;
    const auto& ws = w->second.shape;
    g.one_d = one_d;
    g.three_d = three_d;
    g.n = xs[0], g.c = xs[1], g.h = one_d ? 1 : xs[rank - 2], g.w = xs.back();
    g.r = one_d ? 1 : ws[rank - 2], g.s = ws.back();
    g.groups = op->attrs.groups;
    g.form = transpose ? ConvForm::kDgrad : g.groups != 1 ? ConvForm::kGroupFprop
                                                         : ConvForm::kFprop;
    if (three_d) {
        g.d = xs[2], g.t = ws[2];
        g.stride_d = op->attrs.stride.at(0);
        g.padding_d = op->attrs.padding.at(0);
        g.dilation_d = op->attrs.dilation.at(0);
    }
    // input channels: fprop w [K, C/groups, ...], transposed w [C, K/groups, ...]
    if ((transpose ? ws[0] : ws[1] * g.groups) != g.c)
        return make_error(kernel.name, "the weight has " +
                                           std::to_string(transpose ? ws[0] : ws[1] * g.groups) +
                                           " input channels, the input " + std::to_string(g.c));
    for (int i = one_d ? 1 : 0; i < 2; ++i) {  // H and W; conv1d: W alone; conv3d: D above
        const size_t a = static_cast<size_t>(one_d ? 0 : three_d ? i + 1 : i);
        g.stride[i] = op->attrs.stride.at(a);
        g.padding[i] = op->attrs.padding.at(a);
        g.dilation[i] = op->attrs.dilation.at(a);
        if (transpose) g.output_padding[i] = op->attrs.output_padding.at(a);
    }
    if (transpose && three_d) g.output_padding_d = op->attrs.output_padding.at(0);
    // P and Q as the spec's shape inference derived them (it validated the attributes and
    // refused an empty output): the op's output tensor [N,K,P,Q].
    const Tensor* y = ctx.problem->find_tensor(op->output);
    if (y == nullptr || y->shape.size() != rank)
        return make_error(kernel.name, "the conv op's output " + op->output + " is not " +
                                           std::to_string(rank) + "-D");
    g.k = y->shape[1];
    g.p = one_d ? 1 : y->shape[rank - 2];
    g.q = y->shape.back();
    if (three_d) g.z = y->shape[2];
    // CUTLASS's optimized fprop iterator keeps one mask bit per filter row and column.
    if (g.r > 32 || g.s > 32)
        return unsupported(kernel, "a " + std::to_string(g.r) + "x" + std::to_string(g.s) +
                                       " filter (CUTLASS's optimized iterator takes R, S <= 32)");
    auto math = conv_math(kernel, x->second.dtype, ctx.problem->policy);
    if (!math) return math.error();
    g.math = *math;
    g.staged = g.math == dsl::MathMode::kBf16 ? DType::kBF16
             : g.math == dsl::MathMode::kF16  ? DType::kF16
                                              : DType::kF32;
    const int multiple = conv_channel_multiple(g.staged);
    g.cp = ceil_div(g.c, multiple) * multiple;
    g.kp = ceil_div(g.k, kConvFilterMultiple) * kConvFilterMultiple;
    g.w_images = g.kp, g.w_images_valid = g.k, g.w_channels = g.c, g.w_padded = g.cp;
    const bool simt = g.math == dsl::MathMode::kF32Simt;
    g.alignment_a = g.alignment_b = simt ? 1 : multiple;
    g.alignment_d = simt ? 1 : kConvFilterMultiple;
    if (three_d && simt)
        return unsupported(kernel, "math f32_simt for a " + std::string(to_string(op->kind)) +
                                       " (the 3-D convolutions run on tensor cores here: tf32, "
                                       "tf32x3, f16 or bf16)");
    if (three_d && kernel.gemm.iterator == dsl::ConvIterator::kFewChannels)
        return unsupported(kernel, "iterator few_channels for a conv3d (CUTLASS's 3-D fprop has "
                                   "the optimized iterator only)");
    if (g.form == ConvForm::kGroupFprop && !simt &&
        !group_fprop_tiles(g.k / g.groups, kernel.gemm.tile_n)) {
        // filters per group that CUTLASS's group fprop cannot tile at this tile N (ShuffleNet's
        // 40 of 3 groups): one dense fprop whose staged filter is zero across groups
        g.form = ConvForm::kFprop;
        g.w_group_filters = g.c / g.groups, g.w_group_channels = g.k / g.groups;
    }
    if (g.form == ConvForm::kFprop) return g;
    if (kernel.gemm.iterator == dsl::ConvIterator::kFewChannels)
        return unsupported(kernel, "iterator few_channels for a " +
                                       std::string(g.form == ConvForm::kDgrad
                                                       ? "transposed convolution (CUTLASS's dgrad"
                                                       : "grouped convolution (CUTLASS's group "
                                                         "fprop") +
                                       " has the analytic and optimized iterators only)");
    if (auto st = conv_form_geometry(kernel, *op, g); !st) return st.error();
    return g;
}

Expected<KernelCode> lower_conv2d(const dsl::Kernel& kernel, const LowerContext& ctx) {
    if (kernel.gemm.schedule == dsl::Schedule::kDirect) return lower_conv_direct(kernel, ctx);
    auto geo = conv_geometry(kernel, ctx);
    if (!geo) return geo.error();
    const ConvGeometry& g = *geo;
    if (auto st = check_tile(kernel, g.math); !st) return st.error();
    const TensorInfo& x = ctx.tensors.at(kernel.args[0].name);
    const TensorInfo& w = ctx.tensors.at(kernel.args[1].name);
    const dsl::GemmConfig& c = kernel.gemm;

    const std::string bx = conv_buffer_name(kernel.name, "x");
    const std::string bw = conv_buffer_name(kernel.name, "w");
    const std::string by = conv_buffer_name(kernel.name, "y");
    for (const std::string& b : {bx, bw, by})
        if (ctx.tensors.count(b))
            return make_error(kernel.name, "the conv2d workspace " + b +
                                               " has the name of a tensor of the program: "
                                               "rename it");
    // positions of x, w and y (conv3d: D, T and Z folded in; channels last makes them one run)
    // x's staged positions: with zeros inserted (g.upsample), (in - 1) * stride + 1 per axis
    const int64_t xd = (g.d - 1) * g.upsample[0] + 1, xh = (g.h - 1) * g.upsample[1] + 1,
                  xw = (g.w - 1) * g.upsample[2] + 1;
    const bool zeros = xd * xh * xw != g.d * g.h * g.w;
    const int64_t hw = xd * xh * xw, rs = g.t * g.r * g.s, pq = g.z * g.p * g.q;
    struct Grid {
        const char* what;
        int64_t x, y, z;
    };
    const Grid grids[] = {{"the input staging", ceil_div(hw, kTile), ceil_div(g.cp, kTile), g.n},
                          {"the weight staging", ceil_div(rs, kTile), ceil_div(g.w_padded, kTile),
                           g.w_images},
                          {"the output transform", ceil_div(pq, kTile), ceil_div(g.k, kTile), g.n}};
    for (const Grid& gr : grids)
        if (gr.x > 0x7fffffff || gr.y > kMaxGridYZ || gr.z > kMaxGridYZ)
            return unsupported(kernel, std::string(gr.what) + " needs a grid of " +
                                           std::to_string(gr.x) + " x " + std::to_string(gr.y) +
                                           " x " + std::to_string(gr.z) +
                                           " blocks (y and z at most 65535)");

    // The chain over y [N,K,P,Q]: the dims of its first store name the space.
    const dsl::ChainOp* store = first_store(kernel.chain);
    if (store == nullptr)
        return make_error(kernel.name, "the chain stores nothing; end it with store Y[N,K,P,Q]");
    const size_t out_rank = g.one_d ? 3u : g.three_d ? 5u : 4u;
    if (store->tensor->dims.size() != out_rank)
        return make_error(kernel.name, "store " + store->tensor->name + ": the output has " +
                                           std::to_string(out_rank) + " dims [N,K,...]");
    ChainSpace space;
    space.dims = store->tensor->dims;
    space.shape = g.one_d     ? std::vector<int64_t>{g.n, g.k, g.q}
                  : g.three_d ? std::vector<int64_t>{g.n, g.k, g.z, g.p, g.q}
                              : std::vector<int64_t>{g.n, g.k, g.p, g.q};
    space.runtime_shape = true;  // sizes are kernel params: one source for every shape
    auto chain = emit_chain("kforge_" + kernel.name + "_chain", kernel.chain, space, std::nullopt,
                            ctx);
    if (!chain) return chain.error();

    auto x_type = cuda_float_type(x.dtype, kernel.name);
    if (!x_type) return x_type.error();
    const std::string staged_ctype = *cuda_float_type(g.staged, "");
    const std::string ns = "kforge_conv_" + kernel.name;
    const std::string sym = symbol_of(kernel.name);
    KernelCode code;
    std::ostringstream dev;
    const bool fprop = g.form == ConvForm::kFprop;
    const bool sm90 = c.schedule == dsl::Schedule::kTmaWarpSpecialized;
    if (sm90) {
        if (auto st = emit_conv_sm90(kernel, ctx, g, {bx, bw, by}, dev, code); !st)
            return st.error();
    } else {
    dev << (!fprop    ? conv_form_includes(g)
            : g.three_d ? "#include \"cutlass/conv/conv3d_problem_size.h\"\n"
                          "#include \"cutlass/conv/kernel/default_conv3d_fprop.h\"\n"
                        : "#include \"cutlass/conv/conv2d_problem_size.h\"\n"
                          "#include \"cutlass/conv/kernel/default_conv2d_fprop.h\"\n")
        << "#include \"cutlass/conv/device/implicit_gemm_convolution.h\"\n"
           "#include \"cutlass/epilogue/thread/linear_combination.h\"\n"
           "#include \"cutlass/gemm/threadblock/threadblock_swizzle.h\"\n"
           "#include \"kernels/conv_layout.cuh\"\n"
           "#include \"kernels/chain_ops.cuh\"\n";

    // 1. and 2.: channels-last staging of x and w.
    auto staging = [&](const char* role, const TensorInfo& src, const std::string& buffer,
                       int64_t positions, int64_t images, int64_t images_valid, const Grid& grid,
                       std::vector<int64_t> shape, int64_t channels, int64_t padded) {
        EntryParams params;
        params.add_tensor(src.name, *cuda_float_type(src.dtype, ""), false);
        params.add_workspace(buffer, staged_ctype);
        const bool block_diagonal = g.w_group_filters > 0 && std::string(role) == "w";
        if (block_diagonal) {  // source channels per image, images per group (lower_conv.h)
            params.add_int64("group_filters", g.w_group_filters);
            params.add_int64("group_channels", g.w_group_channels);
        } else {
            params.add_int64("channels", channels);
        }
        const bool upsampled = zeros && std::string(role) == "x";
        if (upsampled) {  // zero insertion: the source's sizes and the strides
            for (const auto& [name, v] : {std::pair<const char*, int64_t>{"in_d", g.d},
                                          {"in_h", g.h}, {"in_w", g.w}, {"up_d", g.upsample[0]},
                                          {"up_h", g.upsample[1]}, {"up_w", g.upsample[2]}})
                params.add_int64(name, v);
        } else {
            params.add_int64("positions", positions);
        }
        params.add_int64("padded_channels", padded);
        params.add_int64("images_valid", images_valid);
        const std::string symbol = sym + "_conv_" + role;
        dev << "// kernel " << kernel.name << ": " << src.name << " staged channels last into "
            << buffer << " (channels padded with zeros to 16 bytes"
            << (upsampled ? "; stride - 1 zeros between neighbours" : "") << ")\n"
            << "extern \"C\" __global__ void __launch_bounds__(" << kTile * kTileRows << ") "
            << symbol << "(" << params.signature() << ") {\n"
            << (block_diagonal
                    ? "    kforge::conv_channels_last_block_diagonal(t_" + src.name + ", w_" +
                          buffer + ", group_filters,\n        group_channels, positions, "
                          "padded_channels, images_valid);\n}\n"
                : upsampled
                    ? "    kforge::conv_channels_last_upsampled(t_" + src.name + ", w_" + buffer +
                          ", channels,\n        kforge::ConvUpsample{in_d, in_h, in_w, up_d, "
                          "up_h, up_w}, padded_channels, images_valid);\n}\n"
                    : "    kforge::conv_channels_last(t_" + src.name + ", w_" + buffer +
                          ", channels, positions, padded_channels, images_valid);\n}\n");
        add_conv_layout_launch(code, kernel, symbol,
                               {unsigned(grid.x), unsigned(grid.y), unsigned(images)},
                               params.plan_params(), buffer, g.staged, std::move(shape));
    };
    // x [N,C,..] -> [N,..,Cp]; w [images, channels, ..] -> [images padded, .., channels padded]
    if (g.three_d) {
        staging("x", x, bx, hw, g.n, g.n, grids[0], {g.n, xd, xh, xw, g.cp}, g.c, g.cp);
        staging("w", w, bw, rs, g.w_images, g.w_images_valid, grids[1],
                {g.w_images, g.t, g.r, g.s, g.w_padded}, g.w_channels, g.w_padded);
    } else {
        staging("x", x, bx, hw, g.n, g.n, grids[0], {g.n, xh, xw, g.cp}, g.c, g.cp);
        staging("w", w, bw, rs, g.w_images, g.w_images_valid, grids[1],
                {g.w_images, g.r, g.s, g.w_padded}, g.w_channels, g.w_padded);
    }

    // 3.: the CUTLASS implicit-GEMM fprop.
    const Sm80MathTypes mt = sm80_math_types(g.math);
    const bool simt = g.math == dsl::MathMode::kF32Simt;
    const int stages = c.stages > 0 ? c.stages : 3;
    int warp_m = c.tile_m / 2, warp_n = c.tile_n / 2;
    if (g.math == dsl::MathMode::kTf32x3) {  // three operand fragments live: as the sm80 gemm
        warp_m = std::min(warp_m, 64);
        warp_n = std::min(warp_n, 32);
        if ((c.tile_m / warp_m) * (c.tile_n / warp_n) > 8)
            warp_n = c.tile_n / (8 / (c.tile_m / warp_m));
        // The conv iterators hold more registers than the gemm's: a 64x32 warp spilled (212 B
        // at 255 registers, tile 128x64), 32x32 did not (197): narrower while up to 8 warps.
        if (warp_m > 32 && 2 * (c.tile_m / warp_m) * (c.tile_n / warp_n) <= 8) warp_m /= 2;
    }
    // The iterator (knob `iterator`): kOptimized walks GEMM-K as (r, s, then C in tile-K
    // steps), so a tile K wider than the padded channels multiplies zeros: C = 3 (padded to 4)
    // under tile K 32 spends 8 of 9 MMA slices on padding (kb_09 on the H200: the fprop 53.0 of
    // 69.3 us, 12% warps active). kFewChannels (tensor ops only) walks the flattened (r, s, c)
    // in accesses of the alignment, for any C that the alignment divides (the padding
    // guarantees it). auto = kOptimized, the iterator measured on the GPU so far.
    if (simt && c.iterator == dsl::ConvIterator::kFewChannels)
        return unsupported(kernel, "iterator few_channels with math f32_simt (CUTLASS has no "
                                   "SIMT few-channels mainloop)");
    const bool few_channels = c.iterator == dsl::ConvIterator::kFewChannels;
    const std::string element = cutlass_type(g.staged);
    dev << "// kernel " << kernel.name << ": CUTLASS 2.x sm80 implicit-GEMM "
        << (!fprop ? conv_form_title(g) : g.three_d ? "conv3d fprop" : "conv2d fprop") << ", math "
        << math_name(g.math) << ", stride " << g.stride[0] << "x" << g.stride[1] << ", padding "
        << g.padding[0] << "x" << g.padding[1] << ", dilation " << g.dilation[0] << "x"
        << g.dilation[1] << "\nnamespace " << ns << " {\n"
        << "using Element = " << element << ";\n"
        << "using Layout = cutlass::layout::" << (g.three_d ? "TensorNDHWC" : "TensorNHWC")
        << ";\n"
        << "using ElementAccumulator = float;\n"
        << "constexpr int kAlignment = " << g.alignment_a << ";\n"
        << "constexpr int kAlignmentD = " << g.alignment_d << ";\n"
        << "constexpr int kChannelMultiple = " << conv_channel_multiple(g.staged) << ";\n"
        << "constexpr int kFilterMultiple = " << kConvFilterMultiple << ";\n"
        << "constexpr int kStrideH = " << g.stride[0] << ", kStrideW = " << g.stride[1] << ";\n"
        << "constexpr int kPadH = " << g.padding[0] << ", kPadW = " << g.padding[1] << ";\n"
        << "constexpr int kDilationH = " << g.dilation[0] << ", kDilationW = " << g.dilation[1]
        << ";\n"
        // read by conv3d's host builder only: [[maybe_unused]] keeps nvcc's warning 177 off a
        // 2-D network's log (ResNet-18: 60 warnings hid the error lines past eprintf's buffer)
        << "[[maybe_unused]] constexpr int kStrideD = " << g.stride_d << ", kPadD = " << g.padding_d
        << ", kDilationD = " << g.dilation_d << ";  // conv3d's depth (1, 0, 1 otherwise)\n"
        << "using ThreadblockShape = " << cutlass_gemm_shape(c.tile_m, c.tile_n, c.tile_k) << ";\n"
        << "using WarpShape = " << cutlass_gemm_shape(warp_m, warp_n, c.tile_k) << ";\n"
        << "using InstructionShape = " << mt.instruction << ";\n";
    if (!fprop) {
        auto decl = conv_form_kernel(kernel, g, ConvKernelShape{warp_m, warp_n, stages, mt});
        if (!decl) return decl.error();
        dev << *decl;
    } else {
    dev << "using Swizzle = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<"
        << c.swizzle << ">;\n"
        << "// D = 1 * accumulator + 0 * C: beta 0 never reads C\n"
        << "using EpilogueOp = cutlass::epilogue::thread::LinearCombination<\n"
        << "    float, kAlignmentD, ElementAccumulator, float>;\n"
        << "using ConvKernel = typename cutlass::conv::kernel::"
        << (g.three_d ? "DefaultConv3dFprop" : "DefaultConv2dFprop") << "<\n"
        << "    Element, Layout, Element, Layout, float, Layout, ElementAccumulator,\n"
        << "    " << mt.op_class << ", cutlass::arch::Sm80,\n"
        << "    ThreadblockShape, WarpShape, InstructionShape, EpilogueOp, Swizzle, " << stages
        << ",\n    " << mt.op << ", cutlass::conv::IteratorAlgorithm::"
        << (few_channels ? "kFewChannels" : "kOptimized") << ",\n"
        << (g.three_d ? "    cutlass::conv::StrideSupport::kStrided>::Kernel;\n"  // 128-bit access
                      : "    cutlass::conv::StrideSupport::kStrided, kAlignment, kAlignment>::Kernel;\n");
    }
    dev << "}  // namespace " << ns << "\n\n";
    code.entry = cutlass_entry(
        ns, sym, dev.str(),
        "extern \"C\" __global__ void __launch_bounds__(" + ns + "::ConvKernel::kThreadCount, 1)\n" +
            sym + "(typename " + ns + "::ConvKernel::Params params) {\n"
            "    extern __shared__ int4 " + ns + "_smem[];\n"
            "    " + ns + "::ConvKernel op;\n"
            "    op(params, *reinterpret_cast<typename " + ns +
            "::ConvKernel::SharedStorage*>(" + ns + "_smem));\n}\n");
    {
        KernelLaunch l;
        l.name = kernel.name;
        l.symbol = sym;
        l.params = {KernelParam{ParamKind::kParamBlob, "", 0, 0.0}};
        l.param_builder = builder_symbol_of(kernel.name);
        l.builder_tensors = {bx, bw, by};
        code.launches.push_back(l);
        BufferDecl b;
        b.name = by;
        b.dtype = DType::kF32;
        b.shape = g.three_d ? std::vector<int64_t>{g.n, g.z, g.p, g.q, g.kp}
                            : std::vector<int64_t>{g.n, g.p, g.q, g.kp};
        b.workspace = true;
        code.buffers.push_back(b);
    }

    }  // steps 1 to 3 of the sm80 form

    // 4.: the accumulators back to NCHW through the chain.
    {
        EntryParams params;
        params.add_workspace(by, "float");
        params.add_chain(*chain);
        params.add_int64("batch", g.n);
        params.add_int64("filters", g.k);
        if (g.three_d) params.add_int64("out_d", g.z);
        params.add_int64("out_h", g.p);
        params.add_int64("out_w", g.q);
        params.add_int64("padded_filters", g.kp);
        const std::string symbol = sym + "_conv_out";
        dev << "// kernel " << kernel.name << ": " << by << " [N,P,Q,Kp] to NCHW through the chain\n"
            << chain->definition << "extern \"C\" __global__ void __launch_bounds__("
            << kTile * kTileRows << ") " << symbol << "(" << params.signature() << ") {\n"
            << chain_init(*chain, g.one_d ? std::vector<std::string>{"batch", "filters", "out_w"}
                                  : g.three_d
                                      ? std::vector<std::string>{"batch", "filters", "out_d",
                                                                 "out_h", "out_w"}
                                      : std::vector<std::string>{"batch", "filters", "out_h",
                                                                 "out_w"})
            << "    kforge::conv_output_nchw(w_" << by << ", filters, "
            << (g.three_d ? "out_d * out_h * out_w" : "out_h * out_w")
            << ", padded_filters, chain);\n}\n";
        KernelLaunch l;
        l.name = kernel.name;
        l.symbol = symbol;
        l.grid = {unsigned(grids[2].x), unsigned(grids[2].y), unsigned(grids[2].z)};
        l.block = {unsigned(kTile), unsigned(kTileRows), 1};
        l.params = params.plan_params();
        code.launches.push_back(l);
    }
    code.device_source = dev.str();
    if (sm90) return code;  // its builder came with steps 1 to 3

    // The host param builder: sizes from the harness's dims (so one build serves every shape),
    // the padding rules as the plan's buffers.
    const Problem& pr = *ctx.problem;
    // K: fprop w [K, C/groups, ..]; transposed w [C, K, ..] (groups 1)
    const size_t k_dim = g.form == ConvForm::kDgrad ? 1 : 0;
    std::ostringstream h;
    h << conv_builder_head(kernel, ctx, g, ns)
      << "    const int64_t K = "
      << (g.w_group_filters > 0 && g.form == ConvForm::kDgrad  // w [C, K/groups, ..]
              ? conv_dim_expr(pr, w.dim_names[k_dim], g.w_group_filters) + " * " +
                    std::to_string(g.groups)
              : conv_dim_expr(pr, w.dim_names[k_dim], g.k))
      << ", R = " << (g.one_d ? "1" : conv_dim_expr(pr, w.dim_names[w.dim_names.size() - 2], g.r))
      << ", S = " << conv_dim_expr(pr, w.dim_names.back(), g.s) << ";\n";
    if (!fprop) {
        h << "    const int64_t D = "
          << (g.three_d ? conv_dim_expr(pr, x.dim_names[2], g.d) + ", T = " +
                              conv_dim_expr(pr, w.dim_names[2], g.t)
                        : std::string("1, T = 1"))
          << ";\n"
          << conv_form_host_problem(g);
    } else {
    if (g.three_d)
        h << "    const int64_t D = " << conv_dim_expr(pr, x.dim_names[2], g.d)
          << ", T = " << conv_dim_expr(pr, w.dim_names[2], g.t) << ";\n"
          << "    if (D < 1 || T < 1 || D + 2 * kPadD < kDilationD * (T - 1) + 1)\n"
          << "        return KFORGE_BUILD_BAD_ARGS;\n"
          << "    const int64_t Z = (D + 2 * kPadD - kDilationD * (T - 1) - 1) / kStrideD + 1;\n";
    else
        h << "    const int64_t D = 1, T = 1, Z = 1;\n";
    h << "    if (N < 1 || C < 1 || H < 1 || W < 1 || K < 1 || R < 1 || S < 1)\n"
      << "        return KFORGE_BUILD_BAD_ARGS;\n"
      << "    const int64_t P = (H + 2 * kPadH - kDilationH * (R - 1) - 1) / kStrideH + 1;\n"
      << "    const int64_t Q = (W + 2 * kPadW - kDilationW * (S - 1) - 1) / kStrideW + 1;\n"
      << "    if (H + 2 * kPadH < kDilationH * (R - 1) + 1 || W + 2 * kPadW < kDilationW * (S - 1) + 1)\n"
      << "        return KFORGE_BUILD_BAD_ARGS;\n"
      << "    // the staged operands' padding, as the plan's workspace buffers\n"
      << "    const int64_t Cp = (C + kChannelMultiple - 1) / kChannelMultiple * kChannelMultiple;\n"
      << "    const int64_t Kp = (K + kFilterMultiple - 1) / kFilterMultiple * kFilterMultiple;\n"
      << conv_batch_parts("D * H * W * Cp", "Z * P * Q * Kp", "Kp * T * R * S * Cp");
    if (g.three_d)
        h << "    cutlass::conv::Conv3dProblemSize problem(int(N), int(D), int(H), int(W), int(Cp),\n"
          << "        int(Kp), int(T), int(R), int(S), int(Z), int(P), int(Q), kPadD, kPadH, kPadW,\n"
          << "        kStrideD, kStrideH, kStrideW, kDilationD, kDilationH, kDilationW,\n"
          << "        cutlass::conv::Mode::kCrossCorrelation, /*split_k_slices=*/1, /*groups=*/1);\n"
          << "    cutlass::TensorRef<Element, Layout> ref_x(static_cast<Element*>(tensors[0]),\n"
          << "        Layout::packed({int(N), int(D), int(H), int(W), int(Cp)}));\n"
          << "    cutlass::TensorRef<Element, Layout> ref_w(static_cast<Element*>(tensors[1]),\n"
          << "        Layout::packed({int(Kp), int(T), int(R), int(S), int(Cp)}));\n"
          << "    cutlass::TensorRef<float, Layout> ref_y(static_cast<float*>(tensors[2]),\n"
          << "        Layout::packed({int(N), int(Z), int(P), int(Q), int(Kp)}));\n";
    else
        h << "    cutlass::conv::Conv2dProblemSize problem(int(N), int(H), int(W), int(Cp), int(Kp),\n"
          << "        int(R), int(S), int(P), int(Q), kPadH, kPadW, kStrideH, kStrideW, kDilationH,\n"
          << "        kDilationW, cutlass::conv::Mode::kCrossCorrelation, /*split_k_slices=*/1,\n"
          << "        /*groups=*/1);\n"
          << "    cutlass::TensorRef<Element, Layout> ref_x(static_cast<Element*>(tensors[0]),\n"
          << "        Layout::packed({int(N), int(H), int(W), int(Cp)}));\n"
          << "    cutlass::TensorRef<Element, Layout> ref_w(static_cast<Element*>(tensors[1]),\n"
          << "        Layout::packed({int(Kp), int(R), int(S), int(Cp)}));\n"
          << "    cutlass::TensorRef<float, Layout> ref_y(static_cast<float*>(tensors[2]),\n"
          << "        Layout::packed({int(N), int(P), int(Q), int(Kp)}));\n";
    }
    // The direct depthwise convolution takes its filter reordered to [R*S, K] as its own
    // argument (the staged weight: its reorder launch never runs) and sizes its shared memory
    // from the run-time stride and dilation.
    const bool direct = g.form == ConvForm::kDepthwise;
    h << "    typename ConvKernel::Arguments args(problem, ref_x, ref_w, ref_y, ref_y,\n"
      << "        typename EpilogueOp::Params(/*alpha=*/1.0f, /*beta=*/0.0f),\n"
      << (direct ? "        /*ref_reordered_B=*/ref_w);\n"
                 : "        cutlass::conv::SplitKMode::kSerial);\n")
      << "    // can_implement only (static, host side): the harness launches\n"
      << "    if (cutlass::conv::device::"
      << (direct ? "DirectConvolution" : "ImplicitGemmConvolution")
      << "<ConvKernel>::can_implement(args) !=\n"
      << "        cutlass::Status::kSuccess)\n"
      << "        return KFORGE_BUILD_CANNOT_IMPLEMENT;\n"
      << "    out->workspace_bytes = 0;  // split-K serial with one slice: no semaphore\n"
      << "    typename ConvKernel::Params params(args, /*semaphore=*/nullptr);\n"
      << "    dim3 grid = Swizzle().get_grid_shape(params.grid_tiled_shape);\n"
      << "    if (out->params == nullptr || out->params_capacity < sizeof(params))\n"
      << "        return KFORGE_BUILD_PARAMS_TOO_LARGE;\n"
      << "    std::memcpy(out->params, &params, sizeof(params));\n"
      << "    out->params_bytes = sizeof(params);\n"
      << "    out->grid[0] = grid.x; out->grid[1] = grid.y; out->grid[2] = grid.z;\n"
      << "    out->block[0] = ConvKernel::kThreadCount; out->block[1] = 1; out->block[2] = 1;\n"
      << "    out->cluster[0] = 1; out->cluster[1] = 1; out->cluster[2] = 1;\n"
      << (direct ? "    if (params.get_smem_size() > 232448) return KFORGE_BUILD_CANNOT_IMPLEMENT;\n"
                   "    out->smem_bytes = unsigned(params.get_smem_size());\n"
                 : "    out->smem_bytes = unsigned(sizeof(typename ConvKernel::SharedStorage));\n")
      << "    return KFORGE_BUILD_OK;\n}\n";
    code.host_source = h.str();
    return code;
}

}  // namespace kforge::codegen
