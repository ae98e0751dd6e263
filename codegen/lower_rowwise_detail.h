// Internals of lower_rowwise shared by its two source files: the analysed kernel (shape
// reduced to rows x n, or outer x R x inner for a column reduction) and the emitters.
#pragma once

#include <string>
#include <vector>

#include "codegen/chain.h"
#include "codegen/kernel_lowering.h"

namespace kforge::codegen::detail {

struct RowwisePlan {
    const dsl::Kernel* kernel = nullptr;
    const TensorInfo* x = nullptr;
    const ChainCode* chain = nullptr;
    const ChainCode* pre = nullptr;  // reduce_rows: the `pre { .. }` prologue over the input
    size_t axis = 0;
    std::string tmpl, mode, header;
    // row kernels: rows x n; column reductions: outer x n x inner (n = the reduced length)
    bool column = false;
    // a reduction over a set of dims (`over N,H,W`): the input's axes reduced, ascending (the
    // row and column sizes below are not set: emit_set_reduce groups the dims itself)
    bool set = false;
    std::vector<size_t> set_axes;
    int64_t rows = 0, n = 0, outer = 0, inner = 0;
    // Row kernels: the row length the kernel's compile-time configuration (vector width, how a
    // row is held) is derived for: n, or the full shape's longer rows when lowered at a
    // correctness shape (LowerContext::config), so that both shapes share one source.
    int64_t config_n = 0;
    double eps = 1e-5;
    int64_t groups = 1, group_channels = 1, spatial = 1;
};

Expected<KernelCode> emit_row_kernel(const RowwisePlan& plan, const LowerContext& ctx);
// cumsum / cumprod (kernels/scan.cuh; lower_rowwise_scan.cpp).
Expected<KernelCode> emit_scan_rows(const RowwisePlan& plan, const LowerContext& ctx);
Expected<KernelCode> emit_column_reduce(const RowwisePlan& plan, const LowerContext& ctx);
// sum / mean / max / min over a set of dims (kernels/reduce_set.cuh).
Expected<KernelCode> emit_set_reduce(const RowwisePlan& plan, const LowerContext& ctx);
// argmax / argmin / cross_entropy: their own kernels, chain one store (lower_rowwise_arg.cpp).
bool is_index_row_op(dsl::RowOp op);
Expected<KernelCode> lower_rowwise_index(const dsl::Kernel& kernel, const LowerContext& ctx);

}  // namespace kforge::codegen::detail
