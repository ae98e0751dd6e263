// lower_attention_mea: an `attention(Q, K, V [, M]) impl cutlass_mea` kernel to CUTLASS's
// memory-efficient attention forward kernel (examples/41_fused_multi_head_attention/
// kernel_forward.h of the installed CUTLASS package, included from there: compile/ adds CUTLASS's
// examples folder to the include path) - an extern "C" __global__ entry running the
// AttentionKernel type the kernel's namespace defines, and an extern "C" param builder
// (codegen/host_abi.h) that fills its Params from the run-time dims, as the Hopper FMHA does
// (lower_attention_fmha.cpp), so one compile serves every shape of the problem.
//
// Where it applies is dsl/attention_mea.h's rule (checked again here on the tensor table, which
// knows program buffers' dtypes). Every batch dim folds into the kernel's batch (grid z) with
// num_heads 1: Q [.., S, E], K [.., L, E], V [.., L, F] and O [.., S, F] packed, rows E, E, F
// and F elements apart. A mask M (an additive attn_bias of the inputs' dtype) is packed too:
// its key rows L apart where it has the query rows (else stride 0), and S*L (or L) a batch
// entry where it has the batch dims (else 0). A causal `mask triu` diagonal d is the kernel's
// CausalFromTopLeft with causal_diagonal_offset d - 1. Where the head dims pass the key tile and
// the inputs are 16-bit, the kernel accumulates O in f32 across its passes over the value
// columns: the builder asks for that buffer as its workspace (B*S*F floats). A bool mask filled
// with -inf is converted to the additive form first (a launch of its own into a workspace of the
// inputs' dtype: adding -inf is filling with it), which makes the source shape-specific.
#include <algorithm>
#include <optional>
#include <string>

#include "codegen/chain.h"
#include "codegen/gemm_emit_common.h"
#include "codegen/gemm_spec.h"
#include "codegen/kernel_lowering.h"
#include "dsl/attention.h"
#include "dsl/attention_mea.h"

