// lower_copy: a checked `copy` kernel to an extern "C" entry point that runs kforge's copy
// template (kernels/copy.cuh): the problem's shape op (reshape, expand, permute, slice, cat, pad)
// that the kernel computes, as problem/copy_op.h's gather with every extent, stride and bound
// baked in as literals, and the chain (codegen/chain.h) that casts and stores each value.
//
// The op is find_copy_op's (its kind, its inputs in order, the one the chain stores). The index
// space is the op's output; the vector width is the largest of 8, 4, 2, 1 not above `vec` that
// divides the output's last extent (so a vector never crosses an output row). Stores are
// vectorized and coalesced on the output; a source contiguous along the output's last axis is
// read with vector loads where aligned, any other source element by element (a permute that
// moves the last axis reads strided). The grid covers the outputs in vectors, capped at 16
// blocks per SM (the grid-stride loop covers the rest).
#include <algorithm>
#include <sstream>

#include "codegen/chain.h"
#include "codegen/kernel_entry.h"
#include "codegen/kernel_lowering.h"
#include "dsl/check.h"
#include "problem/copy_op.h"

namespace kforge::codegen {
namespace {

std::string lit(int64_t v) { return std::to_string(v) + "LL"; }

// The gather struct's body: the output index decomposed, then each source in turn.
std::string gather_source(const CopyGeometry& g, const std::vector<std::string>& ctypes,
                          const std::string& type) {
    const size_t r = g.out_shape.size();
    std::ostringstream s;
    s << "struct " << type << " {\n";
    for (size_t k = 0; k < g.sources.size(); ++k) {
        bool dup = false;  // cat(x, x): one pointer
        for (size_t j = 0; j < k; ++j) dup = dup || g.sources[j].tensor == g.sources[k].tensor;
        if (!dup)
            s << "    const " << ctypes[k] << "* __restrict__ t_" << g.sources[k].tensor << ";\n";
    }
    s << "    template <int V> __device__ __forceinline__ void gather(float (&v)[V], int64_t i) const {\n"
      << "#pragma unroll\n"
      << "        for (int j = 0; j < V; ++j) v[j] = " << cuda_float_literal(g.pad_value) << ";\n";
    if (r == 0) {
        s << "        v[0] = kforge::to_f32(t_" << g.sources[0].tensor << "[" << g.sources[0].base
          << "]);\n    }\n};\n";
        return s.str();
    }
    s << "        int64_t r = i;\n";
    for (size_t a = r; a-- > 1;)
        s << "        const int64_t o" << a << " = r % " << lit(g.out_shape[a]) << "; r /= "
          << lit(g.out_shape[a]) << ";\n";
    s << "        const int64_t o0 = r;\n";
    const size_t last = r - 1;
    for (const CopySource& src : g.sources) {
        std::string cond;
        std::string off = lit(src.base);
        for (size_t a = 0; a < last; ++a) {
            if (src.lo[a] != 0) cond += (cond.empty() ? "" : " && ") + ("o" + std::to_string(a) + " >= " + lit(src.lo[a]));
            if (src.hi[a] != g.out_shape[a])
                cond += (cond.empty() ? "" : " && ") + ("o" + std::to_string(a) + " < " + lit(src.hi[a]));
            if (src.stride[a] != 0) off += " + o" + std::to_string(a) + " * " + lit(src.stride[a]);
        }
        s << "        if (" << (cond.empty() ? "true" : cond) << ") kforge::gather_row<V, "
          << lit(src.stride[last]) << ">(v, t_" << src.tensor << ", " << off << ", o" << last
          << ", " << lit(src.lo[last]) << ", " << lit(src.hi[last]) << ");\n";
    }
    s << "    }\n};\n";
    return s.str();
}

// The gather of a permute or expand that is no problem op: input `x` stored row-major under its
// dims, output under the store's dims, each output axis reading the input axis of its name (an
// axis the input lacks, or of extent 1, broadcasts: stride 0).
Expected<CopyGeometry> free_permute(const dsl::TensorRef& x, const dsl::TensorRef& y,
                                    const LowerContext& ctx) {
    auto xi = ctx.tensors.find(x.name);
    auto yi = ctx.tensors.find(y.name);
    if (xi == ctx.tensors.end() || yi == ctx.tensors.end() || x.dims.size() != xi->second.shape.size() ||
        y.dims.size() != yi->second.shape.size())
        return make_error("", "unknown permute tensors " + x.name + ", " + y.name);
    const std::vector<int64_t>& xs = xi->second.shape;
    std::vector<int64_t> stride(xs.size(), 1);
    for (size_t i = xs.size(); i-- > 1;) stride[i - 1] = stride[i] * xs[i];
    CopyGeometry g;
    g.out_shape = yi->second.shape;
    CopySource src;
    src.tensor = x.name;
    for (size_t a = 0; a < y.dims.size(); ++a) {
        src.lo.push_back(0);
        src.hi.push_back(g.out_shape[a]);
        int64_t st = 0;  // a size-1 axis of the output reads nothing of its own
        for (size_t i = 0; i < x.dims.size(); ++i)
            if (x.dims[i] == y.dims[a] && x.dims[i] != "1") st = stride[i];
        src.stride.push_back(st);
    }
    g.sources.push_back(std::move(src));
    return g;
}

}  // namespace

Expected<KernelCode> lower_copy(const dsl::Kernel& kernel, const LowerContext& ctx) {
    const std::string where = "kernel " + kernel.name;
    const dsl::CopyConfig& cfg = kernel.copy;
    if (kernel.args.empty()) return make_error(where, "copy takes at least one input tensor");
    if (cfg.threads < 32 || cfg.threads > 1024 || cfg.threads % 32 != 0)
        return make_error(where, "threads must be a multiple of 32 in 32..1024");
    std::vector<std::string> inputs;
    for (const dsl::TensorRef& a : kernel.args) inputs.push_back(a.name);
    const dsl::ChainOp* store = first_store(kernel.chain);
    // a permute or expand storing a tensor the problem lacks is a free one (dsl/check_copy.cpp)
    const bool own = kernel.copy_op == OpKind::kPermute || kernel.copy_op == OpKind::kExpand;
    const bool free = own && store && ctx.problem->find_tensor(store->tensor->name) == nullptr;
    std::vector<std::string> reads;  // the chain's operands: other kernels' values
    for (const dsl::ChainOp& c : kernel.chain)
        if (c.kind != dsl::ChainOpKind::kStore && c.tensor) reads.push_back(c.tensor->name);
    const Op* op = free ? nullptr
                        : find_copy_op(*ctx.problem, kernel.copy_op, inputs,
                                       store ? store->tensor->name : std::string(), reads);
    CopyGeometry g;
    std::vector<int64_t> out_shape;
    std::vector<std::string> out_dims;
    if (op == nullptr) {  // a permute or expand of the program's own: by the dim names of input
                          // and store (an output dim the input lacks reads stride 0)
        if (!own || !store)
            return make_error(where, "no " + std::string(to_string(kernel.copy_op)) +
                                         " op of the problem reads " + inputs.front());
        auto free = free_permute(kernel.args[0], *store->tensor, ctx);
        if (!free) return make_error(where, free.error().message);
        g = *free;
        out_shape = g.out_shape;
        out_dims = store->tensor->dims;
    } else {
        std::vector<std::optional<ViewLayout>> views;  // inputs read through views
        for (size_t k = 0; k < inputs.size() && k < op->inputs.size(); ++k) {
            if (op->inputs[k] == inputs[k]) {
                views.emplace_back();
                continue;
            }
            views.push_back(view_layout(*ctx.problem, inputs[k], op->inputs[k]));
            const Tensor* in = ctx.problem->find_tensor(op->inputs[k]);
            if (!views.back() || in == nullptr)
                return make_error(where, op->inputs[k] + " is no view of " + inputs[k] +
                                             " that strides express");
            if (op->kind == OpKind::kReshape &&
                !reshape_strides(in->shape, views.back()->stride,
                                 ctx.problem->find_tensor(op->output)->shape))
                return make_error(where, "the reshape merges axes of " + op->inputs[k] +
                                             " that are apart in " + inputs[k] +
                                             "'s buffer: read " + op->inputs[k] + " as stored");
        }
        g = copy_geometry(*ctx.problem, *op, views);
        const Tensor* y = ctx.problem->find_tensor(op->output);
        out_shape = y->shape;
        for (size_t i = 0; i < y->shape.size(); ++i)
            out_dims.push_back(y->dim_names[i].empty() ? std::to_string(y->shape[i]) : y->dim_names[i]);
    }
    // an input read through reshapes (a split or merge view) is the same row-major buffer: the
    // geometry indexes it by the view's shape, the kernel reads the tensor the program names
    for (size_t k = 0; k < g.sources.size() && k < inputs.size(); ++k) g.sources[k].tensor = inputs[k];
    std::vector<std::string> ctypes;
    for (const CopySource& src : g.sources) {
        auto it = ctx.tensors.find(src.tensor);
        if (it == ctx.tensors.end()) return make_error(where, "unknown tensor " + src.tensor);
        auto t = cuda_float_type(it->second.dtype, where);
        if (!t) return t.error();
        ctypes.push_back(*t);
    }
    ChainSpace space;
    space.shape = out_shape;
    space.dims = out_dims;
    auto chain = emit_chain("kforge_" + kernel.name + "_chain", kernel.chain, space, std::nullopt,
                            ctx);
    if (!chain) return chain.error();

    const int64_t numel = space.numel();
    const int vec = dsl::widest_vec(cfg.vec, out_shape.empty() ? 1 : out_shape.back());
    const int64_t per_block = int64_t(cfg.threads) * vec;
    const int64_t blocks =
        std::clamp<int64_t>((numel + per_block - 1) / per_block, 1, int64_t(16) * ctx.sm_count);

    EntryParams params;
    for (size_t k = 0; k < g.sources.size(); ++k)
        params.add_tensor(g.sources[k].tensor, ctypes[k], false);
    params.add_chain(*chain);
    params.add_int64("numel", numel);
    const std::string symbol = "kforge_" + kernel.name;
    const std::string gtype = symbol + "_gather";
    std::string ginit = gtype + " g{";
    for (size_t k = 0; k < g.sources.size(); ++k) {
        bool dup = false;
        for (size_t j = 0; j < k; ++j) dup = dup || g.sources[j].tensor == g.sources[k].tensor;
        if (!dup) ginit += (ginit.back() == '{' ? "t_" : ", t_") + g.sources[k].tensor;
    }
    ginit += "};\n";
    const auto call = [&](int v) {
        return "kforge::copy_elements<" + std::to_string(cfg.threads) + ", " + std::to_string(v) +
               ">(g, numel, chain);\n";
    };
    std::ostringstream s;
    s << "// kernel " << kernel.name << ": " << to_string(kernel.copy_op) << " "
      << (op ? op->json_path : std::string("by dim names")) << ", " << numel << " elements\n"
      << chain->definition << gather_source(g, ctypes, gtype)
      << "extern \"C\" __global__ void __launch_bounds__(" << cfg.threads << ") " << symbol
      << "(" << params.signature() << ") {\n"
      << chain_init(*chain) << "    " << ginit << vec_dispatch(vec, call) << "}\n";
    return one_launch("kernels/copy.cuh", s.str(), kernel.name, symbol, blocks, cfg.threads,
                      params);
}

}  // namespace kforge::codegen
