// One kernel of a program as canonical expressions: its head (gemm contraction, row op, map
// input), then its chain (identities in dsl/check_expr.h).
#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>

#include "dsl/check_sem_kernel.h"
#include "dsl/check_attention.h"
#include "dsl/check_rnn.h"
#include "dsl/tri_mask.h"

namespace kforge::dsl {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string chain_display(const ChainOp& op) {
    std::string s(to_string(op.kind));
    if (op.kind == ChainOpKind::kGelu) return s + (op.gelu == GeluApprox::kTanh ? " (tanh)" : " (erf)");
    if (op.kind == ChainOpKind::kReduce) {
        return "reduce " + std::string(to_string(op.reduce)) + " over " + op.reduce_over;
    }
    if (op.tensor) return s + " " + op.tensor->name;
    if (!op.name.empty()) return s + " " + op.name;
    for (double v : op.numbers) s += " " + num(v);
    return s;
}

OpKind row_op_kind(RowOp r) {
    switch (r) {
    case RowOp::kSoftmax: return OpKind::kSoftmax;
    case RowOp::kLogSoftmax: return OpKind::kLogSoftmax;
    case RowOp::kLogsumexp: return OpKind::kLogsumexp;
    case RowOp::kLayerNorm: return OpKind::kLayerNorm;
    case RowOp::kRmsNorm: return OpKind::kRmsNorm;
    case RowOp::kGroupNorm: return OpKind::kGroupNorm;
    case RowOp::kSum: return OpKind::kSum;
    case RowOp::kMean: return OpKind::kMean;
    case RowOp::kMax: return OpKind::kMax;
    case RowOp::kMin: return OpKind::kMin;
    case RowOp::kProd: return OpKind::kProd;
    case RowOp::kL1Normalize: return OpKind::kL1Normalize;
    case RowOp::kL2Normalize: return OpKind::kL2Normalize;
    case RowOp::kCumsum: return OpKind::kCumsum;
    case RowOp::kCumprod: return OpKind::kCumprod;
    case RowOp::kArgmax: return OpKind::kArgmax;
    case RowOp::kArgmin: return OpKind::kArgmin;
    case RowOp::kCrossEntropy: return OpKind::kCrossEntropy;
    case RowOp::kTril: return OpKind::kTril;
    case RowOp::kTriu: return OpKind::kTriu;
    }
    return OpKind::kSoftmax;
}

// The gemm's contracted dim: shared by both operands and absent from the first store.
std::optional<std::string> gemm_k(const Kernel& kn, Reporter& reporter) {
    std::vector<std::string> a = named_dims(kn.args[0].dims), b = named_dims(kn.args[1].dims);
    std::vector<std::string> shared, out;
    for (const auto& d : a)
        if (std::find(b.begin(), b.end(), d) != b.end()) shared.push_back(d);
    for (const ChainOp& op : kn.chain) {
        if (op.kind == ChainOpKind::kStore && op.tensor) {
            out = named_dims(op.tensor->dims);
            break;
        }
    }
    std::vector<std::string> cands;
    for (const auto& d : shared)
        if (std::find(out.begin(), out.end(), d) == out.end()) cands.push_back(d);
    if (cands.size() == 1) return cands[0];
    if (shared.size() == 1) return shared[0];
    // names that repeat (att[T,T] @ v[T,E]): matmul's order, A's last dim (as the lowering
    // reads it, codegen/gemm_spec.h resolve_gemm_layout)
    if (cands.empty() && !a.empty() && b.size() >= 2 &&
        (b[b.size() - 2] == a.back() || b.back() == a.back()))
        return a.back();
    reporter.error(kn.loc, "gemm(" + ref_text(kn.args[0]) + ", " + ref_text(kn.args[1]) +
                               "): cannot tell which dim to contract; the operands must share "
                               "exactly one dim that the stored output does not have (shared: " +
                               dims_text(shared) + ")");
    return std::nullopt;
}

// The problem's conv2d op that conv2d kernel `kn` implements: the one whose input and weight are
// the kernel's tensors, by name (as the lowering finds it, codegen/lower_conv.cpp; the
// expressions prove the rest). nullptr (and an error) where there is none or the kernel's
// tensors do not fit it.
const Op* conv2d_op(Sem& sem, const Kernel& kn) {
    Reporter& rep = sem.reporter;
    const TensorRef& x = kn.args[0];
    const TensorRef& w = kn.args[1];
    std::vector<const Op*> convs;
    const Op* by_name = nullptr;
    for (const Op& op : sem.problem.ops) {
        // a conv2d kernel runs conv2d, and conv1d as a 2-D convolution with H = 1
        if (op.kind != OpKind::kConv2d && op.kind != OpKind::kConv1d && op.kind != OpKind::kConv3d &&
            !is_conv_transpose(op.kind))
            continue;  // conv3d: CUTLASS's 3-D fprop; conv_transpose*: CUTLASS's dgrad
        convs.push_back(&op);
        if (op.inputs.size() >= 2 && op.inputs[0] == x.name && op.inputs[1] == w.name && !by_name)
            by_name = &op;
    }
    const std::string head = "conv2d(" + ref_text(x) + ", " + ref_text(w) + ")";
    const size_t rank = by_name == nullptr ? 4 : static_cast<size_t>(spatial_rank(by_name->kind)) + 2;
    if (x.dims.size() != rank || w.dims.size() != rank) {
        rep.error(kn.loc, head + (rank == 4
                                      ? ": conv2d takes X[N,C,H,W] and Wt[K,C,R,S] (4 dims each)"
                                      : ": a conv2d kernel of a " +
                                            std::string(to_string(by_name->kind)) + " op takes " +
                                            std::to_string(rank) + "-dim X and Wt"));
        return nullptr;
    }
    if (convs.empty()) {
        rep.error(kn.loc, head + ": the problem has no conv2d op; a conv2d kernel implements one");
        return nullptr;
    }
    const Op* op = by_name;
    if (op == nullptr) {
        std::string list;
        for (const Op* c : convs)
            list += (list.empty() ? "" : ", ") + c->json_path + " conv2d(" + c->inputs[0] + ", " +
                    c->inputs[1] + ")";
        rep.error(kn.loc, head + ": no conv2d op of the problem reads " + x.name + " and " + w.name +
                              " (the problem has " + list + "); a conv2d kernel reads its op's "
                              "input and weight");
        return nullptr;
    }
    // Channels: X's C is W's second dim (groups 1); checked by extent, so that an intermediate
    // input with other dim names still has to fit.
    // (transposed: W is [C, K/groups, ...], its first dim the input's channels)
    const bool transpose = is_conv_transpose(op->kind);
    const int64_t c = sem.extent(x.dims[1]), wc = sem.extent(w.dims[transpose ? 0 : 1]);
    if (c > 0 && wc > 0 && c != (transpose ? wc : wc * op->attrs.groups)) {
        rep.error(w.loc, head + ": the input has " + x.dims[1] + " = " + std::to_string(c) +
                             " channels, the weight " + w.dims[1] + " = " + std::to_string(wc) +
                             (op->attrs.groups != 1
                                  ? " per group of " + std::to_string(op->attrs.groups)
                                  : std::string()) +
                             "; they must agree");
        return nullptr;
    }
    return op;
}

// A value named by `let` in the chain being translated.
struct Named {
    int node = -1;  // -1: the value had failed to resolve (reported there)
    DType dtype = DType::kF32;
    SourceLoc loc;
    std::optional<Narrowed> narrowed;  // rounded below the policy (as the value at the `let`)
};

// Whether `let name` may bind `name` in kernel `k`: not the name of a tensor (the problem's, or
// one the program stores), not bound earlier in the kernel. Reports and returns false if not.
bool check_let_name(Sem& sem, const ChainOp& op, const std::map<std::string, Named>& names) {
    Reporter& rep = sem.reporter;
    if (sem.problem.find_tensor(op.name) || sem.stores.count(op.name)) {
        rep.error(op.name_loc, "let " + op.name + ": " + op.name + " is a tensor of the " +
                                   (sem.problem.find_tensor(op.name) ? "problem" : "program") +
                                   "; name the value apart from every tensor");
        return false;
    }
    if (auto it = names.find(op.name); it != names.end()) {
        rep.error(op.name_loc, "let " + op.name + ": " + op.name + " is already bound at " +
                                   Reporter::loc_text(it->second.loc) +
                                   "; a name is bound once per kernel (no shadowing)");
        return false;
    }
    return true;
}

// The value `op` names (`use t`, `add t`); nullptr (and an error) where t is not bound yet.
const Named* lookup_name(Sem& sem, const Kernel& kn, const std::vector<ChainOp>& chain,
                         const ChainOp& op, const std::map<std::string, Named>& names) {
    if (auto it = names.find(op.name); it != names.end()) return &it->second;
    std::string later;
    for (const ChainOp& c : chain)
        if (c.kind == ChainOpKind::kLet && c.name == op.name && later.empty())
            later = Reporter::loc_text(c.name_loc);
    std::string what = std::string(to_string(op.kind)) + " " + op.name + ": ";
    if (!later.empty()) {
        sem.reporter.error(op.name_loc, what + op.name + " is bound by `let " + op.name + "` at " +
                                            later + ", after this use; bind it first");
    } else if (sem.problem.find_tensor(op.name) || sem.stores.count(op.name)) {
        sem.reporter.error(op.name_loc, what + "no value is named " + op.name + "; for the tensor "
                                            "write its dims (" + op.name + "[..])");
    } else {
        sem.reporter.error(op.name_loc, what + "no value is named " + op.name + " in kernel " +
                                            kn.name + "; bind it with `let " + op.name +
                                            "` earlier in this chain (names are local to a kernel)");
    }
    return nullptr;
}

// The value of a chain being translated: its node (nullopt: unresolved), dtype, names.
struct ChainState {
    std::optional<int> v;
    DType dtype = DType::kF32;
    std::optional<Narrowed> narrowed;    // rounded below the precision policy (check_sem_kernel.h)
    bool failed = false;
    std::map<std::string, Named> names;  // bound by `let` so far
    bool unit_dims_broadcast = false;    // a prologue: operand dims of extent 1 broadcast
};

// Translates `chain` (kernel k's chain or its rowwise prologue) on st.v, storing as it goes.
void translate_chain(Sem& sem, const Kernel& kn, int k, const std::vector<ChainOp>& chain,
                     ChainState& st, KernelFacts& f) {
    std::optional<int>& v = st.v;
    DType& dtype = st.dtype;
    bool& failed = st.failed;
    std::map<std::string, Named>& names = st.names;
    ExprGraph& g = sem.graph;
    Reporter& rep = sem.reporter;
    // A statement computes on the value: a pending narrowing is now part of what it computes.
    auto computed = [&st] {
        if (st.narrowed) st.narrowed->pending = false;
    };
    // An operand rounded below the policy makes the result so.
    auto absorb = [&st](const std::optional<Narrowed>& n) {
        if (n && !st.narrowed) st.narrowed = Narrowed{n->cast, n->dtype, false};
    };
    // The graph stops inside the statement that outgrows it: checked before each statement and
    // after the last, the error names the statement just translated.
    const ChainOp* prev = nullptr;
    for (const ChainOp& op : chain) {
        if (prev && sem.stopped(prev->loc)) {
            failed = true;
            return;
        }
        prev = &op;
        Origin o{Reporter::loc_text(op.loc), kn.name, chain_display(op)};
        if (op.kind == ChainOpKind::kCast) {
            dtype = op.cast_to;
            // A cast to another dtype converts the rounded value (to the same: nothing new).
            if (st.narrowed && st.narrowed->dtype != op.cast_to) computed();
            if (!st.narrowed && below_policy(sem.problem.policy, op.cast_to))
                st.narrowed = Narrowed{op.loc, op.cast_to, true};
            continue;
        }
        if (op.kind == ChainOpKind::kLet) {
            if (check_let_name(sem, op, names))
                names[op.name] = Named{failed ? -1 : *v, dtype, op.name_loc, st.narrowed};
            continue;
        }
        if (op.kind == ChainOpKind::kUse) {
            const Named* n = lookup_name(sem, kn, chain, op, names);
            if (!n || n->node < 0) {
                failed = true;
                continue;
            }
            v = n->node;
            dtype = n->dtype;
            st.narrowed = n->narrowed;
            continue;
        }
        if (op.kind == ChainOpKind::kStore || op.kind == ChainOpKind::kReduce) {
            if (!op.tensor) continue;
            int node = failed ? -1 : *v;
            if (!failed && op.kind == ChainOpKind::kReduce) {
                const auto& dims = g.at(*v).dims;
                if (std::find(dims.begin(), dims.end(), op.reduce_over) == dims.end()) {
                    rep.error(op.loc, "reduce over " + op.reduce_over + ": the value's dims are " +
                                          dims_text(dims));
                    node = -1;
                } else {
                    node = g.apply("reduce_" + std::string(to_string(op.reduce)), {*v}, {},
                                   {op.reduce_over}, true, o);
                }
            }
            if (!failed && node >= 0 && op.kind == ChainOpKind::kStore &&
                (kn.kind == KernelKind::kRowwise || kn.kind == KernelKind::kPool ||
                 kn.kind == KernelKind::kCopy) &&
                named_dims(op.tensor->dims) != g.at(node).dims &&
                sem.numel(op.tensor->dims) == sem.numel(g.at(node).dims)) {
                // these kernels store at the value's row-major index: a store under other dims
                // of as many elements is the value reshaped (a merging or splitting view), or
                // the value itself where only dims of extent 1 differ (a rank view)
                const auto unit_free = [&](const std::vector<std::string>& dims) {
                    std::vector<std::string> out;
                    for (const auto& d : dims)
                        if (sem.extent(d) != 1) out.push_back(d);
                    return out;
                };
                node = unit_free(named_dims(op.tensor->dims)) == unit_free(g.at(node).dims)
                           ? g.relabel(node, named_dims(op.tensor->dims))
                           : g.gather({node}, "reshape", {}, named_dims(op.tensor->dims), o);
            }
            if (!failed) {
                std::optional<Narrowed> n = st.narrowed;
                if (n && op.kind == ChainOpKind::kReduce) n->pending = false;
                sem.narrowing_at_store(*op.tensor, node, n);
            }
            sem.store(*op.tensor, node, dtype, k);
            continue;
        }
        if (failed) {
            if (op.tensor) sem.read(*op.tensor, k);
            if (!op.name.empty() && !names.count(op.name)) lookup_name(sem, kn, chain, op, names);
            continue;
        }
        if (op.kind == ChainOpKind::kLoad) {  // the value is the tensor's element
            const std::optional<int> t = op.tensor ? sem.read(*op.tensor, k) : std::nullopt;
            if (!t) {
                if (!op.tensor) rep.error(op.loc, "load needs a tensor (load T[..])");
                failed = true;
                continue;
            }
            // (the value is replaced: its dims are the tensor's, broadcast where read next)
            if (auto it = sem.narrowed_tensors.find(op.tensor->name); it != sem.narrowed_tensors.end())
                st.narrowed = it->second;
            else
                st.narrowed.reset();
            v = *t;
            continue;
        }
        if (op.kind == ChainOpKind::kMaskedFill) {
            // M ? operand : value: the problem's masked_fill(value, M, c) with a number, its
            // where(M, t, value) with a named value; M a bool tensor broadcast into the value
            if (!op.tensor) {
                rep.error(op.loc, "masked_fill needs a bool mask tensor (masked_fill M[..] 1.5)");
                failed = true;
                continue;
            }
            const std::optional<int> m = sem.read(*op.tensor, k);
            if (!m) {
                failed = true;
                continue;
            }
            const Tensor* mt = sem.problem.find_tensor(op.tensor->name);
            if (mt && mt->dtype != DType::kBool) {
                rep.error(op.tensor->loc, "masked_fill: the mask " + op.tensor->name + " is " +
                                              std::string(to_string(mt->dtype)) +
                                              "; it must be a bool tensor");
                failed = true;
                continue;
            }
            if (!broadcast_dims(g.at(*v).dims, g.at(*m).dims)) {
                rep.error(op.tensor->loc, "cannot broadcast " + ref_text(*op.tensor) +
                                              " against the value's dims " + dims_text(g.at(*v).dims));
                failed = true;
                continue;
            }
            std::optional<int> fill;
            if (!op.name.empty()) {
                const Named* n = lookup_name(sem, kn, chain, op, names);
                if (!n || n->node < 0) {
                    failed = true;
                    continue;
                }
                if (!broadcast_dims(g.at(*v).dims, g.at(n->node).dims)) {
                    rep.error(op.name_loc, op.name + " has dims " + dims_text(g.at(n->node).dims) +
                                               ", which do not broadcast against the value's " +
                                               dims_text(g.at(*v).dims));
                    failed = true;
                    continue;
                }
                fill = n->node;
                absorb(n->narrowed);
            } else if (op.numbers.empty()) {
                rep.error(op.loc, "masked_fill needs a number or a named value after the mask");
                failed = true;
                continue;
            }
            computed();
            v = fill ? g.apply("where", {*m, *fill, *v}, {}, {}, false, o)
                     : g.apply("masked_fill", {*v, *m}, {op.numbers[0]}, {}, false, o);
            continue;
        }
        const bool binary = is_binary(op.kind);
        std::optional<int> operand;
        if (binary && !op.name.empty()) {
            const Named* n = lookup_name(sem, kn, chain, op, names);
            if (!n || n->node < 0) {
                failed = true;
                continue;
            }
            operand = n->node;
            computed();
            absorb(n->narrowed);
            if (!broadcast_dims(g.at(*v).dims, g.at(*operand).dims)) {
                rep.error(op.name_loc, op.name + " has dims " + dims_text(g.at(*operand).dims) +
                                           ", which do not broadcast against the value's " +
                                           dims_text(g.at(*v).dims));
                failed = true;
                continue;
            }
        } else if (binary && op.tensor) {
            operand = sem.read(*op.tensor, k);
            if (!operand) {
                failed = true;
                continue;
            }
            computed();
            if (auto it = sem.narrowed_tensors.find(op.tensor->name);
                it != sem.narrowed_tensors.end())
                absorb(it->second);
            // In a prologue an operand's dims of extent 1 that the row lacks broadcast too
            // (a matvec's B[K,N] with N = 1 against the rows of A[M,K]).
            const auto& od = g.at(*operand).dims;
            const auto& vd = g.at(*v).dims;
            const bool unit_extra =
                st.unit_dims_broadcast && std::all_of(od.begin(), od.end(), [&](const std::string& d) {
                    return std::find(vd.begin(), vd.end(), d) != vd.end() || sem.extent(d) == 1;
                });
            if (!broadcast_dims(vd, od) && !unit_extra) {
                rep.error(op.tensor->loc, "cannot broadcast " + ref_text(*op.tensor) +
                                              " against the value's dims " + dims_text(g.at(*v).dims));
                failed = true;
                continue;
            }
            if (named_dims(op.tensor->dims) == g.at(*v).dims) f.reads_residual = true;
        }
        const size_t need = op.kind == ChainOpKind::kClamp ? 2 : (binary && !operand) ? 1 : 0;
        if (op.numbers.size() < need) {
            rep.error(op.loc, std::string(to_string(op.kind)) + " needs " + std::to_string(need) +
                                  " number(s)");
            failed = true;
            continue;
        }
        const double c = op.numbers.empty() ? 0.0 : op.numbers[0];
        if (op.kind == ChainOpKind::kDiv && !operand && c == 0.0) {
            rep.error(op.loc, "div 0: division by zero");
            failed = true;
            continue;
        }
        computed();
        auto number = [&](double x) { return g.constant(x, o); };
        switch (op.kind) {
        case ChainOpKind::kAdd: v = g.add(*v, operand ? *operand : number(c), o); break;
        case ChainOpKind::kSub:
            v = g.add(*v, operand ? g.mul(*operand, number(-1.0), o) : number(-c), o);
            break;
        case ChainOpKind::kMul: v = g.mul(*v, operand ? *operand : number(c), o); break;
        case ChainOpKind::kDiv: v = operand ? g.div(*v, *operand, o) : g.mul(*v, number(1.0 / c), o); break;
        case ChainOpKind::kRsub:  // operand - value = operand + value * -1
            v = g.add(operand ? *operand : number(c), g.mul(*v, number(-1.0), o), o);
            break;
        case ChainOpKind::kRdiv: v = g.div(operand ? *operand : number(c), *v, o); break;
        case ChainOpKind::kNeg: v = g.mul(*v, number(-1.0), o); break;
        case ChainOpKind::kRelu: v = g.clamp(*v, 0.0, kInf, o); break;
        case ChainOpKind::kClamp: v = g.clamp(*v, op.numbers[0], op.numbers[1], o); break;
        case ChainOpKind::kMin:
            v = operand ? g.bound(false, *v, *operand, o) : g.clamp(*v, -kInf, c, o);
            break;
        case ChainOpKind::kMax:
            v = operand ? g.bound(true, *v, *operand, o) : g.clamp(*v, c, kInf, o);
            break;
        case ChainOpKind::kReciprocal: v = g.div(number(1.0), *v, o); break;
        case ChainOpKind::kLeakyRelu:
            v = g.apply("leaky_relu", {*v}, {op.numbers.empty() ? 0.01 : c}, {}, false, o);
            break;
        case ChainOpKind::kGelu:
            v = g.apply("gelu", {*v}, {op.gelu == GeluApprox::kTanh ? 1.0 : 0.0}, {}, false, o);
            break;
        case ChainOpKind::kSoftplus:
            v = g.apply("softplus", {*v}, {op.numbers.size() > 0 ? op.numbers[0] : 1.0,
                                           op.numbers.size() > 1 ? op.numbers[1] : 20.0},
                        {}, false, o);
            break;
        default: v = g.apply(std::string(to_string(op.kind)), {*v}, {}, {}, false, o); break;
        }
    }
    if (prev && sem.stopped(prev->loc)) failed = true;
}

// A rowwise kernel's prologue `pre { .. }` on its input node `xn`: element-wise statements
// only (no store, cast or reduce), operands that broadcast into the input (the value keeps the
// input's dims), and only before sum, mean, max or min. nullopt where it does not resolve.
std::optional<int> translate_prologue(Sem& sem, const Kernel& kn, int k, std::optional<int> xn,
                                      std::optional<Narrowed>& narrowed, KernelFacts& f) {
    Reporter& rep = sem.reporter;
    const ChainOp& first = kn.pre.front();
    if (kn.row_op != RowOp::kSum && kn.row_op != RowOp::kMean && kn.row_op != RowOp::kMax &&
        kn.row_op != RowOp::kMin) {
        rep.error(first.loc, "pre { .. }: only rowwise sum, mean, max and min take an element-wise "
                             "prologue, not " + std::string(to_string(kn.row_op)) +
                             "; write the element-wise part as a map kernel");
        return std::nullopt;
    }
    bool bad = false;
    for (const ChainOp& op : kn.pre) {
        if (op.kind == ChainOpKind::kStore || op.kind == ChainOpKind::kCast ||
            op.kind == ChainOpKind::kReduce) {
            rep.error(op.loc, "pre { .. }: " + std::string(to_string(op.kind)) +
                                  " is not allowed in the prologue (it only transforms each "
                                  "element before the reduction; store and cast go in the chain "
                                  "after the head's knobs)");
            bad = true;
        }
    }
    if (bad || !xn) return std::nullopt;
    const std::vector<std::string> in_dims = sem.graph.at(*xn).dims;
    ChainState st;
    st.v = xn;
    st.narrowed = narrowed;
    st.unit_dims_broadcast = true;
    translate_chain(sem, kn, k, kn.pre, st, f);
    narrowed = st.narrowed;
    f.reads_residual = false;
    if (st.failed || !st.v) return std::nullopt;
    const std::vector<std::string>& out = sem.graph.at(*st.v).dims;
    const bool widened = std::any_of(out.begin(), out.end(), [&](const std::string& d) {
        return std::find(in_dims.begin(), in_dims.end(), d) == in_dims.end() &&
               sem.extent(d) != 1;
    });
    if (widened) {
        rep.error(first.loc, "pre { .. }: the prologue's value has dims " + dims_text(out) +
                                 ", wider than the row input " + ref_text(kn.args[0]) +
                                 "; its operands must be indexed like the input or broadcast "
                                 "into it (e.g. v[" + (kn.args[0].dims.empty() ? std::string("K")
                                                      : kn.args[0].dims.back()) + "])");
        return std::nullopt;
    }
    return st.v;
}

}  // namespace

