// See gemm_emit_common.h.
#include "codegen/gemm_emit_common.h"

#include <set>

#include "codegen/host_abi.h"

namespace kforge::codegen {

std::string cutlass_prelude(bool sm90, bool sm80) {
    std::string s = R"(#include <cstring>

#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/numeric_types.h"
#include "cutlass/epilogue/thread/activation.h"
#include "cutlass/util/packed_stride.hpp"
#include "kernels/act_approx.cuh"
)";
    if (sm90)
        s += R"(#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
)";
    if (sm80)
        s += R"(#include "cutlass/gemm/kernel/default_gemm_universal_with_visitor.h"
#include "cutlass/epilogue/threadblock/fusion/visitors.hpp"
#include "cutlass/gemm/threadblock/threadblock_swizzle.h"
)";
    // the version in the source text: the compile cache (keyed by it) never serves a library
    // built against another ABI
    s += "\n\nstatic_assert(KFORGE_HOST_ABI_VERSION == " + std::to_string(KFORGE_HOST_ABI_VERSION) +
         ", \"kforge host ABI version mismatch\");";
    s += R"(

namespace kforge_cutlass {
// Applies a scalar float functor element-wise (epilogue visitors call functors on Arrays).
template <class Op, class T>
struct ScalarApply {
    CUTLASS_DEVICE T operator()(T const& x) const { return T(Op{}(float(x))); }
};
template <class Op, class E, int N>
struct ScalarApply<Op, cutlass::Array<E, N>> {
    CUTLASS_DEVICE cutlass::Array<E, N> operator()(cutlass::Array<E, N> const& x) const {
        cutlass::Array<E, N> y;
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < N; ++i) y[i] = E(Op{}(float(x[i])));
        return y;
    }
};
}  // namespace kforge_cutlass
)";
    return s;
}

Sm80MathTypes sm80_math_types(dsl::MathMode m) {
    switch (m) {
        case dsl::MathMode::kF32Simt:
            return {"cutlass::arch::OpClassSimt", "cutlass::gemm::GemmShape<1, 1, 1>",
                    "cutlass::arch::OpMultiplyAdd"};
        case dsl::MathMode::kTf32:
            return {"cutlass::arch::OpClassTensorOp", "cutlass::gemm::GemmShape<16, 8, 8>",
                    "cutlass::arch::OpMultiplyAdd"};
        case dsl::MathMode::kTf32x3:
            return {"cutlass::arch::OpClassTensorOp", "cutlass::gemm::GemmShape<16, 8, 8>",
                    "cutlass::arch::OpMultiplyAddFastF32"};
        default:
            return {"cutlass::arch::OpClassTensorOp", "cutlass::gemm::GemmShape<16, 8, 16>",
                    "cutlass::arch::OpMultiplyAdd"};
    }
}

std::string cutlass_gemm_shape(int m, int n, int k) {
    return "cutlass::gemm::GemmShape<" + std::to_string(m) + ", " + std::to_string(n) + ", " +
           std::to_string(k) + ">";
}

std::string symbol_of(const std::string& kernel) { return "kforge_" + kernel; }
std::string builder_symbol_of(const std::string& kernel) { return "kforge_build_" + kernel; }

