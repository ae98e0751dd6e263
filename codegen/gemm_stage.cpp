// See gemm_stage.h.
#include "codegen/gemm_stage.h"

#include <algorithm>

#include "codegen/gemm_emit_common.h"
#include "codegen/kernel_entry.h"
#include "dsl/math_policy.h"

namespace kforge::codegen {
namespace {

constexpr int kTile = 32;         // kernels/stage_operand.cuh kStageTile
constexpr int kTileRows = 8;      // kStageTileRows
constexpr int64_t kMaxGridYZ = 65535;

// Part p of a 3xTF32 operand's K axis holds lo where bit p is set: A' = [hi|hi|lo],
// B' = [hi;lo;hi], so that A'B' = hi hi + hi lo + lo hi.
constexpr int kLoMaskA = 0b100;
constexpr int kLoMaskB = 0b010;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

OperandStaging plan_operand_staging(dsl::Schedule schedule, dsl::MathMode math, bool a_k_major,
                                    bool b_k_major) {
    OperandStaging s;
    if (schedule == dsl::Schedule::kMultistage) return s;
    if (math == dsl::MathMode::kTf32x3) {
        s.stage_a = s.stage_b = true;
        s.k_parts = 3;
    } else if (math == dsl::MathMode::kTf32) {
        s.stage_a = !a_k_major;
        s.stage_b = !b_k_major;
    }
    s.a_transposed = s.stage_a && !a_k_major;
    s.b_transposed = s.stage_b && !b_k_major;
    return s;
}

OperandStaging plan_operand_staging(const dsl::Kernel& k, PrecisionPolicy policy,
                                    DType operand_dtype) {
    if (k.kind != dsl::KernelKind::kGemm || k.args.size() != 2) return {};
    // auto on bf16/f16 operands (bf16/f16) and a refused math stage nothing
    const dsl::MathMode math = dsl::resolve_math(policy, operand_dtype, k.gemm.math).math;
    const auto& a = k.args[0].dims;
    const auto& b = k.args[1].dims;
    const dsl::TensorRef* d = nullptr;
    for (const auto& c : k.chain)
        if (c.kind == dsl::ChainOpKind::kStore && c.tensor && !d) d = &*c.tensor;
    if (a.size() < 2 || b.size() < 2 || !d || d->dims.size() < 2) return {};
    // The layout as the lowering reads it (analyze_gemm): names decide, or matmul's order.
    const auto layout = resolve_gemm_layout({a.end() - 2, a.end()}, {b.end() - 2, b.end()},
                                            d->dims[d->dims.size() - 2], d->dims.back());
    if (!layout) return {};
    return plan_operand_staging(k.gemm.schedule, math, layout->a_row_major, layout->b_col_major);
}

std::string staged_buffer_name(const std::string& kernel, const std::string& operand) {
    return kernel + "_staged_" + operand;
}

Expected<StagedCode> stage_operands(GemmSpec& g, const OperandStaging& staging,
                                    const LowerContext& ctx) {
    StagedCode out;
    if (!staging.any()) return out;
    struct Operand {
        bool stage;
        bool transposed;
        int lo_mask;
        std::string* name;
        DType* dtype;
        bool* k_major;
        int64_t mn;
        const char* role;
        int slot;  // index in tensor_order
        const bool* batched;
    };
    const int parts = staging.k_parts;
    Operand ops[] = {
        {staging.stage_a, staging.a_transposed, parts == 3 ? kLoMaskA : 0, &g.a, &g.dtype_a,
         &g.a_row_major, g.m, "a", 0, &g.a_batched},
        {staging.stage_b, staging.b_transposed, parts == 3 ? kLoMaskB : 0, &g.b, &g.dtype_b,
         &g.b_col_major, g.n, "b", 1, &g.b_batched},
    };
    std::string device = "#include \"kernels/stage_operand.cuh\"\n";
    for (Operand& op : ops) {
        if (!op.stage) continue;
        const std::string source = *op.name;
        if (*op.dtype != DType::kF32)
            return make_error(g.kernel, "not supported by the CUTLASS lowering: staging operand " +
                                            source + " of dtype " +
                                            std::string(to_string(*op.dtype)) + " (f32 only)");
        const std::string buffer = staged_buffer_name(g.kernel, source);
        if (ctx.tensors.count(buffer))
            return make_error(g.kernel, "the staged copy of " + source + " would be named " +
                                            buffer + ", a tensor of the program: rename it");
        // Source per batch: [rows, cols] row-major; K is cols (K-major) or rows (transposed).
        const int64_t rows = op.transposed ? g.k : op.mn;
        const int64_t cols = op.transposed ? op.mn : g.k;
        const int64_t grid_x = ceil_div(cols, kTile), grid_y = ceil_div(rows, kTile);
        // an operand without the batch dims (batch stride 0) is staged once
        const int64_t batches = *op.batched ? g.l : 1;
        if (grid_y > kMaxGridYZ || batches > kMaxGridYZ || grid_x > 0x7fffffff)
            return make_error(g.kernel, "not supported by the CUTLASS lowering: staging " + source +
                                            " needs a grid of " + std::to_string(grid_x) + " x " +
                                            std::to_string(grid_y) + " x " + std::to_string(batches) +
                                            " blocks (y and z at most 65535)");
        BufferDecl b;
        b.name = buffer;
        b.dtype = DType::kF32;
        if (!g.dims_batch.empty() && *op.batched) b.shape.push_back(g.l);
        b.shape.push_back(op.mn);
        b.shape.push_back(parts * g.k);
        b.workspace = true;
        out.buffers.push_back(b);

        EntryParams params;
        params.add_tensor(source, "float", false);
        params.add_workspace(buffer);
        params.add_int64("rows", rows);
        params.add_int64("cols", cols);
        const std::string symbol = symbol_of(g.kernel) + "_stage_" + op.role;
        device += "// kernel " + g.kernel + ": " + source + " staged " +
                  (parts == 3 ? std::string("as tf32 hi/lo parts along K' = 3K")
                              : std::string("as a tf32-rounded copy")) +
                  (op.transposed ? ", transposed to K-major" : ", K-major") + " into " + buffer +
                  "\nextern \"C\" __global__ void __launch_bounds__(" +
                  std::to_string(kTile * kTileRows) + ") " + symbol + "(" + params.signature() +
                  ") {\n    kforge::stage_operand<" + (op.transposed ? "true" : "false") + ", " +
                  std::to_string(parts) + ", " + std::to_string(op.lo_mask) + ">(t_" + source +
                  ", w_" + buffer + ", rows, cols);\n}\n";
        KernelLaunch l;
        l.name = g.kernel;
        l.symbol = symbol;
        l.grid = {static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y),
                  static_cast<unsigned>(std::max<int64_t>(batches, 1))};
        l.block = {static_cast<unsigned>(kTile), static_cast<unsigned>(kTileRows), 1};
        l.params = params.plan_params();
        out.launches.push_back(l);

        *op.name = buffer;
        *op.k_major = true;
        g.tensor_order[op.slot] = buffer;
    }
    g.k_parts = parts;
    out.device_source = device + "\n";
    return out;
}

}  // namespace kforge::codegen
