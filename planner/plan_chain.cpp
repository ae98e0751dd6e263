// Chains of the fusion planner (planner/partition.h): element-wise ops as chain statements
// (translate()), and a kernel's chain absorbing the element-wise consumers of its value
// (Planner::absorb()): either the linear run of single consumers (absorb_linear()), or, where it
// takes more ops, the region of element-wise ops computable from the kernel's values (its value,
// each value computed from it, a map's input) and stored tensors, as one chain that names each
// value read more than once or out of order with `let` (plan_region(), emit_region()): x*0.5 + x
// after a gemm, softsign and the ELU family on a map are one kernel. A gemm or conv2d chain
// stores once, at its end (codegen/gemm_spec.cpp).
#include <algorithm>
#include <limits>

#include "planner/partition.h"

namespace kforge::planner::detail {

using dsl::ChainOp;
using dsl::ChainOpKind;

// The chain statements of element-wise `op` applied to the value, which is its input `pos`;
// `other` is the other operand of a binary op. nullopt where no chain expresses it.
std::optional<std::vector<ChainOp>> translate(const Op& op, size_t pos, const Operand& other) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const OpAttrs& a = op.attrs;
    auto binary = [&](ChainOpKind kind) {
        ChainOp c = stmt(kind);
        c.tensor = other.tensor;
        c.name = other.name;
        return c;
    };
    switch (op.kind) {
    case OpKind::kAdd: return std::vector{binary(ChainOpKind::kAdd)};
    case OpKind::kMul: return std::vector{binary(ChainOpKind::kMul)};
    case OpKind::kSub:
        if (pos == 0) return std::vector{binary(ChainOpKind::kSub)};
        return std::vector{stmt(ChainOpKind::kNeg), binary(ChainOpKind::kAdd)};
    case OpKind::kDiv:
        if (pos == 0) return std::vector{binary(ChainOpKind::kDiv)};
        return std::vector{binary(ChainOpKind::kRdiv)};  // other / value
    case OpKind::kMaximum: return std::vector{binary(ChainOpKind::kMax)};  // either order
    case OpKind::kMinimum: return std::vector{binary(ChainOpKind::kMin)};
    case OpKind::kScale: return std::vector{stmt(ChainOpKind::kMul, {a.scalar})};
    case OpKind::kAddScalar: return std::vector{stmt(ChainOpKind::kAdd, {a.scalar})};
    case OpKind::kMinScalar: return std::vector{stmt(ChainOpKind::kMin, {a.scalar})};
    case OpKind::kMaxScalar: return std::vector{stmt(ChainOpKind::kMax, {a.scalar})};
    case OpKind::kHardtanh:
    case OpKind::kClamp:
        if (a.lo == -kInf && a.hi == kInf) return std::vector<ChainOp>{};
        if (a.lo == -kInf) return std::vector{stmt(ChainOpKind::kMin, {a.hi})};
        if (a.hi == kInf) return std::vector{stmt(ChainOpKind::kMax, {a.lo})};
        return std::vector{stmt(ChainOpKind::kClamp, {a.lo, a.hi})};
    case OpKind::kDropout: return std::vector<ChainOp>{};
    case OpKind::kLeakyRelu: return std::vector{stmt(ChainOpKind::kLeakyRelu, {a.negative_slope})};
    case OpKind::kSoftplus: return std::vector{stmt(ChainOpKind::kSoftplus, {a.beta, a.threshold})};
    case OpKind::kGelu: {
        ChainOp c = stmt(ChainOpKind::kGelu);
        c.gelu = a.gelu;
        return std::vector{c};
    }
    case OpKind::kRelu: return std::vector{stmt(ChainOpKind::kRelu)};
    case OpKind::kSilu: return std::vector{stmt(ChainOpKind::kSilu)};
    case OpKind::kSigmoid: return std::vector{stmt(ChainOpKind::kSigmoid)};
    case OpKind::kTanh: return std::vector{stmt(ChainOpKind::kTanh)};
    case OpKind::kMish: return std::vector{stmt(ChainOpKind::kMish)};
    case OpKind::kExp: return std::vector{stmt(ChainOpKind::kExp)};
    case OpKind::kLog: return std::vector{stmt(ChainOpKind::kLog)};
    case OpKind::kNeg: return std::vector{stmt(ChainOpKind::kNeg)};
    case OpKind::kAbs: return std::vector{stmt(ChainOpKind::kAbs)};
    case OpKind::kSqrt: return std::vector{stmt(ChainOpKind::kSqrt)};
    case OpKind::kRsqrt: return std::vector{stmt(ChainOpKind::kRsqrt)};
    case OpKind::kSquare: return std::vector{stmt(ChainOpKind::kSquare)};
    case OpKind::kErf: return std::vector{stmt(ChainOpKind::kErf)};
    case OpKind::kLog1p: return std::vector{stmt(ChainOpKind::kLog1p)};
    case OpKind::kExpm1: return std::vector{stmt(ChainOpKind::kExpm1)};
    case OpKind::kSin: return std::vector{stmt(ChainOpKind::kSin)};
    case OpKind::kCos: return std::vector{stmt(ChainOpKind::kCos)};
    case OpKind::kSign: return std::vector{stmt(ChainOpKind::kSign)};
    case OpKind::kReciprocal: return std::vector{stmt(ChainOpKind::kReciprocal)};
    case OpKind::kMaskedFill: {
        // by a bool mask tensor, on X's value (a structured mask is an index kernel's,
        // plan_index.cpp); `other` is the mask (a name only when plan_region() probes)
        if (pos != 0 || a.tri_mask != TriMask::kNone || op.inputs.size() != 2) return std::nullopt;
        if (!other.tensor && other.name.empty()) return std::nullopt;
        ChainOp c = stmt(ChainOpKind::kMaskedFill, {a.scalar});
        c.tensor = other.tensor;
        return std::vector{c};
    }
    default: return std::nullopt;  // where: Planner::add_map (three operands)
    }
}