std::string builder_head(const GemmSpec& spec, const LowerContext& ctx, const std::string& fn) {
    std::string s = "extern \"C\" int " + fn +
                    "(const KforgeBuildArgs* in, KforgeBuiltLaunch* out) {\n"
                    "    using namespace cute;\n"
                    "    if (in == nullptr || out == nullptr || "
                    "in->abi_version != KFORGE_HOST_ABI_VERSION ||\n"
                    "        in->num_tensors != " + std::to_string(spec.tensor_order.size()) +
                    " || in->tensors == nullptr)\n"
                    "        return KFORGE_BUILD_BAD_ARGS;\n"
                    "    void* const* tensors = in->tensors;\n";
    // No shape literal in the source: dims always come from the harness, so one compiled kernel
    // serves every shape of the problem (the compile cache, keyed by source, then hits across the
    // small, check and full shapes of one evaluation).
    s += "    int64_t M = 1, N = 1, K = 1, L = 1;\n";
    if (!spec.dims_fold.empty()) s += "    int64_t F = 1;  // folded into M\n";
    s += "    if (in->dims == nullptr || in->num_dims != " +
         std::to_string(ctx.problem->dims.size()) + ") return KFORGE_BUILD_BAD_ARGS;\n    {\n";
    // M and N may share a name (q @ k^T: [T,E] x [T,E] -> [T,T]): each role on its own line. A
    // dim written by its extent ("96": no problem dim) is that number.
    const bool one_batch = spec.dims_batch.size() == 1;
    const auto assign = [&](const std::string& name, const std::string& value) {
        std::string t;
        for (auto [role, var] : {std::pair{&spec.dim_m, "M"}, {&spec.dim_n, "N"}, {&spec.dim_k, "K"}})
            if (*role == name) t += std::string("        ") + var + " = " + value + ";\n";
        for (const auto& b : spec.dims_batch)  // a name twice ([b,b,M,K]) multiplies twice
            if (b == name) t += std::string("        L ") + (one_batch ? "= " : "*= ") + value + ";\n";
        for (const auto& f : spec.dims_fold)
            if (f == name) t += "        F *= " + value + ";\n";
        return t;
    };
    int i = 0;
    for (const auto& [name, value] : ctx.problem->dims) {
        (void)value;
        s += assign(name, "in->dims[" + std::to_string(i) + "]");
        ++i;
    }
    std::set<std::string> literal;
    for (const auto* names : {&spec.dims_batch, &spec.dims_fold})
        for (const auto& d : *names) literal.insert(d);
    for (const auto& d : {spec.dim_m, spec.dim_n, spec.dim_k}) literal.insert(d);
    for (const auto& d : literal)
        if (!ctx.problem->dims.count(d) && !d.empty() &&
            d.find_first_not_of("0123456789") == std::string::npos)
            s += assign(d, d);
    s += "    }\n";
    if (!spec.dims_fold.empty()) s += "    M *= F;\n";
    s += "    if (M < 1 || N < 1 || K < 1 || L < 1) return KFORGE_BUILD_BAD_ARGS;\n";
    return s;
}

std::string builder_tail(const GemmSpec& /*spec*/, bool sm90) {
    std::string s;
    if (sm90) {
        s += "    if (!Gemm::can_implement(args))\n"
             "        return KFORGE_BUILD_CANNOT_IMPLEMENT;\n"
             "    size_t workspace_bytes = Gemm::get_workspace_size(args);\n";
    } else {
        s += "    if (Gemm::can_implement(args) != cutlass::Status::kSuccess)\n"
             "        return KFORGE_BUILD_CANNOT_IMPLEMENT;\n"
             "    typename Gemm::Params params(args, in->sm_count, /*sm_occupancy=*/1);\n"
             "    size_t workspace_bytes = params.get_workspace_size();\n";
    }
    s += "    out->workspace_bytes = workspace_bytes;\n"
         "    if (workspace_bytes > 0 && in->workspace == nullptr)\n"
         "        return KFORGE_BUILD_NEED_WORKSPACE;\n";
    if (sm90) {
        s += "    typename Gemm::Params params = Gemm::to_underlying_arguments(args, "
             "in->workspace);\n"
             "    dim3 grid = Gemm::get_grid_shape(params);\n"
             "    dim3 block = Gemm::get_block_shape();\n"
             "    unsigned smem = Gemm::SharedStorageSize;\n"
             "    unsigned cluster_m = size<0>(ClusterShape{}), cluster_n = "
             "size<1>(ClusterShape{});\n";
    } else {
        s += "    dim3 grid = params.get_grid_dims();\n"
             "    dim3 block(Gemm::kThreadCount, 1, 1);\n"
             "    unsigned smem = sizeof(typename Gemm::SharedStorage);\n"
             "    unsigned cluster_m = 1, cluster_n = 1;\n";
    }
    s += "    if (out->params == nullptr || out->params_capacity < sizeof(params))\n"
         "        return KFORGE_BUILD_PARAMS_TOO_LARGE;\n"
         "    std::memcpy(out->params, &params, sizeof(params));\n"
         "    out->params_bytes = sizeof(params);\n"
         "    out->grid[0] = grid.x; out->grid[1] = grid.y; out->grid[2] = grid.z;\n"
         "    out->block[0] = block.x; out->block[1] = block.y; out->block[2] = block.z;\n"
         "    out->cluster[0] = cluster_m; out->cluster[1] = cluster_n; out->cluster[2] = 1;\n"
         "    out->smem_bytes = smem;\n"
         "    return KFORGE_BUILD_OK;\n}\n";
    return s;
}

