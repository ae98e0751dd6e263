// Emission of an element-wise chain (`{ add b[N]; gelu tanh; cast bf16; store Y[M,N] }`) as a
// CUDA functor struct that kforge's templates (kernels/*.cuh) call per vector of V consecutive
// output elements. Used by lower_rowwise and lower_map; usable by gemm epilogues.
//
// The functor, `struct <type_name>`, has one pointer member per tensor it touches, named
// `t_<tensor>`, in `ChainCode::params` order (aggregate-initialise it from kernel params of the
// same names), and:
//   static constexpr int kSlots;                              // value + one per tensor operand
//   template <int V> bool aligned() const;                    // every pointer V-vector aligned
//   template <int V> void load(float (&s)[kSlots][V], i);     // map input into s[0] + operands
//   template <int V> void apply(float (&s)[kSlots][V], i);    // chain on s[0], with stores
//   template <int V> void run(const float (&v)[V], i);        // load operands, apply
// where i is the linear (row-major) index of the first of the V elements in the chain's index
// space. Broadcast operands are matched to the space's dims by name, right to left (`b[N]`,
// `c[M]`, `alpha[]`); a literal `1` dim broadcasts. V consecutive elements are loaded as one
// vector where the operand is contiguous along the innermost dim, else element by element.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/kernel_lowering.h"
#include "common/expected.h"
#include "dsl/ast.h"
#include "problem/problem.h"

namespace kforge::codegen {

// The index space of a chain's value: dim names and concrete sizes, row-major.
// runtime_shape: the functor takes the sizes at run time instead of as literals (so one source
// serves every shape): members `int64_t d0, d1, ...` (the space's dims in order) follow the
// pointers and are initialised after them (`chain_init(chain, {"n", "k", ..})`); operands are
// then read element by element (V consecutive elements are never assumed contiguous). `shape`
// still checks the chain at lowering time.
// The chain's first store of a tensor (its dims name a map's or a conv2d's index space), or
// null when the chain stores nothing.
const dsl::ChainOp* first_store(const std::vector<dsl::ChainOp>& chain);

struct ChainSpace {
    std::vector<std::string> dims;
    std::vector<int64_t> shape;
    bool runtime_shape = false;
    int64_t numel() const;
};

struct ChainParam {
    std::string name;  // tensor name; the member and kernel param are `t_<name>`
    DType dtype = DType::kF32;
    bool written = false;  // a store target
};

struct ChainCode {
    std::string type_name;
    std::string definition;         // the struct, device code
    std::vector<ChainParam> params;  // pointer members in declaration order
    int runtime_dims = 0;            // ChainSpace::runtime_shape: the d0, d1, .. members
};

// Emits the functor for `chain` over `space`. `input`: the map's input tensor (loaded into the
// value by `load`), or nullopt for chains that start from a computed value. Errors (user
// errors, `where` = line:col of the statement): unknown tensor, dims that do not broadcast to
// the space, a store whose size differs from the space, no store, `reduce` (not supported in
// element-wise chains), a dtype with no CUDA float type, a name read before its `let`. A value
// named by `let t` is a register array `n_t[V]` in apply(); `use t` copies it back.
// `needs_store` false: a chain that only transforms the value (a rowwise kernel's `pre`
// prologue, called through load_operands + apply on the loaded row vector) may store nothing.
Expected<ChainCode> emit_chain(std::string_view type_name, const std::vector<dsl::ChainOp>& chain,
                               const ChainSpace& space,
                               const std::optional<dsl::TensorRef>& input,
                               const LowerContext& ctx, bool needs_store = true);

// CUDA type of a float dtype: float, __nv_bfloat16, __half; an error for others.
Expected<std::string> cuda_float_type(DType d, std::string_view where);
// A chain parameter's CUDA element type: cuda_float_type's, or `bool` for a bool tensor the
// chain only reads (a mask operand: `mul mask[M,N]` multiplies by 0 or 1).
Expected<std::string> chain_param_type(DType d, bool written, std::string_view where);

// A float literal that CUDA parses as the same f32 value: "1.5f", "-INFINITY".
std::string cuda_float_literal(double v);

}  // namespace kforge::codegen
