// Grouped / depthwise fprop and transposed convolution (dgrad) for lower_conv2d: see
// lower_conv_forms.h.
#include "codegen/lower_conv_forms.h"

#include <algorithm>
#include <sstream>

namespace kforge::codegen {
namespace {

Error unsupported(const dsl::Kernel& k, const std::string& what) {
    return make_error(k.name, "not supported by the conv2d lowering: " + what);
}

int64_t round_up(int64_t a, int64_t m) { return (a + m - 1) / m * m; }

// The widest access (elements, a power of two up to `most`) that divides `channels`.
int access_width(int64_t channels, int most) {
    int a = most;
    while (a > 1 && channels % a != 0) a /= 2;
    return a;
}

bool strided(const ConvGeometry& g) {
    return g.stride[0] > 1 || g.stride[1] > 1 || g.stride_d > 1;
}

bool dilated(const ConvGeometry& g) {
    return g.dilation[0] > 1 || g.dilation[1] > 1 || g.dilation_d > 1;
}

// The direct depthwise convolution's types (DefaultDepthwiseDirect2dConvFprop). Its CTA computes
// an output tile of 1 x P x Q positions by tile N channels with every tap of the R x S filter
// (GEMM-K = R*S, a compile-time FilterShape, so one source per filter size); each warp computes
// warp M positions over all tile N channels (CUTLASS static-asserts WarpShape N = ThreadblockShape
// N, K = R*S, ThreadblockShape M a multiple of WarpShape M; direct_warp_m below picks warp M).
// The knobs: tile M = the P x Q positions (64: 8x8, 128: 8x16, 256: 16x16; conv1d 1 x tile M),
// tile N = the channels per CTA (C is padded to a multiple), tile K 16 (the taps are the filter's),
// stages, iterator (auto: kFixedStrideDilation, the op's stride and dilation compiled in;
// optimized: kOptimized, run-time stride and dilation, fewer registers for large filters).
//
// How CUTLASS spreads the CTA's threads over its output tile
// (DepthwiseDirectConvMmaCoreWithLaneAccessSize, SIMT f32): a warp's 32 lanes are N lanes =
// min(tile N / 2, 32) over the channels by 32 / N lanes over the positions; each thread computes
// a kP x kQ patch of positions, detail::SimtWarpShape<warp M, position lanes> (defined for the
// pairs in kSimtWarpShapes only), and thread group g = thread / (tile N / LaneN) takes patch
// (g / (Q / kQ), g % (Q / kQ)) of the P x Q tile - the mma's activation iterator and the
// epilogue's warp tile iterator alike. Nothing in CUTLASS checks that the groups tile the output
// exactly: conv1d's 1 x 64 tile with warp M 16 (2 x 2 patches) computed columns 0..31 of rows 0
// and 1 (row 1 past the tile) and stored columns 32..63 from stale shared memory (the H100,
// session 18: depthwise1d 71.1% right = 32 of its 45 outputs). A 1-row tile needs kP = 1: tile N
// 16 (8 position lanes) with warp M 8 (1 x 2 patches) or 4.
struct SimtWarpShapeEntry {
    int warp_m, lanes_m, p, q;
};
constexpr SimtWarpShapeEntry kSimtWarpShapes[] = {
    {4, 4, 1, 1}, {4, 2, 2, 1}, {4, 1, 2, 2}, {8, 1, 2, 4}, {8, 2, 2, 2},
    {8, 4, 1, 2}, {16, 1, 4, 4}, {16, 2, 2, 4}, {16, 4, 2, 2}};

// Whether warp M `warp_m` makes CUTLASS's thread groups tile a tile_p x tile_q x tile_n output
// tile exactly (at most 512 threads, as the 16x16 tile).
bool direct_tiling_exact(int tile_p, int tile_q, int tile_n, int warp_m) {
    const int tile_m = tile_p * tile_q;
    const int lanes_n = std::min(tile_n / 2, 32);
    if (lanes_n < 1 || 32 % lanes_n != 0 || tile_n % lanes_n != 0 || tile_m % warp_m != 0)
        return false;
    const int lanes_m = 32 / lanes_n;
    const SimtWarpShapeEntry* e = nullptr;
    for (const SimtWarpShapeEntry& s : kSimtWarpShapes)
        if (s.warp_m == warp_m && s.lanes_m == lanes_m) e = &s;
    if (e == nullptr || tile_p % e->p != 0 || tile_q % e->q != 0) return false;
    const int lane_n = std::min(4, tile_n / lanes_n);  // channels per thread (16-byte accesses)
    const int threads = tile_m / warp_m * 32, per_group = tile_n / lane_n;
    return threads <= 512 && threads % per_group == 0 &&
           (tile_p / e->p) * (tile_q / e->q) == threads / per_group;
}

// Warp M for the tile: 16 (CUTLASS's own choice for its square tiles) where it tiles exactly,
// else 8 or 4; 0 when none does.
int direct_warp_m(int tile_p, int tile_q, int tile_n) {
    for (int warp_m : {16, 8, 4})
        if (direct_tiling_exact(tile_p, tile_q, tile_n, warp_m)) return warp_m;
    return 0;
}

Expected<std::string> depthwise_tile(const dsl::Kernel& kernel, const ConvGeometry& g) {
    const dsl::GemmConfig& c = kernel.gemm;
    if (c.tile_k != 16)
        return unsupported(kernel, "tile K " + std::to_string(c.tile_k) + " for the depthwise "
                                   "direct convolution (its K is the filter's R*S taps: write "
                                   "tile K 16)");
    int tile_p = 0, tile_q = 0;
    if (g.one_d) {
        tile_p = 1, tile_q = c.tile_m;
    } else {
        tile_p = c.tile_m >= 256 ? 16 : 8;
        tile_q = c.tile_m / tile_p;
    }
    if (tile_p * tile_q != c.tile_m || c.tile_m % 16 != 0)
        return unsupported(kernel, "tile M " + std::to_string(c.tile_m) + " for the depthwise "
                                   "direct convolution (64, 128 or 256 output positions)");
    const int warp_m = direct_warp_m(tile_p, tile_q, c.tile_n);
    if (warp_m == 0)
        return unsupported(
            kernel, "tile " + std::to_string(c.tile_m) + "x" + std::to_string(c.tile_n) +
                        " for the depthwise direct convolution: CUTLASS's threads would not cover "
                        "its " + std::to_string(tile_p) + " x " + std::to_string(tile_q) +
                        " output tile of " + std::to_string(c.tile_n) + " channels exactly" +
                        (g.one_d ? " (a conv1d's one-row tile takes tile N 16 and tile M 64 or 128)"
                                 : " (tile N 16, 32 or 64)"));
    if (c.iterator == dsl::ConvIterator::kFewChannels)
        return unsupported(kernel, "iterator few_channels for a depthwise convolution (the "
                                   "direct convolution walks filter taps, not channels)");
    const bool fixed = c.iterator != dsl::ConvIterator::kOptimized;
    const int taps = static_cast<int>(g.r * g.s);
    const int stages = c.stages > 0 ? c.stages : 3;
    std::ostringstream o;
    o << "constexpr int kGroups = " << g.groups << ";\n"
      << "constexpr int kFilterR = " << g.r << ", kFilterS = " << g.s << ";\n"
      << "using OutputTile = cutlass::conv::TensorNHWCShape<1, " << tile_p << ", " << tile_q
      << ", " << c.tile_n << ">;  // N, P, Q, channels per CTA\n"
      << "using FilterShape = cutlass::MatrixShape<kFilterR, kFilterS>;\n"
      << "using DirectThreadblockShape = cutlass::gemm::GemmShape<" << c.tile_m << ", "
      << c.tile_n << ", " << taps << ">;\n"
      << "using DirectWarpShape = cutlass::gemm::GemmShape<" << warp_m << ", " << c.tile_n << ", " << taps
      << ">;\n"
      << "using Swizzle = cutlass::conv::threadblock::DepthwiseDirect2dConvIdentityThreadblockSwizzle<\n"
      << "    " << c.swizzle << ", OutputTile::kN, OutputTile::kH, OutputTile::kW>;\n"
      << "// D = 1 * accumulator + 0 * C: beta 0 never reads C\n"
      << "using EpilogueOp = cutlass::epilogue::thread::LinearCombination<\n"
      << "    float, kAlignmentD, ElementAccumulator, float>;\n"
      << "using ConvKernel = typename cutlass::conv::kernel::DefaultDepthwiseDirect2dConvFprop<\n"
      << "    Element, Layout, Element, Layout, float, Layout, ElementAccumulator,\n"
      << "    cutlass::arch::OpClassSimt, cutlass::arch::Sm80,\n"
      << "    DirectThreadblockShape, OutputTile, FilterShape, DirectWarpShape,\n"
      << "    cutlass::gemm::GemmShape<1, 1, 1>, EpilogueOp, Swizzle, " << stages << ",\n"
      << "    cutlass::arch::OpMultiplyAdd,\n"
      << (fixed ? "    cutlass::conv::IteratorAlgorithm::kFixedStrideDilation, "
                  "cutlass::conv::StrideSupport::kFixed,\n"
                  "    cutlass::MatrixShape<kStrideH, kStrideW>, "
                  "cutlass::MatrixShape<kDilationH, kDilationW>,\n"
                : "    cutlass::conv::IteratorAlgorithm::kOptimized, "
                  "cutlass::conv::StrideSupport::kStrided,\n"
                  "    cutlass::MatrixShape<-1, -1>, cutlass::MatrixShape<-1, -1>,\n")
      << "    kAlignment, kAlignmentB>::Kernel;\n";
    return o.str();
}

}  // namespace

Status conv_form_geometry(const dsl::Kernel& kernel, const Op& op, ConvGeometry& g) {
    const std::string kind(to_string(op.kind));
    const int multiple = conv_channel_multiple(g.staged);
    const bool simt = g.math == dsl::MathMode::kF32Simt;
    if (g.form == ConvForm::kDgrad) {
        // ImplicitGemmConvolution::can_implement: a strided dgrad takes dilation 1 (the strided
        // kernel's per-phase filter walk assumes unit dilation); unit stride takes any dilation.
        // So stride with dilation runs as the unit-stride dgrad of x with stride - 1 zeros
        // between neighbours (the staging inserts them): the same sums, stride^dims the MMAs.
        if (strided(g) && dilated(g)) {
            g.upsample = {g.stride_d, g.stride[0], g.stride[1]};
            g.stride_d = 1, g.stride = {1, 1};
        }
        // x is dgrad's output gradient dy [N,H,W,Cp] (GEMM-K along Cp), w its KRSC filter
        // [Cp,R,S,Kp] read along Kp, y the gradient dx [N,P,Q,Kp]: both channel counts padded
        // to 16 bytes of the staged dtype (which 4 f32 accumulators divide too).
        g.kp = round_up(g.k, multiple);
        g.w_images = g.cp, g.w_images_valid = g.c, g.w_channels = g.k, g.w_padded = g.kp;
        // CUTLASS's dgrad has no group mode (GroupMode is an fprop iterator parameter): groups
        // run as one dense dgrad whose filter is zero between groups (staged block diagonal).
        if (g.groups != 1) g.w_group_filters = g.k / g.groups, g.w_group_channels = g.c / g.groups;
        g.alignment_a = g.alignment_b = simt ? 1 : multiple;
        g.alignment_d = simt ? 1 : kConvFilterMultiple;
        return Ok{};
    }
    // Grouped: CUTLASS's group fprop is 2-D only (DefaultConv2dGroupFprop; no 3-D form).
    if (g.three_d)
        return unsupported(kernel, "a grouped conv3d (groups " + std::to_string(g.groups) +
                                       "): CUTLASS has no 3-D group fprop");
    if (g.c % g.groups != 0 || g.k % g.groups != 0)
        return unsupported(kernel, "groups " + std::to_string(g.groups) +
                                       " that do not divide the channels");
    const int64_t cg = g.c / g.groups;
    if (simt) {
        // Math f32_simt: CUTLASS's direct depthwise convolution (SIMT FMA, exact f32), for
        // depthwise only: one filter per channel (its can_implement: groups = C or K; kforge
        // asks both, the channel multiplier 1).
        if (g.groups != g.c || g.k != g.c)
            return unsupported(kernel, "math f32_simt for a grouped convolution with " +
                                           std::to_string(cg) + " channels and " +
                                           std::to_string(g.k / g.groups) +
                                           " filters per group (CUTLASS's group fprop is a "
                                           "tensor-op kernel: tf32, tf32x3, f16 or bf16; its SIMT "
                                           "direct convolution is depthwise only, groups = C = K)");
        g.form = ConvForm::kDepthwise;
        // Channels (= filters = groups) padded with zeros to whole CTAs of tile N channels (a
        // CTA's channels are one run): a zero channel with a zero filter adds zero outputs that
        // the output launch never reads (it reads K of Kp).
        g.cp = g.kp = round_up(g.c, kernel.gemm.tile_n);
        // The filter staged as the kernel's reordered filter [R*S, Kp]: one image of K channels
        // at R*S positions (w [K,1,R,S] is [1, K, R*S] in memory).
        g.w_images = 1, g.w_images_valid = 1, g.w_channels = g.k, g.w_padded = g.kp;
        // x [N,H,W,Cp] and the filter rows [R*S, Kp] read alignment elements along Cp (= Kp);
        // the epilogue stores as many along Kp.
        g.alignment_a = g.alignment_b = g.alignment_d = access_width(g.cp, kConvFilterMultiple);
        return Ok{};
    }
    // Each group's channel run starts at g * C/groups in x [N,H,W,C] and the filter rows are
    // [K,R,S,C/groups]: an access of alignment_a elements must not cross a group, so it divides
    // C/groups; cp.async moves 4, 8 or 16 bytes, so f16/bf16 need an even C/groups.
    g.alignment_a = g.alignment_b = access_width(cg, multiple);
    if (g.alignment_a * dtype_bytes(g.staged) < 4)
        return unsupported(kernel, "a grouped " + std::string(to_string(g.staged)) +
                                       " convolution with an odd " + std::to_string(cg) +
                                       " channels per group (CUTLASS's cp.async reads at least 4 "
                                       "bytes; stage f32 operands with math tf32/tf32x3)");
    // The epilogue stores alignment_d accumulators at once along K (no filter padding: K / groups
    // filters per group is CUTLASS's own arithmetic).
    g.alignment_d = access_width(g.k, kConvFilterMultiple);
    g.cp = g.c;
    g.kp = g.k;
    g.w_images = g.k, g.w_images_valid = g.k, g.w_channels = cg, g.w_padded = cg;
    return Ok{};
}

std::string conv_form_includes(const ConvGeometry& g) {
    if (g.form == ConvForm::kDepthwise)
        return "#include \"cutlass/conv/conv2d_problem_size.h\"\n"
               "#include \"cutlass/conv/kernel/default_depthwise_fprop.h\"\n"
               "#include \"cutlass/conv/device/direct_convolution.h\"\n"
               "#include \"cutlass/conv/threadblock/threadblock_swizzle.h\"\n";
    if (g.form == ConvForm::kGroupFprop)
        return "#include \"cutlass/conv/conv2d_problem_size.h\"\n"
               "#include \"cutlass/conv/kernel/default_conv2d_group_fprop.h\"\n";
    return g.three_d ? "#include \"cutlass/conv/conv3d_problem_size.h\"\n"
                       "#include \"cutlass/conv/kernel/default_conv3d_dgrad.h\"\n"
                     : "#include \"cutlass/conv/conv2d_problem_size.h\"\n"
                       "#include \"cutlass/conv/kernel/default_conv2d_dgrad.h\"\n"
                       "#include \"cutlass/conv/threadblock/threadblock_swizzle.h\"\n";
}

std::string conv_form_title(const ConvGeometry& g) {
    if (g.form == ConvForm::kDepthwise)
        return "conv2d depthwise direct convolution (groups " + std::to_string(g.groups) + ")";
    if (g.form == ConvForm::kGroupFprop)
        return "conv2d group fprop (groups " + std::to_string(g.groups) + ")";
    const bool zeros = g.upsample[0] * g.upsample[1] * g.upsample[2] > 1;
    return std::string(g.three_d ? "conv3d" : "conv2d") + " dgrad (a transposed convolution" +
           (g.groups > 1 ? " of " + std::to_string(g.groups) + " groups on a block-diagonal filter"
                         : std::string()) +
           ", " +
           (zeros ? "unit stride over x with zeros inserted for stride " +
                        std::to_string(g.upsample[0]) + "x" + std::to_string(g.upsample[1]) +
                        "x" + std::to_string(g.upsample[2])
                  : strided(g) ? "strided" : "unit stride") +
           ")";
}

Expected<std::string> conv_form_kernel(const dsl::Kernel& kernel, const ConvGeometry& g,
                                       const ConvKernelShape& shape) {
    const dsl::GemmConfig& c = kernel.gemm;
    std::ostringstream o;
    const std::string head = "    Element, Layout, Element, Layout, float, Layout, ElementAccumulator,\n"
                             "    " + std::string(shape.math.op_class) + ", cutlass::arch::Sm80,\n"
                             "    ThreadblockShape, WarpShape, InstructionShape, EpilogueOp, "
                             "Swizzle, " + std::to_string(shape.stages) + ",\n    " +
                             shape.math.op + ",\n";
    o << "constexpr int kAlignmentB = " << g.alignment_b << ";\n";
    if (g.form == ConvForm::kDepthwise) {
        auto tile = depthwise_tile(kernel, g);
        if (!tile) return tile.error();
        return o.str() + *tile;
    }
    if (g.form == ConvForm::kGroupFprop) {
        // CUTLASS's group fprop runs one group per CTA (kSingleGroup: the filters per group a
        // multiple of tile N; the optimized iterator) or several groups per CTA (kMultipleGroup:
        // tile N a multiple of the filters per group; the analytic iterator only, and the CTA
        // walks its groups' C/groups * R * S one group after another, so depthwise spends
        // tile N / (K / groups) times the MMA work of one group).
        const int64_t kg = g.k / g.groups;
        const bool single = kg % c.tile_n == 0;
        if (!single && c.tile_n % kg != 0)
            return unsupported(kernel, "tile N " + std::to_string(c.tile_n) + " with " +
                                           std::to_string(kg) + " filters per group (CUTLASS's "
                                           "group fprop needs the filters per group a multiple "
                                           "of tile N, or tile N a multiple of them)");
        if (!single && c.iterator == dsl::ConvIterator::kOptimized)
            return unsupported(kernel, "iterator optimized with " + std::to_string(kg) +
                                           " filters per group under tile N " +
                                           std::to_string(c.tile_n) + " (several groups per CTA "
                                           "run on CUTLASS's analytic iterator only; use "
                                           "iterator auto)");
        o << "constexpr int kGroups = " << g.groups << ";\n"
          << "using Swizzle = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<"
          << c.swizzle << ">;\n"
          << "// D = 1 * accumulator + 0 * C: beta 0 never reads C\n"
          << "using EpilogueOp = cutlass::epilogue::thread::LinearCombination<\n"
          << "    float, kAlignmentD, ElementAccumulator, float>;\n"
          << "using ConvKernel = typename cutlass::conv::kernel::DefaultConv2dGroupFprop<\n"
          << head << "    cutlass::conv::GroupMode::"
          << (single ? "kSingleGroup, cutlass::conv::IteratorAlgorithm::kOptimized"
                     : "kMultipleGroup, cutlass::conv::IteratorAlgorithm::kAnalytic")
          << ",\n    cutlass::conv::StrideSupport::kStrided, kAlignment, kAlignmentB>::Kernel;\n";
        return o.str();
    }
    // dgrad: unit stride on the optimized unity iterators; otherwise the strided dgrad, whose
    // 2-D kernel (ImplicitGemmConvolutionStridedDgrad) walks one stride phase per CTA row and
    // takes CUTLASS's StridedDgradIdentityThreadblockSwizzle (N = 1, 4 or 8 only); CUTLASS's 3-D
    // strided dgrad is the analytic iterator on the plain implicit GEMM.
    const bool unity = !strided(g);
    o << "constexpr int kOutPadH = " << g.output_padding[0] << ", kOutPadW = "
      << g.output_padding[1] << ", kOutPadD = " << g.output_padding_d
      << ";  // output_padding: rows of y past the last input's reach\n"
      << "constexpr int kUpStrideD = " << g.upsample[0] << ", kUpStrideH = " << g.upsample[1]
      << ", kUpStrideW = " << g.upsample[2]
      << ";  // x staged with stride - 1 zeros between neighbours (1: as it is)\n";
    if (!unity && !g.three_d) {
        if (c.swizzle != 1 && c.swizzle != 4 && c.swizzle != 8)
            return unsupported(kernel, "swizzle " + std::to_string(c.swizzle) +
                                           " for a strided transposed convolution (CUTLASS's "
                                           "strided dgrad swizzle takes 1, 4 or 8)");
        o << "using Swizzle = cutlass::conv::threadblock::StridedDgradIdentityThreadblockSwizzle<"
          << c.swizzle << ">;\n";
    } else {
        o << "using Swizzle = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<"
          << c.swizzle << ">;\n";
    }
    o << "// D = 1 * accumulator + 0 * C: beta 0 never reads C\n"
      << "using EpilogueOp = cutlass::epilogue::thread::LinearCombination<\n"
      << "    float, kAlignmentD, ElementAccumulator, float>;\n"
      << "using ConvKernel = typename cutlass::conv::kernel::"
      << (g.three_d ? "DefaultConv3dDgrad" : "DefaultConv2dDgrad") << "<\n"
      << head << "    cutlass::conv::IteratorAlgorithm::"
      << (unity || !g.three_d ? "kOptimized" : "kAnalytic")
      << ",\n    cutlass::conv::StrideSupport::" << (unity ? "kUnity" : "kStrided")
      << (g.three_d ? ">::Kernel;\n"  // the 3-D dgrad reads 128-bit accesses
                    : ", kAlignment, kAlignmentB>::Kernel;\n");
    return o.str();
}

std::string conv_batch_parts(const std::string& x_image, const std::string& y_image,
                             const std::string& w_elems) {
    std::ostringstream h;
    h << "    // tensors of 2 GiB and more: the batch in parts (codegen/host_abi.h)\n"
      << "    const int64_t kLimit = (int64_t(1) << 31) - 1, x_image = " << x_image
      << ", y_image = " << y_image << ";\n"
      << "    if (int64_t(" << w_elems << ") * int64_t(sizeof(Element)) > kLimit)\n"
      << "        return KFORGE_BUILD_CANNOT_IMPLEMENT;\n"
      << "    const int64_t x_fit = kLimit / (x_image * int64_t(sizeof(Element))),\n"
      << "        y_fit = kLimit / (y_image * int64_t(sizeof(float)));\n"
      << "    const int64_t per_part = x_fit < y_fit ? x_fit : y_fit;\n"
      << "    if (per_part < 1) return KFORGE_BUILD_CANNOT_IMPLEMENT;  // one image is too large\n"
      << "    const int64_t parts = (N + per_part - 1) / per_part;\n"
      << "    if (in->part < 0 || in->part >= parts) return KFORGE_BUILD_BAD_ARGS;\n"
      << "    const int64_t first = int64_t(in->part) * per_part;\n"
      << "    N = N - first < per_part ? N - first : per_part;\n"
      << "    out->parts = uint32_t(parts);\n"
      << "    void* tensors[3] = {static_cast<Element*>(in->tensors[0]) + first * x_image,\n"
      << "                        in->tensors[1],\n"
      << "                        static_cast<float*>(in->tensors[2]) + first * y_image};\n";
    return h.str();
}

std::string conv_form_host_problem(const ConvGeometry& g) {
    std::ostringstream h;
    h << "    if (N < 1 || C < 1 || H < 1 || W < 1 || K < 1 || R < 1 || S < 1 || D < 1 || T < 1)\n"
      << "        return KFORGE_BUILD_BAD_ARGS;\n";
    if (g.form == ConvForm::kDepthwise)  // the filter size is compiled in (FilterShape)
        h << "    if (C != K || R != kFilterR || S != kFilterS) return KFORGE_BUILD_BAD_ARGS;\n"
          << "    // channels (= filters = groups) padded with zeros to whole CTAs of OutputTile::kC:\n"
          << "    // a zero channel's zero filter gives a zero output that nothing reads\n"
          << "    const int64_t Cx = (C + OutputTile::kC - 1) / OutputTile::kC * OutputTile::kC,\n"
          << "        Kx = Cx, Gx = Cx;\n";
    else if (g.form == ConvForm::kGroupFprop)
        h << "    const int64_t Cx = C, Kx = K, Gx = kGroups;\n";
    if (g.form == ConvForm::kGroupFprop || g.form == ConvForm::kDepthwise) {
        h << "    if (Cx % Gx != 0 || Kx % Gx != 0) return KFORGE_BUILD_BAD_ARGS;\n"
          << "    if (H + 2 * kPadH < kDilationH * (R - 1) + 1 || W + 2 * kPadW < kDilationW * (S - 1) + 1)\n"
          << "        return KFORGE_BUILD_BAD_ARGS;\n"
          << "    const int64_t P = (H + 2 * kPadH - kDilationH * (R - 1) - 1) / kStrideH + 1;\n"
          << "    const int64_t Q = (W + 2 * kPadW - kDilationW * (S - 1) - 1) / kStrideW + 1;\n"
          << "    // each group's channels and filters in place\n"
          << conv_batch_parts("H * W * Cx", "P * Q * Kx", "Kx * R * S * (Cx / Gx)")
          << (g.form == ConvForm::kDepthwise
                  // The direct convolution's grid is (1, channel groups, splits): CTA z walks
                  // output tiles z, z + splits, ... of N x P x Q (its "split K" splits the
                  // output, nothing is reduced), so splits spread the tiles over the SMs: four
                  // CTAs per SM, at most one per tile.
                  ? "    const int64_t tiles = N * ((P + OutputTile::kH - 1) / OutputTile::kH) *\n"
                    "        ((Q + OutputTile::kW - 1) / OutputTile::kW);\n"
                    "    const int64_t channel_ctas = Kx / OutputTile::kC;\n"
                    "    int64_t splits = int64_t(in->sm_count > 0 ? in->sm_count : 1) * 4 / channel_ctas;\n"
                    "    splits = splits < 1 ? 1 : splits > tiles ? tiles : splits;\n"
                    "    splits = splits > 65535 ? 65535 : splits;\n"
                  : "    const int64_t splits = 1;\n")
          << "    cutlass::conv::Conv2dProblemSize problem(int(N), int(H), int(W), int(Cx), int(Kx),\n"
          << "        int(R), int(S), int(P), int(Q), kPadH, kPadW, kStrideH, kStrideW, kDilationH,\n"
          << "        kDilationW, cutlass::conv::Mode::kCrossCorrelation, int(splits), int(Gx));\n"
          << "    cutlass::TensorRef<Element, Layout> ref_x(static_cast<Element*>(tensors[0]),\n"
          << "        Layout::packed({int(N), int(H), int(W), int(Cx)}));\n"
          << "    cutlass::TensorRef<Element, Layout> ref_w(static_cast<Element*>(tensors[1]),\n"
          << "        Layout::packed({int(Kx), int(R), int(S), int(Cx / Gx)}));\n"
          << "    cutlass::TensorRef<float, Layout> ref_y(static_cast<float*>(tensors[2]),\n"
          << "        Layout::packed({int(N), int(P), int(Q), int(Kx)}));\n";
        return h.str();
    }
    // x as staged (zeros inserted: (in - 1) * stride + 1 per axis), then the transposed
    // convolution's output: (in - 1) * stride - 2 * padding + dilation * (taps - 1) +
    // output_padding + 1 per axis, the size of dgrad's input gradient.
    h << "    const int64_t Ds = (D - 1) * kUpStrideD + 1, Hs = (H - 1) * kUpStrideH + 1,\n"
      << "        Ws = (W - 1) * kUpStrideW + 1;\n"
      << "    const int64_t P = (Hs - 1) * kStrideH - 2 * kPadH + kDilationH * (R - 1) + kOutPadH + 1;\n"
      << "    const int64_t Q = (Ws - 1) * kStrideW - 2 * kPadW + kDilationW * (S - 1) + kOutPadW + 1;\n"
      << "    const int64_t Z = " << (g.three_d
                                          ? "(Ds - 1) * kStrideD - 2 * kPadD + kDilationD * (T - 1) + kOutPadD + 1"
                                          : "1")
      << ";\n"
      << "    if (P < 1 || Q < 1 || Z < 1) return KFORGE_BUILD_BAD_ARGS;\n"
      << "    // both channel counts padded to 16 bytes, as the plan's workspace buffers\n"
      << "    const int64_t Cp = (C + kChannelMultiple - 1) / kChannelMultiple * kChannelMultiple;\n"
      << "    const int64_t Kp = (K + kChannelMultiple - 1) / kChannelMultiple * kChannelMultiple;\n"
      << conv_batch_parts("Ds * Hs * Ws * Cp", "Z * P * Q * Kp", "Cp * T * R * S * Kp")
      << "    // dgrad's names: the gradient dx [N,P,Q,Kp] (its H, W, C), dy = x as staged [N,Hs,Ws,Cp] (its P, Q,\n"
      << "    // K), the filter [Cp,R,S,Kp] (KRSC)\n";
    if (g.three_d)
        h << "    cutlass::conv::Conv3dProblemSize problem(int(N), int(Z), int(P), int(Q), int(Kp),\n"
          << "        int(Cp), int(T), int(R), int(S), int(Ds), int(Hs), int(Ws), kPadD, kPadH, kPadW,\n"
          << "        kStrideD, kStrideH, kStrideW, kDilationD, kDilationH, kDilationW,\n"
          << "        cutlass::conv::Mode::kCrossCorrelation, /*split_k_slices=*/1, /*groups=*/1);\n"
          << "    cutlass::TensorRef<Element, Layout> ref_x(static_cast<Element*>(tensors[0]),\n"
          << "        Layout::packed({int(N), int(Ds), int(Hs), int(Ws), int(Cp)}));\n"
          << "    cutlass::TensorRef<Element, Layout> ref_w(static_cast<Element*>(tensors[1]),\n"
          << "        Layout::packed({int(Cp), int(T), int(R), int(S), int(Kp)}));\n"
          << "    cutlass::TensorRef<float, Layout> ref_y(static_cast<float*>(tensors[2]),\n"
          << "        Layout::packed({int(N), int(Z), int(P), int(Q), int(Kp)}));\n";
    else
        h << "    cutlass::conv::Conv2dProblemSize problem(int(N), int(P), int(Q), int(Kp), int(Cp),\n"
          << "        int(R), int(S), int(Hs), int(Ws), kPadH, kPadW, kStrideH, kStrideW, kDilationH,\n"
          << "        kDilationW, cutlass::conv::Mode::kCrossCorrelation, /*split_k_slices=*/1,\n"
          << "        /*groups=*/1);\n"
          << "    cutlass::TensorRef<Element, Layout> ref_x(static_cast<Element*>(tensors[0]),\n"
          << "        Layout::packed({int(N), int(Hs), int(Ws), int(Cp)}));\n"
          << "    cutlass::TensorRef<Element, Layout> ref_w(static_cast<Element*>(tensors[1]),\n"
          << "        Layout::packed({int(Cp), int(R), int(S), int(Kp)}));\n"
          << "    cutlass::TensorRef<float, Layout> ref_y(static_cast<float*>(tensors[2]),\n"
          << "        Layout::packed({int(N), int(P), int(Q), int(Kp)}));\n";
    return h.str();
}

}  // namespace kforge::codegen