namespace {

// A tensor's contiguous extent: the elements of one row in memory.
struct Extent {
    std::string what;
    std::string tensor;
    int64_t elements;
    DType dtype;
};

// A's, B's, D's and then each epilogue tensor's, in that order: D and a residual matrix are
// contiguous along N; a [M] or [N] broadcast along its one dim.
std::vector<Extent> contiguous_extents(const GemmSpec& g) {
    std::vector<Extent> extents = {
        {"its contiguous dim", g.a, g.a_row_major ? g.k * g.k_parts : g.m, g.dtype_a},
        {"its contiguous dim", g.b, g.b_col_major ? g.k * g.k_parts : g.n, g.dtype_b},
        {g.dim_n, g.d, g.n, g.dtype_d},
    };
    for (const auto& s : g.steps) {
        if (s.kind != EpiStepKind::kBinaryTensor || s.broadcast == Broadcast::kScalar) continue;
        const bool along_m = s.broadcast == Broadcast::kCol;
        extents.push_back({along_m ? g.dim_m : g.dim_n, s.tensor, along_m ? g.m : g.n, s.dtype});
    }
    return extents;
}

}  // namespace

Status check_alignment(const GemmSpec& g, const dsl::Kernel& kernel) {
    for (const auto& e : contiguous_extents(g)) {
        if ((e.elements * dtype_bytes(e.dtype)) % 16 == 0) continue;
        return make_error(kernel.name, std::string("not supported by the CUTLASS lowering: ") +
                                           "tensor " + e.tensor + ": " + e.what + " (" +
                                           std::to_string(e.elements) + " elements) is not a "
                                           "multiple of 16 bytes (TMA and vector accesses "
                                           "need it)");
    }
    return Ok{};
}

Expected<Sm80Alignment> sm80_alignment(const GemmSpec& g, const dsl::Kernel& kernel) {
    const std::vector<Extent> extents = contiguous_extents(g);
    // A and B: the widest access (16, 8 or 4 bytes, in elements of its dtype) that divides it.
    int ab[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
        const Extent& e = extents[static_cast<size_t>(i)];
        const int bytes = dtype_bytes(e.dtype);
        for (int width : {16, 8, 4})
            if (ab[i] == 0 && width >= bytes && (e.elements * bytes) % width == 0)
                ab[i] = width / bytes;
        if (ab[i] == 0)
            return make_error(kernel.name, "not supported by the CUTLASS lowering: tensor " +
                                               e.tensor + ": " + e.what + " (" +
                                               std::to_string(e.elements) + " elements) is not "
                                               "a multiple of 4 bytes (cp.async copies at least 4)");
    }
    // D and the epilogue's tensors share the output tile's access width (elements).
    auto fits = [&](int w) {
        for (size_t i = 2; i < extents.size(); ++i)
            if (extents[i].elements % w != 0 || w * dtype_bytes(extents[i].dtype) > 16)
                return false;
        return true;
    };
    int d = 16 / dtype_bytes(g.dtype_d);
    while (d > 1 && !fits(d)) d /= 2;
    return Sm80Alignment{ab[0], ab[1], d};
}

}  // namespace kforge::codegen
