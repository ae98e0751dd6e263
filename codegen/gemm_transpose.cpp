// See gemm_transpose.h.
#include "codegen/gemm_transpose.h"

#include <utility>

namespace kforge::codegen {

Tf32Operands classify_tf32_operands(const GemmSpec& g) {
    if (g.math != dsl::MathMode::kTf32) return Tf32Operands::kNative;
    if (g.a_row_major && !g.b_col_major) return Tf32Operands::kSwap;
    if (!g.a_row_major && !g.b_col_major) return Tf32Operands::kUnsupported;
    return Tf32Operands::kNative;
}

GemmSpec transpose_gemm(const GemmSpec& g) {
    GemmSpec t = g;
    t.swapped_ab = true;
    std::swap(t.a, t.b);
    std::swap(t.dtype_a, t.dtype_b);
    // B[K,N] read as A'[M'=N, K] is M'-major; A[M,K] read as B'[N'=M, K] is K-major.
    t.a_row_major = g.b_col_major;
    t.b_col_major = g.a_row_major;
    std::swap(t.dim_m, t.dim_n);
    std::swap(t.m, t.n);
    t.d_col_major = !g.d_col_major;
    auto& c = t.config;
    std::swap(c.tile_m, c.tile_n);
    std::swap(c.cluster_m, c.cluster_n);
    if (c.raster == dsl::Raster::kAlongM) c.raster = dsl::Raster::kAlongN;
    else if (c.raster == dsl::Raster::kAlongN) c.raster = dsl::Raster::kAlongM;
    for (EpiStep& s : t.steps) {
        if (s.broadcast == Broadcast::kRow) s.broadcast = Broadcast::kCol;
        else if (s.broadcast == Broadcast::kCol) s.broadcast = Broadcast::kRow;
    }
    std::swap(t.tensor_order[0], t.tensor_order[1]);
    return t;
}

}  // namespace kforge::codegen
