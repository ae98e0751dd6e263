// Canonical expression graphs for the checker's semantic pass. The problem's op graph and the
// program's kernels are both translated into an ExprGraph whose builders normalize as they go, so
// that two computations that are equal by the identities below get the same key:
//
//   - values carry NAMED dims (size-1 dims dropped); a contraction is contract(A, B over K) with
//     its operands unordered, so matmul transposes and gemm operand layouts follow from dims;
//   - linear(X, W, b)            = contract(X, W over K) + b
//   - reduce_sum over K of mul(a, b), both with K = contract(a, b over K) (a matvec as a rowwise
//     sum with the prologue `pre { mul v[K] }`)
//   - add, mul                   n-ary, flattened, operands sorted, numbers folded (x+0, x*1 drop);
//                                an operand that occurs several times is kept once with its count
//                                (x + x: x twice; exact integer counts, so `let t; add t` repeated
//                                n times is one node with a count of 2^n, not 2^n operands)
//   - sub(a, b)                  = a + b * -1;  sub by a number c = add -c;  neg x = x * -1
//   - scale c, div by number c   = mul c, mul 1/c;   add_scalar c = add c
//   - relu = clamp(0, inf); hardtanh/clamp(lo, hi) = clamp; min_scalar c = clamp(-inf, c);
//     max_scalar c = clamp(c, inf); clamp(clamp(x, a, b), c, d) = clamp(x, max(a,c), min(b,d))
//     when the ranges overlap
//   - maximum(a, b), minimum(a, b) with operands sorted; with a number c they are the clamps
//     above; reciprocal x = div(1, x) (as `rdiv 1`)
//   - dropout (eval) = identity; cast = identity (dtypes are checked at stores instead)
//   - a reduction (problem sum/mean/max/min, program rowwise sum/... or `reduce .. over D`)
//     = reduce_<kind> over D; softmax, log_softmax, logsumexp and norms keep their axis as a dim
//     name, eps and groups as numbers.
//   - cumsum / cumprod = an op of that name over D with the reverse and exclusive flags as
//     numbers (1 or 0), from the problem op's attributes or the row op's knobs.
//   - conv2d(X, W) = a node of its own: operands in order (input, weight), stride, padding,
//     dilation and groups as numbers, the output's dims [N,K,P,Q] named; its bias is `+ b`.
//   - l1_normalize = x / clamp(reduce_sum(abs x), eps, inf), l2_normalize = x /
//     clamp(sqrt(reduce_sum(square x)), eps, inf) over D (no clamp at eps 0): normalize_expr().
// Each node remembers where it came from (a problem op's "graph[i]" or a program's "line:col")
// so that diff() can say which op is missing or changed.
//
// The graph is a DAG: a value used twice is one node read twice, and a node's key is a digest of
// its op and its operands' keys (computed once, when the node is built), so keys stay 32 hex
// digits however often a value is reused; building costs steps of a StepBudget, and a graph
// whose budget runs out (or whose counts stop being exact) stops growing and says where.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kforge::dsl {

// The checker's work budget for one program (CheckOptions::max_steps), shared by the problem's
// and the program's expression graphs: a node costs one step plus one per operand (a flattened
// add or mul also one per operand it absorbs). Steps count work, not time, so a program is
// refused the same way on every machine.
class StepBudget {
public:
    explicit StepBudget(int64_t steps) : limit_(steps), left_(steps) {}
    // Takes `steps`; false once the budget is spent (and from then on).
    bool spend(int64_t steps) {
        left_ -= steps;
        return left_ >= 0;
    }
    int64_t limit() const { return limit_; }
    int64_t used() const { return limit_ - left_; }

private:
    int64_t limit_;
    int64_t left_;
};

struct Expr {
    std::string op;                    // "leaf", "const", "contract", "add", "mul", "div",
                                       // "clamp", "gelu", "softmax", "reduce_sum", ...
    std::vector<double> params;        // const value; clamp lo hi; gelu approx; eps; groups ...
    std::vector<std::string> over;     // contract: contracted dim; row ops / reduces: their dims
    std::vector<int> args;             // operand nodes (sorted by key for add, mul, contract)
    std::vector<std::string> arg_where;  // add/mul: where each operand was introduced
    std::vector<double> counts;        // add/mul: how often each operand occurs (an exact
                                       // integer; x + x is x with count 2), parallel to args
    std::string leaf;                  // leaf: tensor name
    std::vector<std::string> dims;     // named dims of the value
    std::string display;               // "gelu (tanh)", "add b", "linear"
    std::string where;                 // "graph[1]" / "4:12"
    std::string subject;               // problem: the tensor the op applies to
    std::string key;                   // digest of the canonical form (op, params, over,
                                       // operand keys and counts; 32 hex digits); equal keys =
                                       // equal computations, and keys order operands
};