// Whether `t` is a folded view (plan_view.cpp) of an available bool tensor: a mask a chain
// reads under the view's dims (an attention's key padding mask [N, S] as [N, 1, 1, S]).
bool Planner::mask_view(const std::string& t) const {
    auto it = views.find(t);
    return it != views.end() && available.count(it->second.name) &&
           tensor(it->second.name).dtype == DType::kBool;
}

// Whether a gemm epilogue can read `other` (dims [], [N], [M], [M,N] or [L,M,N]); a conv2d
// epilogue (`conv`, out [N,K,P,Q]): [], [K] or [N,K,P,Q].
bool Planner::epilogue_operand(const std::vector<std::string>& other,
                               const std::vector<std::string>& out, bool conv) {
    if (other.empty() || other == out) return true;
    if (conv) return out.size() == 4 && other == std::vector{out[1]};
    if (out.size() < 2) return false;
    const std::string& m = out[out.size() - 2];
    const std::string& n = out.back();
    return other == std::vector{n} || other == std::vector{m} ||
           other == std::vector<std::string>{m, n};
}

// Absorbs the element-wise consumers of `cur` into `kn`'s chain and stores what the rest of
// the program reads: the linear run of single consumers, or the region (plan_region()) where
// that takes more ops. `input`: a map's input tensor, a value of the chain from its start.
Status Planner::absorb(dsl::Kernel& kn, const std::string& cur, DType& value, const Op& start,
                       const std::optional<std::string>& input) {
    const Planned before = planned();
    dsl::Kernel linear = kn;
    DType linear_value = value;
    if (auto st = absorb_linear(linear, cur, linear_value, start); !st) return st;
    const auto linear_ops = std::count(done.begin(), done.end(), true) -
                            std::count(before.done.begin(), before.done.end(), true);
    Planned after_linear = planned();
    restore(before);
    // As many ops, but the linear chain reads the map's input again from memory as an
    // operand (softsign: `rdiv X[R,C]`) where the region names it (`let v0; ..; rdiv v0`).
    bool rereads_input = false;
    for (size_t i = kn.chain.size(); i < linear.chain.size(); ++i)
        if (input && linear.chain[i].tensor && linear.chain[i].tensor->name == *input &&
            linear.chain[i].kind != ChainOpKind::kStore)
            rereads_input = true;
    std::optional<Region> region;
    if (opt.fuse) region = plan_region(kn, cur, input);
    const auto region_ops = region ? static_cast<int64_t>(region->ops.size()) : 0;
    if (region && (region_ops > linear_ops || (region_ops == linear_ops && rereads_input))) {
        dsl::Kernel with_region = kn;
        DType region_value = value;
        if (emit_region(with_region, *region, region_value, start)) {
            kn = std::move(with_region);
            value = region_value;
            return Ok{};
        }
        // a value the region would store cannot be (emit_store's dtype rule): the linear plan
    }
    restore(std::move(after_linear));
    kn = std::move(linear);
    value = linear_value;
    return Ok{};
}