KernelFacts check_kernel_semantics(Sem& sem, int k) {
    const Kernel& kn = sem.program.kernels[static_cast<size_t>(k)];
    Reporter& rep = sem.reporter;
    ExprGraph& g = sem.graph;
    KernelFacts f;
    sem.max_bytes = sem.max_out_bytes = 0;
    const std::string at = Reporter::loc_text(kn.loc);
    std::optional<int> v;
    // The head computes on every tensor it reads: one stored from a value rounded below the
    // policy makes the kernel's value so.
    std::optional<Narrowed> head_narrowed;
    for (const TensorRef& a : kn.args) {
        auto it = sem.narrowed_tensors.find(a.name);
        if (it != sem.narrowed_tensors.end() && !head_narrowed) head_narrowed = it->second;
    }
    const size_t want_args = kn.kind == KernelKind::kGemm || kn.kind == KernelKind::kConv2d ? 2 : 1;
    if (kn.args.size() < want_args) {
        rep.error(kn.loc, "kernel " + kn.name + " needs " + std::to_string(want_args) + " operand(s)");
    } else if (kn.kind == KernelKind::kConv2d) {
        auto x = sem.read(kn.args[0], k);
        auto w = sem.read(kn.args[1], k);
        f.conv = conv2d_op(sem, kn);
        if (x && w && f.conv) {
            std::vector<double> params = conv2d_params(f.conv->attrs);
            if (is_conv_transpose(f.conv->kind))  // as the problem's node (check_problem_expr.cpp)
                for (int64_t e : f.conv->attrs.output_padding) params.push_back(static_cast<double>(e));
            v = g.conv2d(*x, *w, std::move(params), conv2d_out_dims(*f.conv, sem.problem),
                         Origin{at, kn.args[0].name, op_display(*f.conv, sem.problem)},
                         std::string(to_string(f.conv->kind)));
        }
    } else if (kn.kind == KernelKind::kGemm) {
        auto a = sem.read(kn.args[0], k);
        auto b = sem.read(kn.args[1], k);
        auto kdim = gemm_k(kn, rep);
        if (a && b && kdim) v = g.contract(*a, *b, *kdim, Origin{at, kn.args[0].name, "gemm"});
        // an operand whose dims repeat a name (att[B,T,T] @ v[B,T,E]): the contraction drops
        // every T (as the problem's matmul does: same keys); the value keeps the stored rows
        const auto repeats = [](const std::vector<std::string>& dims) {
            return !distinct_names(named_dims(dims));
        };
        const ChainOp* store = nullptr;
        for (const ChainOp& op : kn.chain)
            if (op.kind == ChainOpKind::kStore && op.tensor && !store) store = &op;
        if (v && store && (repeats(kn.args[0].dims) || repeats(kn.args[1].dims))) {
            const std::vector<std::string> rows = distinct_dims(named_dims(store->tensor->dims));
            if (rows != g.at(*v).dims) v = g.relabel(*v, rows);
        }
    } else if (kn.kind == KernelKind::kMap) {
        v = sem.read(kn.args[0], k);
    } else if (kn.kind == KernelKind::kRnn) {  // check_rnn.cpp
        v = rnn_kernel_expr(sem, kn, k);
    } else if (kn.kind == KernelKind::kAttention) {  // check_attention.cpp
        v = attention_expr(sem, kn, k);
    } else if (kn.kind == KernelKind::kPool) {  // check_pool.cpp
        auto x = sem.read(kn.args[0], k);
        const Op* op = pool_kernel_op(sem.problem, kn, rep);
        if (x && op) {
            v = g.pool(*x, std::string(to_string(op->kind)), pool_params(op->attrs),
                       conv2d_out_dims(*op, sem.problem),
                       Origin{at, kn.args[0].name, op_display(*op, sem.problem)});
        }
    } else if (kn.kind == KernelKind::kCopy) {  // check_copy.cpp
        std::vector<int> in;
        for (const TensorRef& a : kn.args)
            if (auto x = sem.read(a, k)) in.push_back(*x);
        const Op* op = copy_kernel_op(sem.problem, kn, rep);
        if (!op && (kn.copy_op == OpKind::kPermute || kn.copy_op == OpKind::kExpand) &&
            in.size() == 1) {
            const int n = free_permute_node(g, in[0], kn, rep);
            if (n >= 0) v = n;
        } else if (op && in.size() == kn.args.size()) {
            const Origin o{at, kn.args[0].name, op_display(*op, sem.problem)};
            v = copy_node(g, copy_inputs(g, std::move(in), *op, kn, sem.problem, o), *op,
                          sem.problem, o);
        }
    } else {
        const TensorRef& x = kn.args[0];
        const OpKind kind = row_op_kind(kn.row_op);
        std::string over = kn.over.empty() ? (x.dims.empty() ? "" : x.dims.back()) : kn.over;
        // the attributes a knob leaves unsaid (eps) are those of the problem's op of this kind
        // over the same dim, else of its first one (two l2_normalize, one with eps 1e-12 over
        // the last dim, one with none over a dim the planner transposes last)
        const Op* like = nullptr;
        for (const Op& op : sem.problem.ops) {
            if (op.kind != kind) continue;
            if (like == nullptr) like = &op;
            // only a normalize's dim picks another (the lookup below is linear in the problem's
            // tensors: for every row kernel of a 1000-op network it was most of the check)
            if (kind != OpKind::kL1Normalize && kind != OpKind::kL2Normalize) break;
            const Tensor* t = sem.problem.find_tensor(op.inputs.at(0));
            const int64_t rank = t ? static_cast<int64_t>(t->shape.size()) : 0;
            const int64_t a = op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis;
            if ((kind == OpKind::kL1Normalize || kind == OpKind::kL2Normalize) && t && a >= 0 &&
                a < rank && dim_text(*t, static_cast<size_t>(a)) == over) {
                like = &op;
                break;
            }
        }
        const size_t max_args = (kind == OpKind::kRmsNorm || kind == OpKind::kCrossEntropy) ? 2
                                : (kind == OpKind::kLayerNorm || kind == OpKind::kGroupNorm) ? 3 : 1;
        auto xn = sem.read(x, k);
        const std::optional<int> x_leaf = xn;
        if (!kn.pre.empty()) xn = translate_prologue(sem, kn, k, xn, head_narrowed, f);
        std::vector<int> in;
        if (xn) in.push_back(*xn);
        for (size_t i = 1; i < kn.args.size(); ++i) {
            if (i >= max_args) {
                rep.error(kn.args[i].loc, std::string(to_string(kn.row_op)) + " takes at most " +
                                              std::to_string(max_args) + " tensor(s)");
            } else if (auto w = sem.read(kn.args[i], k)) {
                in.push_back(*w);
            }
        }
        if (over_is_set(kn)) {
            // sum / mean / max / min over a set of dims in one kernel: the value reduced over
            // each (the expressions merge nested reductions of one kind, dsl/check_expr.h)
            const auto axes = over_axes(kn);
            if (!axes) {
                rep.error(knob_loc(kn, "over"), "over " + kn.over + ": each dim of the set must "
                                                    "be a dim of " + ref_text(x) + ", named once");
            } else if (!reduces_a_set(kn.row_op)) {
                rep.error(knob_loc(kn, "over"), "over " + kn.over + ": a set of dims is reduced "
                                                    "by sum, mean, max and min only, not " +
                                                    std::string(to_string(kn.row_op)));
            } else if (xn && in.size() == kn.args.size()) {
                std::vector<std::string> dims;
                for (size_t a : *axes) dims.push_back(x.dims[a]);
                const std::string name(to_string(kind));
                const Origin o{at, x.name, name + " over " + kn.over};
                v = g.apply("reduce_" + name, in, {}, named_dims(dims), true, o);
                // the lowering's vectors run within the innermost dim when the set has it
                // (codegen/lower_rowwise_col.cpp): that dim is the facts' row
                f.row_len = !x.dims.empty() && axes->back() + 1 == x.dims.size()
                                ? sem.extent(x.dims.back())
                                : 1;
                f.rows = f.row_len > 0 ? sem.numel(x.dims) / f.row_len : 0;
            }
        } else if (std::find(x.dims.begin(), x.dims.end(), over) == x.dims.end()) {
            rep.error(knob_loc(kn, "over"), "over " + over + ": " + ref_text(x) + " has no dim " + over);
        } else if (xn && in.size() == kn.args.size()) {
            const bool normalize = kind == OpKind::kL1Normalize || kind == OpKind::kL2Normalize;
            const double eps = kn.eps ? *kn.eps : like ? like->attrs.eps : normalize ? 0.0 : 1e-5;
            const double groups = static_cast<double>(kn.groups ? *kn.groups
                                                      : like ? like->attrs.num_groups : 1);
            std::string name(to_string(kind));
            Origin o{at, x.name, name + " over " + over};
            f.row_len = sem.extent(over);
            f.rows = f.row_len > 0 ? sem.numel(x.dims) / f.row_len : 0;
            if (kind == OpKind::kLayerNorm || kind == OpKind::kRmsNorm) {
                // A norm normalizes every dim from row_axis() on (as the lowering does).
                const size_t from = row_axis(kn).value_or(x.dims.size() - 1);
                std::vector<std::string> dims(x.dims.begin() + static_cast<std::ptrdiff_t>(from),
                                              x.dims.end());
                f.row_len = sem.numel(dims);
                f.rows = f.row_len > 0 ? sem.numel(x.dims) / f.row_len : 0;
                o.display = name + " over " + dims.front() + (dims.size() > 1 ? ".." + dims.back() : "");
                v = g.apply(name, in, {eps}, dims, false, o);
            } else if (kind == OpKind::kGroupNorm) {
                std::string c = x.dims.size() > 1 ? x.dims[1] : over;
                v = g.apply(name, in, {groups, eps}, {c}, false, o);
                f.rows = sem.extent(x.dims[0]) * static_cast<int64_t>(groups);
                f.row_len = f.rows > 0 ? sem.numel(x.dims) / f.rows : 0;
            } else if (normalize) {
                v = normalize_expr(g, in[0], kind == OpKind::kL2Normalize, eps, over, o);
            } else if (kind == OpKind::kCumsum || kind == OpKind::kCumprod) {
                o.display = scan_display(name, over, kn.rowwise.reverse, kn.rowwise.exclusive);
                v = g.apply(name, in, {kn.rowwise.reverse ? 1.0 : 0.0,
                                       kn.rowwise.exclusive ? 1.0 : 0.0}, {over}, false, o);
            } else if (kind == OpKind::kSoftmax || kind == OpKind::kLogSoftmax) {
                v = g.apply(name, in, {}, {over}, false, o);
            } else if ((kind == OpKind::kTril || kind == OpKind::kTriu) && x.dims.size() >= 2) {
                // the triangle of the last two dims, with the diagonal of the problem op
                // that reads this tensor (else the first of its kind)
                // (dsl/tri_mask.h: a tril / triu op, or a masked_fill with a structured mask)
                const bool lower = kind == OpKind::kTril;
                TriKeep keep = tri_keep_of(sem.problem, lower, x.name);
                if (!keep.found && like) keep = TriKeep{like->attrs.diagonal, 0.0, true};
                v = tri_fill_node(g, in[0], lower ? TriMask::kTriu : TriMask::kTril,
                                  keep.diagonal + (lower ? 1 : -1), keep.fill,
                                  x.dims[x.dims.size() - 2], x.dims[x.dims.size() - 1], o);
            } else if (kind == OpKind::kCrossEntropy) {  // every row's loss, then their mean
                v = g.apply(name, in, {}, named_dims(x.dims), true, o);
                f.rows = f.row_len > 0 ? sem.numel(x.dims) / f.row_len : 0;
            } else {
                v = g.apply(kind == OpKind::kLogsumexp ? name : "reduce_" + name, in, {}, {over},
                            true, o);
                // A prologue's `mul v` made it a contraction: its dims are the row input's
                // first, then the operand's of extent 1 (C[M,N] = A[M,K] B[K,N] with N = 1).
                if (!kn.pre.empty() && x_leaf && g.at(*v).op == "contract") {
                    const Expr& e = g.at(*v);
                    const int other = e.args[0] == *x_leaf   ? e.args[1]
                                      : e.args[1] == *x_leaf ? e.args[0]
                                                             : -1;
                    const std::string contracted = e.over.at(0);
                    if (other >= 0) v = g.contract(*x_leaf, other, contracted, o);
                }
            }
        }
    }

    ChainState st;
    st.v = v;
    if (kn.kind == KernelKind::kRowwise &&
        (kn.row_op == RowOp::kArgmax || kn.row_op == RowOp::kArgmin))
        st.dtype = DType::kI64;  // an index, stored as the problem's i64 output
    st.narrowed = head_narrowed;
    st.failed = !v.has_value() || sem.stopped(kn.loc);
    translate_chain(sem, kn, k, kn.chain, st, f);
    v = st.v;
    const bool failed = st.failed;
    if (v) {
        f.resolved = !failed;
        f.value_dims = g.at(*v).dims;
        f.numel = sem.numel(f.value_dims);
        f.last_extent = f.value_dims.empty() ? 1 : sem.extent(f.value_dims.back());
    }
    f.max_elem_bytes = std::max({sem.max_bytes, sem.max_out_bytes, 1});
    f.max_out_bytes = std::max(sem.max_out_bytes, 1);
    return f;
}

}  // namespace kforge::dsl