// Where a node is built from: used for display and messages only.
struct Origin {
    std::string where;
    std::string subject;
    std::string display;
};

class ExprGraph {
public:
    // `budget` (may be null: unlimited) is charged for every node; it must outlive the graph.
    explicit ExprGraph(StepBudget* budget = nullptr) : budget_(budget) {}

    const Expr& at(int id) const { return nodes_[static_cast<size_t>(id)]; }
    size_t size() const { return nodes_.size(); }

    // Why the graph stopped growing (the budget ran out, or a count of an add / mul operand
    // is no longer exact), and where the node that stopped it came from ("4:12", "graph[3]");
    // empty while it grows. Once stopped, builders return cheap stand-ins (an operand, or a
    // node without a key) so that callers can unwind: their results mean nothing.
    const std::string& stopped() const { return stop_reason_; }
    const std::string& stopped_where() const { return stop_where_; }

    int leaf(const std::string& name, std::vector<std::string> dims, const Origin& origin);
    int constant(double value, const Origin& origin);
    int contract(int a, int b, const std::string& k, const Origin& origin);
    int add(int a, int b, const Origin& origin);
    int mul(int a, int b, const Origin& origin);
    int div(int a, int b, const Origin& origin);
    int clamp(int x, double lo, double hi, const Origin& origin);
    // maximum / minimum of two values (operands unordered; with a number: clamp(x, c, inf) /
    // clamp(x, -inf, c), so `max 0` and maximum(x, 0) are one computation).
    int bound(bool is_max, int a, int b, const Origin& origin);
    // Any other op: element-wise (over empty), row ops and reductions (over = their dims, which
    // a reduction removes from the value's dims when `drops_over`).
    int apply(const std::string& op, std::vector<int> args, std::vector<double> params,
              std::vector<std::string> over, bool drops_over, const Origin& origin);

    // conv2d of input `x` [N,C,H,W] by weight `w` [K,C,R,S]; `params` = stride h w, padding
    // h w, dilation h w, groups; `out_dims` = the output's dims (they name the value).
    // (`op` names the node: conv2d, or another convolution form, conv1d, conv_transpose2d, ...)
    int conv2d(int x, int w, std::vector<double> params, std::vector<std::string> out_dims,
               const Origin& origin, const std::string& op = "conv2d");

    // A pooling op (`op`: max_pool, avg_pool, adaptive_avg_pool, adaptive_max_pool) of `x`
    // [N,C,*]; `params` = its attributes (dsl/check_pool.cpp's pool_params), `out_dims` = the
    // output's dims (they name the value).
    int pool(int x, const std::string& op, std::vector<double> params,
             std::vector<std::string> out_dims, const Origin& origin);

    // A shape op's data movement (`op`: reshape, expand, permute, slice, cat, pad) of `xs` (in
    // order); `params` = its attributes (dsl/check_copy.cpp), `out_dims` = the output's dims.
    int gather(std::vector<int> xs, const std::string& op, std::vector<double> params,
               std::vector<std::string> out_dims, const Origin& origin);

    // Node `id` under other dim names, with the same key (dims are not part of a key): the
    // attention kernel's output where its query and key rows share one dim name, which the
    // contractions' name-based dims cannot tell apart (dsl/check_attention.cpp).
    int relabel(int id, std::vector<std::string> dims);

private:
    int push(Expr e);
    int flat(const std::string& op, int a, int b, const Origin& origin);
    bool charge(size_t steps, const Origin& origin);
    void stop(std::string reason, const Origin& origin);
    StepBudget* budget_ = nullptr;
    std::string stop_reason_;
    std::string stop_where_;
    std::vector<Expr> nodes_;
};

// l1_normalize / l2_normalize of `x` over dim `over`, as the identity the problem and a program's
// row op share: x / clamp(sum(|x|) or sqrt(sum(x^2)) over `over`, eps, inf) (no clamp at eps 0),
// so a program that spells it as separate kernels (abs or square, a row sum, sqrt, a divide)
// checks against it too.
int normalize_expr(ExprGraph& g, int x, bool l2, double eps, const std::string& over,
                   const Origin& origin);

// How a cumsum / cumprod reads in messages: "cumsum over C reverse exclusive".
std::string scan_display(const std::string& name, const std::string& over, bool reverse,
                         bool exclusive);

// Dims of a broadcast of two named-dim values; nullopt where neither contains the other.
std::optional<std::vector<std::string>> broadcast_dims(const std::vector<std::string>& a,
                                                       const std::vector<std::string>& b);

// The first difference between problem node `p` (in `pg`) and program node `q` (in `qg`), as a
// sentence for the program's output `out`; nullopt when they compute the same.
std::optional<std::string> diff(const ExprGraph& pg, int p, const ExprGraph& qg, int q,
                                const std::string& out);

}  // namespace kforge::dsl