namespace kforge::codegen {
namespace {

// The compute capability's major of an arch name: sm_80 8, sm_90a 9, sm_100a 10 (0 for another).
int sm_major(const std::string& arch) {
    if (arch.rfind("sm_", 0) != 0) return 0;
    int v = 0;
    for (size_t i = 3; i < arch.size() && arch[i] >= '0' && arch[i] <= '9'; ++i)
        v = v * 10 + (arch[i] - '0');
    return v / 10;
}

}  // namespace

Expected<KernelCode> lower_attention_mea(const dsl::Kernel& kernel, const LowerContext& ctx) {
    const std::string where = "kernel " + kernel.name;
    const dsl::AttentionConfig& cfg = kernel.attention;
    auto ops = cutlass_attention_operands(kernel, ctx, "cutlass_mea");
    if (!ops) return ops.error();
    const std::vector<const TensorInfo*>& t = ops->args;
    const dsl::TensorRef* store = ops->store;
    const TensorInfo &q = *t[0], &k = *t[1], &v = *t[2], &o = *ops->o;
    const size_t rank = ops->rank;

    std::optional<dsl::MeaOperand> mask;
    if (t.size() == 4) {
        if (t[3]->shape.size() > rank)
            return make_error(where, "the mask has more dims than the scores");
        mask = dsl::MeaOperand{t[3]->dtype, t[3]->shape};
    }
    dsl::MeaFacts f = dsl::mea_facts(cfg, *ctx.problem, {q.dtype, q.shape}, {k.dtype, k.shape},
                                     {v.dtype, v.shape}, mask ? &*mask : nullptr,
                                     mask ? t[3]->name : std::string(), sm_major(ctx.arch));
    f.out = o.dtype;
    if (const std::string why = dsl::mea_misfit(cfg, f); !why.empty())
        return make_error(where, "impl cutlass_mea: " + why);

    // the builder's dims: B (every batch dim), S, L, E, F
    std::string dims_code;
    auto add = [&](const std::string& var, const TensorInfo& ti, size_t i) {
        return add_runtime_extent(dims_code, var, ti, i, *ctx.problem, where, "cutlass_mea");
    };
    for (size_t i = 0; i + 2 < rank; ++i)
        if (auto st = add("B", q, i); !st) return st.error();
    for (auto [var, ti, i] : {std::tuple{"S", &q, rank - 2}, {"L", &k, rank - 2},
                              {"E", &q, rank - 1}, {"F", &v, rank - 1}})
        if (auto st = add(var, *ti, i); !st) return st.error();

    const int64_t max_k = dsl::mea_max_k(cfg.mea_n, f.e, f.f);
    const bool aligned = dsl::mea_aligned(f);
    const bool accum_buffer = max_k > cfg.mea_n && q.dtype != DType::kF32;
    const std::string ns = "kforge_mea_" + kernel.name;
    const std::string element = cutlass_type(q.dtype);
    std::string dev;
    dev += "// kernel " + kernel.name + ": CUTLASS's memory-efficient attention " +
           "(41_fused_multi_head_attention), " + element + ", tile " +
           dsl::mea_tile_text(cfg.mea_m, cfg.mea_n) + ", kMaxK " + std::to_string(max_k) +
           (aligned ? ", aligned" : ", unaligned") + (f.mask ? ", additive mask" : "") +
           (cfg.tri_mask != TriMask::kNone ? ", causal" : "") + "\n";
    dev += "#include \"41_fused_multi_head_attention/kernel_forward.h\"\n";
    dev += "namespace " + ns + " {\n"
           "using Kernel = AttentionKernel<" + element + ", cutlass::arch::Sm80, " +
           (aligned ? "true" : "false") + ", " + std::to_string(cfg.mea_m) + ", " +
           std::to_string(cfg.mea_n) + ", " + std::to_string(max_k) + ", false, " +
           (f.mask ? "true" : "false") + ">;\n}  // namespace " + ns + "\n\n";
    // a bool mask (filled with -inf): converted to the additive one the kernel reads, into a
    // workspace of the inputs' dtype and the mask's shape, by a launch before the attention
    const bool convert = f.mask && t[3]->dtype == DType::kBool;
    const std::string bias = convert ? kernel.name + "_bias" : std::string();
    int64_t mask_numel = 1;
    if (convert) {
        for (int64_t e : t[3]->shape) mask_numel *= e;
        dev += "// kernel " + kernel.name + "'s bool mask as the additive one it reads\n"
               "extern \"C\" __global__ void __launch_bounds__(256)\nkforge_" + kernel.name +
               "_bias(const bool* __restrict__ t_" + t[3]->name + ", " + ns +
               "::Kernel::scalar_t* __restrict__ t_" + bias + ") {\n"
               "    using T = " + ns + "::Kernel::scalar_t;\n"
               "    for (int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x; i < " +
               std::to_string(mask_numel) + "LL;\n         i += int64_t(gridDim.x) * 256)\n"
               "        t_" + bias + "[i] = t_" + t[3]->name +
               "[i] ? T(-cutlass::platform::numeric_limits<float>::infinity()) : T(0.0f);\n}\n\n";
    }
    const std::string symbol = symbol_of(kernel.name);
    CutlassEntry entry = cutlass_entry(
        ns, symbol, dev,
        "extern \"C\" __global__ void\n__launch_bounds__(" + ns + "::Kernel::kNumThreads, " + ns +
            "::Kernel::kMinBlocksPerSm)\n" + symbol + "(typename " + ns +
            "::Kernel::Params p) {\n"
            "    if (!p.advance_to_block()) return;\n    " + ns +
            "::Kernel::attention_kernel(p);\n}\n");

    // the mask's strides, packed: rows L apart where it has them, a batch entry S*L (or L)
    const std::string bias_rows = f.mask_rows ? "int32_t(L)" : "0";
    const std::string bias_batch = !f.mask_batch ? "0" : f.mask_rows ? "S * L" : "L";
    const std::string tri_offset =
        cfg.tri_mask != TriMask::kNone ? std::to_string(cfg.tri_diagonal - 1) : "0";
    const int num_tensors = f.mask ? 5 : 4;
    const std::string builder = builder_symbol_of(kernel.name);
    std::string host;
    host += attention_builder_head(builder, num_tensors, ctx) +
            "    using namespace " + ns + ";\n"
            "    int64_t B = 1, S = 1, L = 1, E = 1, F = 1;\n" + dims_code +
            "    const int64_t kMax = 0x7fffffff;\n"
            "    if (B < 1 || S < 1 || L < 1 || E < 1 || F < 1 || B > 65535 || S * E > kMax ||\n"
            "        L * E > kMax || L * F > kMax || S * F > kMax || S * L > kMax)\n"
            "        return KFORGE_BUILD_BAD_ARGS;  // int strides, grid z\n"
            "    void* const* tensors = in->tensors;  // q, k, v, o[, mask]\n"
            "    using T = " + element + ";\n"
            "    typename Kernel::Params params;\n"
            "    params.query_ptr = static_cast<T*>(tensors[0]);\n"
            "    params.key_ptr = static_cast<T*>(tensors[1]);\n"
            "    params.value_ptr = static_cast<T*>(tensors[2]);\n"
            "    params.output_ptr = static_cast<T*>(tensors[3]);\n" +
            (f.mask ? "    params.attn_bias_ptr = static_cast<T*>(tensors[4]);\n"
                      "    params.bias_strideM = " + bias_rows + ";\n"
                      "    params.bias_strideB = " + bias_batch + ";\n"
                    : "") +
            "    params.scale = " + cuda_float_literal(f.scale) + ";\n"
            "    params.head_dim = int32_t(E);\n    params.head_dim_value = int32_t(F);\n"
            "    params.num_queries = int32_t(S);\n    params.num_keys = int32_t(L);\n"
            "    params.custom_mask_type = Kernel::" +
            (cfg.tri_mask != TriMask::kNone ? "CausalFromTopLeft" : "NoCustomMask") + ";\n"
            "    params.causal_diagonal_offset = " + tri_offset + "u;\n"
            "    params.q_strideM = int32_t(E);\n    params.k_strideM = int32_t(E);\n"
            "    params.v_strideM = int32_t(F);\n    params.o_strideM = int32_t(F);\n"
            "    // one head a batch entry: the head strides only keep the kernel off its\n"
            "    // one-query path (which reads them as the query stride)\n"
            "    params.q_strideH = int32_t(S * E);\n    params.k_strideH = int32_t(L * E);\n"
            "    params.v_strideH = int32_t(L * F);\n"
            "    params.q_strideB = S * E;\n    params.k_strideB = L * E;\n"
            "    params.v_strideB = L * F;\n"
            "    params.num_batches = int32_t(B);\n    params.num_heads = 1;\n" +
            (accum_buffer
                 ? "    out->workspace_bytes = uint64_t(B * S * F) * sizeof(float);\n"
                   "    if (in->workspace == nullptr) return KFORGE_BUILD_NEED_WORKSPACE;\n"
                   "    params.output_accum_ptr = static_cast<float*>(in->workspace);\n"
                 : "    out->workspace_bytes = 0;\n") +
            "    if (!Kernel::check_supported(params)) return KFORGE_BUILD_CANNOT_IMPLEMENT;\n"
            "    const dim3 grid = params.getBlocksGrid(), block = params.getThreadsGrid();\n" +
            attention_builder_tail("1", "1", "uint32_t(sizeof(typename Kernel::SharedStorage))");

    KernelCode code;
    code.device_source = std::move(dev);
    code.entry = std::move(entry);
    code.host_source = std::move(host);
    if (convert) {
        BufferDecl b;
        b.name = bias;
        b.dtype = q.dtype;
        b.shape = t[3]->shape;
        b.workspace = true;
        code.buffers.push_back(b);
        KernelLaunch c;
        c.name = kernel.name + "_bias";
        c.symbol = "kforge_" + kernel.name + "_bias";
        c.grid = {unsigned(std::clamp<int64_t>((mask_numel + 255) / 256, 1, 65535)), 1, 1};
        c.block = {256, 1, 1};
        c.params = {KernelParam{ParamKind::kTensor, t[3]->name, 0, 0.0},
                    KernelParam{ParamKind::kTensor, bias, 0, 0.0}};
        code.launches.push_back(c);
    }
    KernelLaunch launch;
    launch.name = kernel.name;
    launch.symbol = symbol;
    launch.params = {KernelParam{ParamKind::kParamBlob, "", 0, 0.0}};
    launch.param_builder = builder;
    launch.builder_tensors = {kernel.args[0].name, kernel.args[1].name, kernel.args[2].name,
                              store->name};
    if (f.mask) launch.builder_tensors.push_back(convert ? bias : kernel.args[3].name);
    code.launches.push_back(launch);
    return code;
}

}  // namespace kforge::codegen