// The element-wise ops that one chain can compute after `kn`'s value `cur` (see the file
// comment), in topological order, or nullopt where they do not form a chain `kn` can run
// (a gemm: more than one value to store, or the stored value not the last).
std::optional<Planner::Region> Planner::plan_region(const dsl::Kernel& kn, const std::string& cur,
                                                    const std::optional<std::string>& input) const {
    // a conv2d kernel's chain follows the gemm epilogue's rules (one store, at its end)
    const bool conv = kn.kind == dsl::KernelKind::kConv2d;
    const bool gemm = kn.kind == dsl::KernelKind::kGemm || conv;
    const std::vector<std::string> space = named(dims_of(tensor(cur)));
    int matrix_operands = 0;
    for (const ChainOp& c : kn.chain)
        if (c.tensor && named(c.tensor->dims) == space) ++matrix_operands;
    Region r{cur, input, {}, {cur}};
    if (input) r.values.insert(*input);
    for (size_t i = 0; i < p.ops.size(); ++i) {
        const Op& op = p.ops[i];
        if (done[i] || op_class(op.kind) != OpClass::kElementwise) continue;
        if (gemm && op.kind == OpKind::kMaskedFill) continue;  // no epilogue select
        if (named(dims_of(tensor(op.output))) != space) continue;
        bool reads_value = false, ok = true;
        int matrices = 0;
        for (const auto& in : op.inputs) {
            if (r.values.count(in)) {
                reads_value = true;
                continue;
            }
            const auto od = named(dims_of(tensor(in)));
            const bool readable =
                available.count(in) || (op.kind == OpKind::kMaskedFill && mask_view(in));
            if (!readable || (gemm && !epilogue_operand(od, space, conv))) ok = false;
            if (od == space) ++matrices;
        }
        if (!reads_value || !ok || (gemm && matrix_operands + matrices > 1)) continue;
        if (!translate(op, 0, Operand{std::nullopt, "v"})) continue;
        matrix_operands += matrices;
        r.ops.push_back(i);
        r.values.insert(op.output);
    }
    if (r.ops.empty()) return std::nullopt;
    if (gemm) {
        const std::string& last = p.ops[r.ops.back()].output;
        for (const auto& v : r.values)
            if (v != last && v != input && stored_after(v, r)) return std::nullopt;
    }
    return r;
}

// Whether value `v` of region `r` must be stored: a problem output, or read by an op
// outside the region.
bool Planner::stored_after(const std::string& v, const Region& r) const {
    if (is_output(v)) return true;
    for (size_t reader : readers.at(v))
        if (std::find(r.ops.begin(), r.ops.end(), reader) == r.ops.end()) return true;
    return false;
}

// Appends region `r` to `kn`'s chain: each op on the value (`use t` first where the value
// is another), `let` after each value that an op reads by name, `store` after each value
// stored_after(). Two passes of one walk: the first finds the values read by name.
Status Planner::emit_region(dsl::Kernel& kn, const Region& r, DType& value, const Op& start) {
    std::set<std::string> by_name;
    for (int pass = 0; pass < 2; ++pass) {
        const bool emit = pass == 1;
        std::map<std::string, std::string> names;  // tensor -> let name
        std::map<std::string, DType> named_dtype;
        int next_name = 0;
        auto bind = [&](const std::string& t, DType d) {
            std::string n;
            do n = "v" + std::to_string(next_name++);
            while (p.find_tensor(n));
            names[t] = n;
            named_dtype[t] = d;
            ChainOp c = stmt(ChainOpKind::kLet);
            c.name = n;
            return c;
        };
        std::string cur = r.start;
        DType v = value;
        if (emit) {
            if (r.input && by_name.count(*r.input))
                kn.chain.insert(kn.chain.begin(), bind(*r.input, DType::kF32));
            if (stored_after(cur, r))
                if (auto st = emit_store(kn, v, cur, start); !st) return st;
            if (by_name.count(cur)) kn.chain.push_back(bind(cur, v));
        }
        for (size_t i : r.ops) {
            const Op& op = p.ops[i];
            size_t pos = 0;
            if (op.inputs.size() > 1) {
                if (op.inputs[0] == cur) pos = 0;
                else if (op.inputs[1] == cur) pos = 1;
                else pos = r.values.count(op.inputs[0]) ? 0 : 1;
            }
            if (op.inputs[pos] != cur) {
                by_name.insert(op.inputs[pos]);
                if (emit) {
                    ChainOp c = stmt(ChainOpKind::kUse);
                    c.name = names.at(op.inputs[pos]);
                    kn.chain.push_back(c);
                    v = named_dtype.at(op.inputs[pos]);
                }
            }
            Operand other;
            if (op.inputs.size() > 1) {
                const std::string& o = op.inputs[1 - pos];
                if (r.values.count(o)) {
                    by_name.insert(o);
                    other.name = emit ? names.at(o) : "v";
                } else {
                    other.tensor = ref(o);
                }
            }
            auto stmts = translate(op, pos, other);
            if (!stmts) return not_expressible(op, "internal: a region op has no statement");
            cur = op.output;
            if (!emit) continue;
            kn.chain.insert(kn.chain.end(), stmts->begin(), stmts->end());
            done[i] = true;
            if (stored_after(cur, r))
                if (auto st = emit_store(kn, v, cur, op); !st) return st;
            if (by_name.count(cur)) kn.chain.push_back(bind(cur, v));
        }
        if (emit && (kn.chain.empty() || kn.chain.back().kind != ChainOpKind::kStore))
            return emit_store(kn, v, cur, start);  // a value no op reads: stored, as linear
        if (emit) value = v;
    }
    return Ok{};
}

