// lower_attention: a checked `attention(Q, K, V [, M])` kernel to an extern "C" entry point that
// runs kforge's attention template (kernels/attention.cuh) with the geometry baked in as a
// struct of literals (rows, head dims, scale, the mask's kind, fill and broadcast strides) and
// the chain (codegen/chain.h) applied to each output element over O [batch.., S, F].
//
// Operands: bf16 / f16 inputs run the products on the tensor cores in their own type; f32
// inputs do so in bf16 / f16 under those policies and on the CUDA cores in f32 otherwise
// (dsl/attention.h). Grid: query tiles x batch entries in x; BM / 16 warps; dynamic shared memory
// as dsl/attention.h counts it.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "codegen/chain.h"
#include "codegen/kernel_entry.h"
#include "codegen/kernel_lowering.h"
#include "dsl/attention.h"

namespace kforge::codegen {
namespace {

// The struct's mask_offset body: the bool / float mask [.., S, L] broadcast (right-aligned, an
// extent-1 dim reads offset 0) into the scores [batch.., S, L], batch entry b decomposed.
std::string mask_offset_body(const std::vector<int64_t>& mask, const std::vector<int64_t>& scores) {
    const size_t r = scores.size(), rm = mask.size();
    std::vector<int64_t> stride(r, 0);
    int64_t run = 1;
    for (size_t i = rm; i-- > 0;) {
        if (mask[i] != 1) stride[i + (r - rm)] = run;
        run *= mask[i];
    }
    std::string s = "int64_t(s) * " + std::to_string(stride[r - 2]) + "LL + int64_t(l) * " +
                    std::to_string(stride[r - 1]) + "LL";
    int64_t inner = 1;  // batch entries per step of batch dim i
    for (size_t i = r - 2; i-- > 0;) {
        if (stride[i] != 0)
            s += " + (b / " + std::to_string(inner) + "LL % " + std::to_string(scores[i]) +
                 "LL) * " + std::to_string(stride[i]) + "LL";
        inner *= scores[i];
    }
    return s;
}

}  // namespace

Expected<KernelCode> lower_attention(const dsl::Kernel& kernel, const LowerContext& ctx) {
    const std::string where = "kernel " + kernel.name;
    const dsl::AttentionConfig& cfg = kernel.attention;
    if (cfg.impl == dsl::AttentionImpl::kCutlassFmha) return lower_attention_fmha(kernel, ctx);
    if (cfg.impl == dsl::AttentionImpl::kCutlassMea) return lower_attention_mea(kernel, ctx);
    if (kernel.args.size() != 3 && kernel.args.size() != 4)
        return make_error(where, "attention takes Q, K, V and an optional mask");
    if (cfg.tile_m % 16 || cfg.tile_n % 16 || cfg.tile_m < 16 || cfg.tile_m > 128 ||
        cfg.tile_n < 16 || cfg.tile_n > 128)
        return make_error(where, "attention tile must be 16..128 in steps of 16 each way");
    std::vector<const TensorInfo*> t;
    for (const dsl::TensorRef& a : kernel.args) {
        auto it = ctx.tensors.find(a.name);
        if (it == ctx.tensors.end()) return make_error(where, "unknown tensor " + a.name);
        t.push_back(&it->second);
    }
    const TensorInfo &q = *t[0], &k = *t[1], &v = *t[2];
    const size_t rank = q.shape.size();
    if (rank < 2 || k.shape.size() != rank || v.shape.size() != rank)
        return make_error(where, "Q, K and V must have one rank, 2 or more");
    int64_t batch = 1;
    for (size_t i = 0; i + 2 < rank; ++i) {
        if (k.shape[i] != q.shape[i] || v.shape[i] != q.shape[i])
            return make_error(where, "Q, K and V must share their batch extents");
        batch *= q.shape[i];
    }
    const int64_t s = q.shape[rank - 2], e = q.shape[rank - 1], l = k.shape[rank - 2],
                  f = v.shape[rank - 1];
    if (k.shape[rank - 1] != e || v.shape[rank - 2] != l)
        return make_error(where, "attention needs Q[..,S,E], K[..,L,E], V[..,L,F]");
    if (q.dtype != k.dtype || q.dtype != v.dtype)
        return make_error(where, "Q, K and V must have one dtype");
    auto in_type = cuda_float_type(q.dtype, where);
    if (!in_type) return in_type.error();
    const dsl::AttentionMath math = dsl::attention_math(q.dtype, ctx.problem->policy, cfg.f32_cores);
    auto op_type = cuda_float_type(math.operand, where);
    if (!op_type) return op_type.error();
    const int64_t smem = dsl::attention_smem_bytes(e, f, cfg.tile_m, cfg.tile_n,
                                                   math.operand_bytes(), math.math == 0);
    if (const std::string misfit = dsl::attention_misfit(e, f, cfg.tile_m, cfg.tile_n, math,
                                                         227 * 1024);
        !misfit.empty())
        return make_error(where, misfit);

    int mask_kind = 0;
    double fill = 0.0;
    std::string mask_type = "float", mask_offset = "0LL";
    std::vector<int64_t> scores(q.shape.begin(), q.shape.end() - 2);
    scores.push_back(s), scores.push_back(l);
    if (t.size() == 4) {
        const TensorInfo& m = *t[3];
        if (m.shape.size() > rank) return make_error(where, "the mask has more dims than the scores");
        for (size_t i = 0; i < m.shape.size(); ++i) {
            const int64_t want = scores[i + (rank - m.shape.size())];
            if (m.shape[i] != 1 && m.shape[i] != want)
                return make_error(where, "mask " + m.name + " does not broadcast to the scores");
        }
        mask_kind = m.dtype == DType::kBool ? 1 : 2;
        if (mask_kind == 1) {
            fill = dsl::attention_mask_fill(*ctx.problem, m.name);
            mask_type = "bool";
        } else {
            auto mt = cuda_float_type(m.dtype, where);
            if (!mt) return mt.error();
            mask_type = *mt;
        }
        mask_offset = mask_offset_body(m.shape, scores);
    }
    if (cfg.tri_mask != TriMask::kNone) {  // structured: from the indices, no mask tensor
        if (t.size() == 4) return make_error(where, "a structured mask and a mask tensor together");
        mask_kind = 3;
        fill = dsl::attention_tri_fill(*ctx.problem, cfg.tri_mask, cfg.tri_diagonal);
    }
    const int64_t diag = std::clamp<int64_t>(cfg.tri_diagonal, -(int64_t{1} << 30), int64_t{1} << 30);

    // The chain's space: O [batch.., S, F], named as the kernel names its operands.
    ChainSpace space;
    for (size_t i = 0; i + 2 < rank; ++i) space.dims.push_back(kernel.args[0].dims[i]);
    space.dims.push_back(kernel.args[0].dims[rank - 2]);
    space.dims.push_back(kernel.args[2].dims[rank - 1]);
    space.shape = std::vector<int64_t>(q.shape.begin(), q.shape.end() - 2);
    space.shape.push_back(s), space.shape.push_back(f);
    auto chain = emit_chain("kforge_" + kernel.name + "_chain", kernel.chain, space, std::nullopt,
                            ctx);
    if (!chain) return chain.error();

    EntryParams params;
    for (size_t i = 0; i < 3; ++i) params.add_tensor(kernel.args[i].name, *in_type, false);
    if (t.size() == 4) params.add_tensor(kernel.args[3].name, mask_type, false);
    params.add_chain(*chain);
    const std::string symbol = "kforge_" + kernel.name;
    const std::string geom = symbol + "_attention";
    const double scale = cfg.scale.value_or(1.0);
    std::ostringstream src;
    src << "// kernel " << kernel.name << ": attention over " << batch << " x " << s << " x " << l
        << " (E " << e << ", F " << f << "), " << *op_type << " operands"
        << (math.math == 3 ? " (3xTF32)" : math.math == 1 ? " (TF32)" : math.math == 0 ? " (f32 FMA)" : "")
        << "\n"
        << chain->definition << "struct " << geom << " {\n"
        << "    static constexpr int64_t kS = " << s << "LL, kL = " << l << "LL;\n"
        << "    static constexpr int kE = " << e << ", kF = " << f << ";\n"
        << "    static constexpr float kScale = " << cuda_float_literal(scale) << ";\n"
        << "    static constexpr int kMask = " << mask_kind << ";\n"
        << "    static constexpr float kFill = " << cuda_float_literal(fill) << ";\n"
        << "    static constexpr int kTri = "
        << (cfg.tri_mask == TriMask::kTril ? 1 : cfg.tri_mask == TriMask::kTriu ? 2 : 0)
        << ", kDiag = " << diag << ";\n"
        << "    static constexpr bool kSkip = "
        << ((mask_kind == 1 || mask_kind == 3) && std::isinf(fill) && fill < 0 ? "true" : "false")
        << ";\n"
        << "    static __device__ __forceinline__ int64_t mask_offset(int64_t b, int s, "
           "int64_t l) {\n"
        << "        (void)b; (void)s; (void)l;\n"
        << "        return " << mask_offset << ";\n    }\n};\n"
        << "extern \"C\" __global__ void __launch_bounds__(" << cfg.tile_m * 2 << ") " << symbol
        << "(" << params.signature() << ") {\n"
        << chain_init(*chain) << "    kforge::attention_forward<" << geom << ", " << cfg.tile_m
        << ", " << cfg.tile_n << ", " << *in_type << ", " << *op_type << ", " << mask_type
        << ", " << (math.math == 16 ? 0 : math.math) << ">(t_" << kernel.args[0].name << ", t_" << kernel.args[1].name << ", t_"
        << kernel.args[2].name << ", "
        << (t.size() == 4 ? "t_" + kernel.args[3].name
                          : std::string("static_cast<const float*>(nullptr)"))
        << ", chain);\n}\n";

    KernelCode code;
    code.device_source =
        "#include \"kernels/attention.cuh\"\n#include \"kernels/chain_ops.cuh\"\n" + src.str();
    KernelLaunch launch;
    launch.name = kernel.name;
    launch.symbol = symbol;
    const int64_t ctas = (s + cfg.tile_m - 1) / cfg.tile_m * batch;
    if (ctas > 0x7fffffff) return make_error(where, "attention grid past 2^31 - 1 CTAs");
    launch.grid = {unsigned(ctas), 1, 1};
    launch.block = {unsigned(cfg.tile_m * 2), 1, 1};
    launch.smem_bytes = unsigned(smem);
    launch.params = params.plan_params();
    code.launches.push_back(launch);
    return code;
}

}  // namespace kforge::codegen
