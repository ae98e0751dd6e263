// Pieces the checker's passes share (dsl/check.h): error reporting with carets, and the facts the
// semantic pass learns about each kernel that the legality pass needs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/check.h"
#include "dsl/check_expr.h"
#include "dsl/printer.h"

namespace kforge::dsl {

class Reporter {
public:
    Reporter(const CheckOptions& options, CheckResult& result) : options_(options), result_(result) {}

    // "4:12" (used inside messages), "file:4:12" (an Error's where).
    static std::string loc_text(SourceLoc loc);
    std::string where(SourceLoc loc) const;
    void error(SourceLoc loc, std::string message);
    void warn(SourceLoc loc, std::string message);
    CheckResult& result() { return result_; }

private:
    const CheckOptions& options_;
    CheckResult& result_;
};

// What the semantic pass resolved about one kernel (resolved == false when its tensors did not).
struct KernelFacts {
    bool resolved = false;
    std::vector<std::string> value_dims;  // dims of the chain's value (map: after broadcasting)
    int64_t numel = 0;                    // elements of the value
    int64_t last_extent = 0;              // extent of the value's innermost dim
    int64_t row_len = 0;                  // rowwise: extent of the dim reduced/normalized
    int64_t rows = 0;                     // rowwise: number of rows
    int max_elem_bytes = 4;               // widest element the kernel reads or writes
    int max_out_bytes = 4;                // widest element it stores
    bool reads_residual = false;          // gemm: the epilogue reads a tensor of the output's size
    const Op* conv = nullptr;             // conv2d: the problem's conv2d op it implements
};

// Semantics (check_semantics.cpp): resolves tensors into result().tensors, proves that the program
// computes the problem's outputs, and returns one KernelFacts per kernel. Its expression graphs
// spend `budget`; where it runs out, the statement (or the problem's op) is named in an error
// and the kernels from there on stay unresolved.
std::vector<KernelFacts> check_semantics(const Program& program, const Problem& problem,
                                         Reporter& reporter, StepBudget& budget);

// Legality on the device (check_legality*.cpp); runs after check_semantics.
void check_legality_gemm(const Kernel& kernel, const KernelFacts& facts, const Problem& problem,
                         const CheckResult& tensors, const DeviceLimits& limits,
                         Reporter& reporter);
void check_legality_conv2d(const Kernel& kernel, const KernelFacts& facts, const Problem& problem,
                           const CheckResult& tensors, const DeviceLimits& limits,
                           Reporter& rep);
void check_legality_rowwise(const Kernel& kernel, const KernelFacts& facts,
                            const CheckResult& tensors, const DeviceLimits& limits,
                            Reporter& reporter);
void check_legality_map(const Kernel& kernel, const KernelFacts& facts,
                        const DeviceLimits& limits, Reporter& reporter);

// Limits of kforge's code generators (check_lowering.cpp); runs after check_semantics.
void check_lowering(const Kernel& kernel, Reporter& reporter);


// The problem's op graph as canonical expressions (check_problem_expr.cpp): node of every tensor.
// Built on `budget`: where it runs out, graph.stopped() says why and graph.stopped_where() at
// which op ("graph[3]"), and the ops from there on have no node.
struct ProblemExprs {
    explicit ProblemExprs(StepBudget* budget) : graph(budget) {}
    ExprGraph graph;
    std::map<std::string, int> value;  // tensor name -> node
};
ProblemExprs problem_exprs(const Problem& problem, StepBudget* budget);

// A problem tensor's dim i as a program writes it: its name, or its extent where anonymous.
std::string dim_text(const Tensor& tensor, size_t i);
// Named dims of a value: size-1 dims ("1") dropped.
std::vector<std::string> named_dims(const std::vector<std::string>& dims);
// Dims with each name once, in first-seen order: a name written twice ([B,T,T]) is one dim of a
// value's expression.
std::vector<std::string> distinct_dims(const std::vector<std::string>& dims);
// "gelu (tanh)", "leaky_relu 0.2", "softmax over N": how messages name a problem op.
std::string op_display(const Op& op, const Problem& problem);

// A conv2d op's attributes as the numbers of its expression node (ExprGraph::conv2d): stride
// h w, padding h w, dilation h w, groups.
std::vector<double> conv2d_params(const OpAttrs& attrs);
// The dims of a conv2d op's output as the program writes them ([N,K,P,Q], size-1 dims dropped).
std::vector<std::string> conv2d_out_dims(const Op& op, const Problem& problem);

// Pooling (check_pool.cpp): a pool op's attributes as the numbers of its expression node
// (ExprGraph::pool: kernel_size, stride, padding, dilation, output_size per axis, ceil_mode,
// count_include_pad, divisor_override), and the problem's pool op that pool kernel `kernel`
// computes: the one of its op word reading its input (where several do, the one whose output the
// chain stores, else the first); nullptr (and an error) where there is none.
std::vector<double> pool_params(const OpAttrs& attrs);
const Op* pool_kernel_op(const Problem& problem, const Kernel& kernel, Reporter& reporter);
void check_legality_pool(const Kernel& kernel, const DeviceLimits& limits, Reporter& reporter);

// Copy kernels (check_copy.cpp): the node of shape op `op` (reshape, expand, permute, slice,
// cat, pad) over the values `in` of its inputs, which the problem's op and a copy kernel build
// alike; the problem's op that copy kernel `kernel` computes (problem/copy_op.h find_copy_op),
// nullptr (and an error) where there is none; its knobs' legality.
int copy_node(ExprGraph& g, std::vector<int> in, const Op& op, const Problem& problem,
              const Origin& origin);
const Op* copy_kernel_op(const Problem& problem, const Kernel& kernel, Reporter& reporter);
// The values of `op`'s inputs from the values `args` of copy kernel `kernel`'s tensors: an
// input that is a reshape of the tensor the kernel names gets the problem's nodes of those
// reshapes (a view that adds or drops size-1 axes is its input's value).
std::vector<int> copy_inputs(ExprGraph& g, std::vector<int> args, const Op& op, const Kernel& kernel,
                             const Problem& problem, const Origin& origin);
void check_legality_copy(const Kernel& kernel, const DeviceLimits& limits, Reporter& reporter);
// A copy permute that computes no problem op (the planner's transposes around a row op over a
// dim that is not the last): the value of its input `x` under the dims its first store writes,
// a reordering of the input's distinct dim names (kernels index by names); a copy expand of the
// program's own (the planner's broadcast of an operand to the dims of a binary op that neither
// operand spans): the same value under the store's distinct dims, which include the input's;
// -1 (and an error) otherwise. distinct_names: no dim name twice.
bool distinct_names(const std::vector<std::string>& dims);
int free_permute_node(ExprGraph& g, int x, const Kernel& kernel, Reporter& reporter);

// "X[M,K]" for messages (dims_text, dsl/printer.h: "[M,K]").
std::string ref_text(const TensorRef& ref);
// The tensor the kernel's first store writes ("" without one): which of several like ops of the
// problem (pool, copy, rnn) the kernel computes.
std::string first_store(const Kernel& kernel);

// Where a knob was written (knob_locs), else the kernel's location.
SourceLoc knob_loc(const Kernel& kernel, std::string_view knob);

}  // namespace kforge::dsl