// Absorbs the run of single element-wise consumers of `cur` into `kn`'s chain, then stores
// the value.
Status Planner::absorb_linear(dsl::Kernel& kn, std::string cur, DType& value, const Op& start) {
    const bool conv = kn.kind == dsl::KernelKind::kConv2d;
    const bool gemm = kn.kind == dsl::KernelKind::kGemm || conv;
    const std::vector<std::string> gemm_out = named(dims_of(tensor(cur)));
    bool residual = false;
    for (const ChainOp& c : kn.chain)
        if (c.tensor && named(c.tensor->dims) == gemm_out) residual = true;
    while (opt.fuse) {
        const auto& rs = readers[cur];
        if (rs.size() != 1 || done[rs[0]] || (gemm && is_output(cur))) break;
        const Op& op = p.ops[rs[0]];
        if (op_class(op.kind) != OpClass::kElementwise) break;
        if (gemm && op.kind == OpKind::kMaskedFill) break;  // no epilogue select
        if (op.kind == OpKind::kWhere) {  // where(C, value, B): let w; load B; masked_fill C w
            const bool fits = !gemm && op.inputs[1] == cur && op.inputs[0] != cur &&
                              op.inputs[2] != cur && available.count(op.inputs[0]) &&
                              available.count(op.inputs[2]) &&
                              named(dims_of(tensor(op.output))) == named(dims_of(tensor(cur)));
            if (!fits) break;
            std::set<std::string> taken;
            for (const ChainOp& c : kn.chain)
                if (c.kind == ChainOpKind::kLet) taken.insert(c.name);
            std::string w = "w0";
            for (int n = 1; taken.count(w) || p.find_tensor(w); ++n) w = "w" + std::to_string(n);
            ChainOp let = stmt(ChainOpKind::kLet), load = stmt(ChainOpKind::kLoad),
                    fill = stmt(ChainOpKind::kMaskedFill);
            let.name = fill.name = w;
            load.tensor = ref(op.inputs[2]);
            fill.tensor = ref(op.inputs[0]);
            if (is_output(cur))
                if (auto st = emit_store(kn, value, cur, op); !st) return st;
            kn.chain.insert(kn.chain.end(), {let, load, fill});
            done[rs[0]] = true;
            cur = op.output;
            continue;
        }
        const size_t pos = op.inputs[0] == cur ? 0 : 1;
        std::optional<dsl::TensorRef> other;
        if (op.inputs.size() > 1) {
            const std::string& o = op.inputs[1 - pos];
            if (!available.count(o) && !(op.kind == OpKind::kMaskedFill && mask_view(o))) break;
            if (named(dims_of(tensor(op.output))) != named(dims_of(tensor(cur)))) break;
            other = ref(o);
            const auto od = named(other->dims);
            if (gemm && (!epilogue_operand(od, gemm_out, conv) || (od == gemm_out && residual)))
                break;
            if (od == gemm_out) residual = true;
        }
        auto stmts = translate(op, pos, Operand{other, ""});
        if (!stmts) break;
        if (is_output(cur)) {
            if (auto st = emit_store(kn, value, cur, op); !st) return st;
        }
        kn.chain.insert(kn.chain.end(), stmts->begin(), stmts->end());
        done[rs[0]] = true;
        cur = op.output;
    }
    return emit_store(kn, value, cur, start);
}

}  // namespace kforge::planner::detail
