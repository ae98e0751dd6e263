// The partition of the fusion planner (search/seed.h): one walk over the ops in topological
// order; matrix ops start gemm kernels, reductions/softmax/norms rowwise kernels, other
// element-wise ops map kernels; each kernel's chain then absorbs the element-wise consumers of
// its value (absorb()): either the linear run of single consumers, or, where it takes more ops,
// the region of element-wise ops computable from the kernel's values (its value, each value
// computed from it, a map's input) and stored tensors, as one chain that names each value read
// more than once or out of order with `let` (plan_region(), emit_region()): x*0.5 + x after a
// gemm, softsign and the ELU family on a map are one kernel.
// Invariants: a tensor that a later kernel reads was stored by an earlier one; every value of
// a kernel that an op outside it reads, or that is a problem output, is stored by it; a gemm
// chain stores once, at its end (codegen/gemm_spec.cpp).
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "search/seed_internal.h"

namespace kforge::search::detail {
namespace {

using dsl::ChainOp;
using dsl::ChainOpKind;

std::vector<std::string> dims_of(const Tensor& t) {
    std::vector<std::string> out;
    for (size_t i = 0; i < t.shape.size(); ++i)
        out.push_back(i < t.dim_names.size() && !t.dim_names[i].empty() ? t.dim_names[i]
                                                                          : std::to_string(t.shape[i]));
    return out;
}

std::vector<std::string> named(const std::vector<std::string>& dims) {
    std::vector<std::string> out;
    for (const auto& d : dims)
        if (d != "1") out.push_back(d);
    return out;
}

Error not_expressible(const Op& op, const std::string& why) {
    return make_error(op.json_path, "not expressible: " + std::string(to_string(op.kind)) + ": " + why);
}

ChainOp stmt(ChainOpKind kind, std::vector<double> numbers = {}) {
    ChainOp c;
    c.kind = kind;
    c.numbers = std::move(numbers);
    return c;
}

bool is_float_storage(DType d) { return d == DType::kF32 || d == DType::kF16 || d == DType::kBF16; }

// The other operand of a binary op: a tensor, or a value of the chain named by `let`.
struct Operand {
    std::optional<dsl::TensorRef> tensor;
    std::string name;
};

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
    default: return std::nullopt;
    }
}

dsl::RowOp row_op_of(OpKind k) {
    switch (k) {
    case OpKind::kSoftmax: return dsl::RowOp::kSoftmax;
    case OpKind::kLogSoftmax: return dsl::RowOp::kLogSoftmax;
    case OpKind::kLogsumexp: return dsl::RowOp::kLogsumexp;
    case OpKind::kLayerNorm: return dsl::RowOp::kLayerNorm;
    case OpKind::kRmsNorm: return dsl::RowOp::kRmsNorm;
    case OpKind::kGroupNorm: return dsl::RowOp::kGroupNorm;
    case OpKind::kSum: return dsl::RowOp::kSum;
    case OpKind::kMean: return dsl::RowOp::kMean;
    case OpKind::kMax: return dsl::RowOp::kMax;
    case OpKind::kProd: return dsl::RowOp::kProd;
    case OpKind::kL1Normalize: return dsl::RowOp::kL1Normalize;
    case OpKind::kL2Normalize: return dsl::RowOp::kL2Normalize;
    case OpKind::kCumsum: return dsl::RowOp::kCumsum;
    case OpKind::kCumprod: return dsl::RowOp::kCumprod;
    default: return dsl::RowOp::kMin;
    }
}

// Scan (cumsum / cumprod) row kernels stream the row in tiles of threads / rows_per_block x vec
// elements with a running carry (kernels/scan.cuh). Rows of at most two warp tiles take one warp
// or less per row (256 threads a block); longer rows a whole block per row, led by the narrowest
// of 256, 512, 1024 threads that covers the row in one tile, else by 1024 when the rows are few
// (they must still fill the SMs' threads) and 256 when 256-thread rows fill every SM's 2048
// threads (H200 2026-12-02: 4096 rows of 32768 f32, 256 threads 294 us against 1024 threads
// 324 us; 128 such rows 29.7 us against 15.0 us). The first candidate is the seed's; the others
// are the search's.
std::vector<dsl::RowwiseConfig> scan_candidates(int64_t rows, int64_t len, int elem_bytes,
                                                int sm_count) {
    dsl::RowwiseConfig base;
    base.vec = elem_bytes >= 4 ? 4 : 8;  // 16-byte accesses
    std::vector<dsl::RowwiseConfig> out;
    if (len <= 64 * base.vec) {
        int per_row = 1;
        while (per_row < 32 && int64_t(per_row) * base.vec < len) per_row *= 2;
        dsl::RowwiseConfig c = base;
        c.threads = 256;
        c.rows_per_block = 256 / per_row;
        out.push_back(c);
    }
    constexpr int64_t kThreadsPerSm = 2048;
    int lead = rows * 256 >= int64_t(sm_count) * kThreadsPerSm ? 256 : 1024;
    for (int threads : {256, 512, 1024}) {
        if (int64_t(threads) * base.vec >= len) {
            lead = threads;
            break;
        }
    }
    for (int threads : {lead, 1024, 512, 256}) {
        bool seen = false;
        for (const auto& c : out) seen = seen || (c.threads == threads && c.rows_per_block == 1);
        if (seen) continue;
        dsl::RowwiseConfig c = base;
        c.threads = threads;
        out.push_back(c);
    }
    return out;
}

struct Planner {
    const Problem& p;
    const dsl::DeviceLimits& limits;
    const SeedOptions& opt;
    std::set<std::string> available;            // inputs and tensors stored so far
    std::map<std::string, DType> stored_dtype;  // as the program stores them
    std::map<std::string, std::vector<size_t>> readers;  // tensor -> op indices (one per use)
    std::vector<bool> done;
    std::vector<PlannedKernel> kernels;

    const Tensor& tensor(const std::string& name) const { return *p.find_tensor(name); }
    dsl::TensorRef ref(const std::string& name) const {
        return dsl::TensorRef{name, dims_of(tensor(name)), {}};
    }
    bool is_output(const std::string& name) const {
        return std::find(p.outputs.begin(), p.outputs.end(), name) != p.outputs.end();
    }
    DType dtype_of(const std::string& name) const {
        auto it = stored_dtype.find(name);
        return it != stored_dtype.end() ? it->second : tensor(name).dtype;
    }

    // The dtype the program stores `name` in: the problem's, or f32 for an intermediate that
    // only rowwise/map kernels read when intermediates_f32 is on.
    DType store_dtype(const std::string& name) const {
        const Tensor& t = tensor(name);
        if (is_output(name) || !opt.intermediates_f32) return t.dtype;
        for (size_t r : readers.at(name)) {  // gemm and conv2d operands share one dtype
            const OpClass c = op_class(p.ops[r].kind);
            if (c == OpClass::kMatrix || c == OpClass::kConv) return t.dtype;
        }
        return DType::kF32;
    }

    Status emit_store(dsl::Kernel& kn, DType& value, const std::string& name, const Op& op) {
        const DType d = store_dtype(name);
        if (!is_float_storage(d)) {
            return not_expressible(op, "tensor " + name + " is " + std::string(to_string(d)) +
                                           "; chains store only f32, f16 or bf16");
        }
        if (d != value) {
            ChainOp c = stmt(ChainOpKind::kCast);
            c.cast_to = d;
            kn.chain.push_back(c);
            value = d;
        }
        ChainOp s = stmt(ChainOpKind::kStore);
        s.tensor = ref(name);
        kn.chain.push_back(s);
        available.insert(name);
        stored_dtype[name] = d;
        return Ok{};
    }

    // Whether a gemm epilogue can read `other` (dims [], [N], [M], [M,N] or [L,M,N]); a conv2d
    // epilogue (`conv`, out [N,K,P,Q]): [], [K] or [N,K,P,Q].
    static bool epilogue_operand(const std::vector<std::string>& other,
                                 const std::vector<std::string>& out, bool conv = false) {
        if (other.empty() || other == out) return true;
        if (conv) return out.size() == 4 && other == std::vector{out[1]};
        if (out.size() < 2) return false;
        const std::string& m = out[out.size() - 2];
        const std::string& n = out.back();
        return other == std::vector{n} || other == std::vector{m} ||
               other == std::vector<std::string>{m, n};
    }

    // What planning a kernel changes besides the kernel: absorb() plans two ways from one state.
    struct Planned {
        std::vector<bool> done;
        std::set<std::string> available;
        std::map<std::string, DType> stored_dtype;
    };
    Planned planned() const { return {done, available, stored_dtype}; }
    void restore(Planned s) {
        done = std::move(s.done);
        available = std::move(s.available);
        stored_dtype = std::move(s.stored_dtype);
    }

    // Absorbs the element-wise consumers of `cur` into `kn`'s chain and stores what the rest of
    // the program reads: the linear run of single consumers, or the region (plan_region()) where
    // that takes more ops. `input`: a map's input tensor, a value of the chain from its start.
    Status absorb(dsl::Kernel& kn, const std::string& cur, DType& value, const Op& start,
                  const std::optional<std::string>& input = std::nullopt) {
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
    struct Region {
        std::string start;                 // the kernel's value before the region
        std::optional<std::string> input;  // a map's input, named where the region reads it
        std::vector<size_t> ops;
        std::set<std::string> values;      // start, input and every op's output
    };
    std::optional<Region> plan_region(const dsl::Kernel& kn, const std::string& cur,
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
            if (named(dims_of(tensor(op.output))) != space) continue;
            bool reads_value = false, ok = true;
            int matrices = 0;
            for (const auto& in : op.inputs) {
                if (r.values.count(in)) {
                    reads_value = true;
                    continue;
                }
                const auto od = named(dims_of(tensor(in)));
                if (!available.count(in) || (gemm && !epilogue_operand(od, space, conv))) ok = false;
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
    bool stored_after(const std::string& v, const Region& r) const {
        if (is_output(v)) return true;
        for (size_t reader : readers.at(v))
            if (std::find(r.ops.begin(), r.ops.end(), reader) == r.ops.end()) return true;
        return false;
    }

    // Appends region `r` to `kn`'s chain: each op on the value (`use t` first where the value
    // is another), `let` after each value that an op reads by name, `store` after each value
    // stored_after(). Two passes of one walk: the first finds the values read by name.
    Status emit_region(dsl::Kernel& kn, const Region& r, DType& value, const Op& start) {
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
    Status absorb_linear(dsl::Kernel& kn, std::string cur, DType& value, const Op& start) {
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
            const size_t pos = op.inputs[0] == cur ? 0 : 1;
            std::optional<dsl::TensorRef> other;
            if (op.inputs.size() > 1) {
                const std::string& o = op.inputs[1 - pos];
                if (!available.count(o)) break;
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

    // A row reduction's element-wise prologue (`pre { .. }`): the tensor the row is read from
    // and the statements applied to each element before it is reduced.
    struct Prologue {
        std::string x;
        std::vector<ChainOp> stmts;
    };
    std::optional<Prologue> fold_into_reduction(const Op& op, size_t& reduction);
    // The reductions a prologue can feed, and whether `next` reduces `value` (its input) over
    // the last dim, a named dim that occurs once in `value`'s dims.
    static bool is_row_reduction(OpKind k) {
        return k == OpKind::kSum || k == OpKind::kMean || k == OpKind::kMax || k == OpKind::kMin;
    }
    bool reduces_last_dim(const Op& next, const std::string& value) const {
        const auto dn = dims_of(tensor(value));
        const int64_t rank = static_cast<int64_t>(dn.size());
        if (rank == 0 || next.inputs[0] != value) return false;
        const int64_t axis = next.attrs.axis < 0 ? next.attrs.axis + rank : next.attrs.axis;
        return axis == rank - 1 && dn.back() != "1" &&
               std::count(dn.begin(), dn.end(), dn.back()) == 1;
    }
    bool add_row_contraction(const Op& op);
    dsl::TensorRef stage_f32(const Tensor& x);
    Status add_gemm(const Op& op);
    Status add_conv2d(const Op& op);
    Status add_rowwise(const Op& op, const Prologue* pre = nullptr);
    Status add_map(const Op& op);
    int max_bytes(const dsl::Kernel& kn) const;
};

// A matmul (or linear) with a vector operand, [M,K] x [K,1] or [1,K] x [N,K] (the vector's
// only named dim is the contracted K, which is the matrix's last dim): a row reduction
// `rowwise sum(X[M,K]) pre { mul v[K,1] }`, which reads the matrix once, instead of a GEMM whose
// tile wastes all but one column. f32 accumulation in every precision policy. Returns false
// (nothing planned) where the op is not of that form or K is short.
bool Planner::add_row_contraction(const Op& op) {
    constexpr int64_t kMinK = 64;  // below, a gemm tile is as good and the seed keeps it
    if (!opt.fuse || (op.kind != OpKind::kMatmul && op.kind != OpKind::kLinear)) return false;
    if (op.kind == OpKind::kMatmul && op.attrs.transpose_a) return false;
    const Tensor& a = tensor(op.inputs[0]);
    const Tensor& b = tensor(op.inputs[1]);
    const auto da = dims_of(a), db = dims_of(b);
    if (da.empty() || db.empty()) return false;
    // Dims of extent 1 (written "1", or named: the importer names a matvec's N of 1) broadcast.
    const auto wide = [](const Tensor& t) {
        std::vector<std::string> out;
        const auto d = dims_of(t);
        for (size_t i = 0; i < d.size(); ++i)
            if (t.shape[i] != 1) out.push_back(d[i]);
        return out;
    };
    const std::string k = da.back();
    if (k == "1" || std::count(da.begin(), da.end(), k) != 1) return false;
    const bool b_k_last = op.kind == OpKind::kLinear || op.attrs.transpose_b;
    const std::vector<std::string> kv{k};
    std::string x, v;
    if (wide(b) == kv && db.size() <= 2) {
        x = a.name, v = b.name;  // [.., M, K] x [K, 1] (or W[1, K])
    } else if (wide(a) == kv && da.size() <= 2 && b_k_last && db.size() == 2 && db.back() == k) {
        x = b.name, v = a.name;  // [1, K] x [N, K]
    } else {
        return false;
    }
    const Tensor& xt = tensor(x);
    if (xt.shape.back() < kMinK) return false;
    const DType dt = dtype_of(x);
    if (dt != dtype_of(v) || !is_float_storage(dt)) return false;
    // The output's dims must be the matrix's without K.
    std::vector<std::string> rest(wide(xt));
    rest.pop_back();
    if (wide(tensor(op.output)) != rest) return false;
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kRowwise;
    kn.row_op = dsl::RowOp::kSum;
    kn.args = {ref(x)};
    ChainOp mul = stmt(ChainOpKind::kMul);
    mul.tensor = ref(v);
    kn.pre = {mul};
    if (op.kind == OpKind::kLinear && op.inputs.size() > 2) {
        ChainOp c = stmt(ChainOpKind::kAdd);
        c.tensor = ref(op.inputs[2]);
        kn.chain.push_back(c);
    }
    const Planned before = planned();
    DType value = DType::kF32;
    if (!absorb(kn, op.output, value, op)) {
        restore(before);
        return false;
    }
    RowShape s;
    s.elem_bytes = dtype_bytes(dt);
    s.len = xt.shape.back();
    s.rows = xt.numel() / std::max<int64_t>(1, s.len);
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind)) + " as a row sum"};
    for (const auto& c : rowwise_candidates(s, limits, opt)) {
        kn.rowwise = c;
        pk.candidates.push_back(kn);
    }
    kernels.push_back(std::move(pk));
    return true;
}

// A map kernel `map(x) { cast f32; store x_f32 }` (a name no tensor of the problem has); the
// reference to the f32 copy.
dsl::TensorRef Planner::stage_f32(const Tensor& x) {
    std::string name = x.name + "_f32";
    while (p.find_tensor(name) != nullptr || available.count(name)) name += "_";
    const dsl::TensorRef out{name, dims_of(x), {}};
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kMap;
    kn.args = {dsl::TensorRef{x.name, dims_of(x), {}}};
    ChainOp cast = stmt(ChainOpKind::kCast);
    cast.cast_to = DType::kF32;
    ChainOp store = stmt(ChainOpKind::kStore);
    store.tensor = out;
    kn.chain = {cast, store};
    available.insert(name);
    stored_dtype[name] = DType::kF32;
    PlannedKernel pk{{}, x.name + " staged as f32 for the gemm"};
    for (const auto& c : map_candidates(x.numel(), x.shape.empty() ? 1 : x.shape.back(), 4, limits)) {
        kn.map = c;
        pk.candidates.push_back(kn);
    }
    kernels.push_back(std::move(pk));
    return out;
}

Status Planner::add_gemm(const Op& op) {
    if (add_row_contraction(op)) return Ok{};
    const Tensor& a = tensor(op.inputs[0]);
    const Tensor& b = tensor(op.inputs[1]);
    const Tensor& y = tensor(op.output);
    const auto da = dims_of(a), db = dims_of(b);
    const bool plain = da.size() == 2 && db.size() == 2;
    const bool batched = da.size() == 3 && db.size() == 3 && da[0] == db[0];
    // [F..,M,K] x [K,N]: F.. fold into M (codegen/gemm_spec.h), as nn.Linear on [batch, seq, d]
    const bool folded = da.size() >= 3 && db.size() == 2;
    if (!plain && !batched && !folded) {
        return not_expressible(op, "operands of rank " + std::to_string(da.size()) + " and " +
                                       std::to_string(db.size()) + "; a gemm takes [M,K] x [K,N] "
                                       "matrices, a batch [L,M,K] x [L,K,N] with one batch dim, "
                                       "or [F..,M,K] x [K,N]");
    }
    DType dt = dtype_of(a.name);
    if (dt != dtype_of(b.name) || !is_float_storage(dt)) {
        return not_expressible(op, "gemm operands " + a.name + " and " + b.name + " must share one "
                                   "dtype of f32, f16 or bf16");
    }
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kGemm;
    kn.args = {ref(a.name), ref(b.name)};
    // f16/bf16 operands with a row of an odd number of elements (not a multiple of 4 bytes): no
    // CUTLASS GEMM reads them (TMA needs 16-byte rows, cp.async at least 4 bytes, and the SIMT
    // mainloop takes f32 only), so a map kernel first casts each operand to f32 and the GEMM
    // runs on f32 rows (4-byte aligned: multistage; tf32 holds f16 and bf16 values exactly).
    if (dt != DType::kF32 && ((a.shape.back() * dtype_bytes(dt)) % 4 != 0 ||
                              (b.shape.back() * dtype_bytes(dt)) % 4 != 0)) {
        kn.args = {stage_f32(a), stage_f32(b)};
        dt = DType::kF32;
    }
    if (op.kind == OpKind::kLinear && op.inputs.size() > 2) {
        ChainOp c = stmt(ChainOpKind::kAdd);
        c.tensor = ref(op.inputs[2]);
        kn.chain.push_back(c);
    }
    DType value = DType::kF32;
    if (auto st = absorb(kn, op.output, value, op); !st) return st;
    GemmShape s;
    s.dtype = dt;
    const size_t r = y.shape.size();
    s.l = batched ? y.shape[0] : 1;
    s.m = y.shape[r - 2];
    if (folded)  // the GEMM's M is every folded dim times M (folded excludes batched)
        for (size_t i = 0; i + 2 < r; ++i) s.m *= y.shape[i];
    s.n = y.shape[r - 1];
    const bool ta = op.kind == OpKind::kMatmul && op.attrs.transpose_a;
    s.k = a.shape[ta ? a.shape.size() - 2 : a.shape.size() - 1];
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind))};
    for (const auto& c : gemm_candidates(s, p.policy, limits, opt)) {
        kn.gemm = c;
        pk.candidates.push_back(kn);
    }
    kernels.push_back(std::move(pk));
    return Ok{};
}

// conv2d(x, w [, b]): one conv2d kernel (the implicit GEMM of M = N*P*Q, N = K, K = C*R*S) whose
// chain adds the bias and absorbs the element-wise ops that follow as a gemm's epilogue does
// (operands [], [K] or the output's [N,K,P,Q]; one store, at the end).
Status Planner::add_conv2d(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& w = tensor(op.inputs[1]);
    const Tensor& y = tensor(op.output);
    if (op.attrs.groups != 1) {
        return not_expressible(op, "not supported: grouped convolution (groups " +
                                       std::to_string(op.attrs.groups) + ")");
    }
    if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4)
        return not_expressible(op, "a conv2d kernel takes x [N,C,H,W] and w [K,C,R,S]");
    const DType dt = dtype_of(x.name);
    if (dt != dtype_of(w.name) || !is_float_storage(dt)) {
        return not_expressible(op, "conv2d input " + x.name + " and weight " + w.name +
                                       " must share one dtype of f32, f16 or bf16");
    }
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kConv2d;
    kn.args = {ref(x.name), ref(w.name)};
    if (op.inputs.size() > 2) {
        ChainOp c = stmt(ChainOpKind::kAdd);
        c.tensor = ref(op.inputs[2]);
        kn.chain.push_back(c);
    }
    DType value = DType::kF32;
    if (auto st = absorb(kn, op.output, value, op); !st) return st;
    GemmShape s;
    s.dtype = dt;
    s.m = y.shape[0] * y.shape[2] * y.shape[3];
    s.n = y.shape[1];
    s.k = w.shape[1] * w.shape[2] * w.shape[3];
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind))};
    for (const auto& c : conv2d_candidates(s, p.policy, limits)) {
        kn.gemm = c;
        pk.candidates.push_back(kn);
    }
    kernels.push_back(std::move(pk));
    return Ok{};
}

Status Planner::add_rowwise(const Op& op, const Prologue* pre) {
    const Tensor& x = tensor(pre ? pre->x : op.inputs[0]);
    const auto dx = dims_of(x);
    const size_t rank = dx.size();
    if (rank == 0) return not_expressible(op, "a scalar input");
    const size_t axis = static_cast<size_t>(op.attrs.axis < 0 ? op.attrs.axis + int64_t(rank)
                                                              : op.attrs.axis);
    const bool norm = op.kind == OpKind::kLayerNorm || op.kind == OpKind::kRmsNorm;
    const bool group = op.kind == OpKind::kGroupNorm;
    const bool softmax = op.kind == OpKind::kSoftmax || op.kind == OpKind::kLogSoftmax ||
                         op.kind == OpKind::kLogsumexp;
    const bool normalize = op.kind == OpKind::kL1Normalize || op.kind == OpKind::kL2Normalize;
    const bool scan = op.kind == OpKind::kCumsum || op.kind == OpKind::kCumprod;
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kRowwise;
    kn.row_op = row_op_of(op.kind);
    for (const auto& in : op.inputs) kn.args.push_back(ref(in));
    if (pre) {
        kn.args[0] = ref(pre->x);
        kn.pre = pre->stmts;
    }
    RowShape s;
    s.elem_bytes = dtype_bytes(dtype_of(x.name));
    s.softmax_family = softmax;
    int64_t numel = 1;
    for (int64_t v : x.shape) numel *= v;
    if (norm) {
        // Over the trailing dims normalized_shape covers: one row of their product, named by
        // the first of them (`over`) when there are several.
        const size_t n = std::clamp<size_t>(op.attrs.normalized_shape.size(), 1, rank);
        if (n > 1) kn.over = dx[rank - n];
        kn.eps = op.attrs.eps;
        s.len = 1;
        for (size_t i = rank - n; i < rank; ++i) s.len *= x.shape[i];
    } else if (group) {
        if (rank < 2) return not_expressible(op, "group_norm needs X[N, C, *]");
        kn.eps = op.attrs.eps;
        kn.groups = op.attrs.num_groups;
        s.rows = x.shape[0] * op.attrs.num_groups;
        s.len = numel / std::max<int64_t>(1, s.rows);
    } else {
        if (std::count(dx.begin(), dx.end(), dx[axis]) != 1) {
            return not_expressible(op, "the reduced dim " + dx[axis] + " appears more than once in " +
                                           x.name + "; name the dims apart");
        }
        if (normalize && op.attrs.eps != 0) kn.eps = op.attrs.eps;  // 0: the knob's default
        if (axis != rank - 1) {
            if (softmax || normalize || scan) {
                return not_expressible(op, "over " + dx[axis] + ", not the last dim: softmax, "
                                               "log_softmax, logsumexp, l1_normalize, "
                                               "l2_normalize, cumsum and cumprod run over the "
                                               "last dim");
            }
            kn.over = dx[axis];
            s.column = true;
        }
        s.len = x.shape[axis];
    }
    if (!group) s.rows = numel / std::max<int64_t>(1, s.len);
    DType value = DType::kF32;
    if (auto st = absorb(kn, op.output, value, op); !st) return st;
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind))};
    if (scan) {
        for (dsl::RowwiseConfig c : scan_candidates(s.rows, s.len, s.elem_bytes, limits.sm_count)) {
            c.reverse = op.attrs.reverse;
            c.exclusive = op.attrs.exclusive;
            kn.rowwise = c;
            pk.candidates.push_back(kn);
        }
        kernels.push_back(std::move(pk));
        return Ok{};
    }
    for (const auto& c : rowwise_candidates(s, limits, opt)) {
        kn.rowwise = c;
        pk.candidates.push_back(kn);
    }
    kernels.push_back(std::move(pk));
    return Ok{};
}

int Planner::max_bytes(const dsl::Kernel& kn) const {
    int bytes = 1;
    for (const auto& a : kn.args) bytes = std::max(bytes, dtype_bytes(dtype_of(a.name)));
    DType value = DType::kF32;
    for (const auto& c : kn.chain) {
        if (c.kind == ChainOpKind::kCast) value = c.cast_to;
        if (c.kind == ChainOpKind::kStore) bytes = std::max(bytes, dtype_bytes(value));
        else if (c.tensor) bytes = std::max(bytes, dtype_bytes(dtype_of(c.tensor->name)));
    }
    return bytes;
}

// Whether element-wise `op` starts a run of element-wise ops (each value read once, by the
// next, and no output) that ends in a sum / mean / max / min over the last dim of a value with
// the run's dims: the run is then that reduction's prologue, read from the run's first input
// (the one with the full dims), and its values are never stored. `reduction`: the reduction's
// op index. Operands must be available and broadcast into the row (their dims among its dims).
std::optional<Planner::Prologue> Planner::fold_into_reduction(const Op& op, size_t& reduction) {
    if (!opt.fuse) return std::nullopt;
    const auto full = named(dims_of(tensor(op.output)));
    if (full.empty()) return std::nullopt;
    const auto within = [&](const std::string& t) {
        for (const auto& d : named(dims_of(tensor(t))))
            if (std::find(full.begin(), full.end(), d) == full.end()) return false;
        return true;
    };
    Prologue pre;
    size_t pos = 0;
    if (op.inputs.size() > 1) {
        const bool first_full = named(dims_of(tensor(op.inputs[0]))) == full;
        const bool second_full = named(dims_of(tensor(op.inputs[1]))) == full;
        if (!first_full && second_full) pos = 1;
        if (op.inputs[0] == op.inputs[1]) return std::nullopt;
    }
    pre.x = op.inputs[pos];
    if (named(dims_of(tensor(pre.x))) != full || dims_of(tensor(pre.x)) != dims_of(tensor(op.output)))
        return std::nullopt;
    const Op* cur = &op;
    size_t cur_pos = pos;
    std::vector<size_t> run;
    while (true) {
        Operand other;
        if (cur->inputs.size() > 1) {
            const std::string& o = cur->inputs[1 - cur_pos];
            if (!available.count(o) || !within(o)) return std::nullopt;
            other.tensor = ref(o);
        }
        auto stmts = translate(*cur, cur_pos, other);
        if (!stmts) return std::nullopt;
        pre.stmts.insert(pre.stmts.end(), stmts->begin(), stmts->end());
        const std::string& out = cur->output;
        const auto& rs = readers.at(out);
        if (is_output(out) || rs.size() != 1 || done[rs[0]]) return std::nullopt;
        if (named(dims_of(tensor(out))) != full) return std::nullopt;
        const Op& next = p.ops[rs[0]];
        if (is_row_reduction(next.kind)) {
            if (!reduces_last_dim(next, out)) return std::nullopt;
            for (size_t i : run) done[i] = true;
            reduction = rs[0];
            return pre;
        }
        if (op_class(next.kind) != OpClass::kElementwise) return std::nullopt;
        cur_pos = next.inputs[0] == out ? 0 : 1;
        if (next.inputs.size() > 1 && next.inputs[0] == next.inputs[1]) return std::nullopt;
        run.push_back(rs[0]);
        cur = &next;
    }
}

Status Planner::add_map(const Op& op) {
    size_t reduction = 0;
    if (auto pre = fold_into_reduction(op, reduction)) {
        done[reduction] = true;
        return add_rowwise(p.ops[reduction], &*pre);
    }
    const auto out = named(dims_of(tensor(op.output)));
    size_t pos = 0;
    std::optional<dsl::TensorRef> other;
    if (op.inputs.size() > 1) {
        const bool first_full = named(dims_of(tensor(op.inputs[0]))) == out;
        const bool second_full = named(dims_of(tensor(op.inputs[1]))) == out;
        if (!first_full && second_full && translate(op, 1, Operand{ref(op.inputs[0]), ""})) pos = 1;
        other = ref(op.inputs[1 - pos]);
    }
    auto stmts = translate(op, pos, Operand{other, ""});
    if (!stmts) return not_expressible(op, "no chain statement computes it");
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kMap;
    kn.args = {ref(op.inputs[pos])};
    kn.chain = *stmts;
    DType value = DType::kF32;
    if (auto st = absorb(kn, op.output, value, op, op.inputs[pos]); !st) return st;
    // A map whose one store (its last statement, no cast) only a row reduction over the last
    // dim reads, with the map input's dims: its chain (named values and all: the Huber loss's
    // branches) becomes that reduction's prologue and the value is never written.
    if (opt.fuse && !kn.chain.empty() && kn.chain.back().kind == ChainOpKind::kStore) {
        const std::string s_name = kn.chain.back().tensor->name;
        const auto& rs = readers.at(s_name);
        bool plain = true;
        for (size_t i = 0; i + 1 < kn.chain.size(); ++i)
            plain = plain && kn.chain[i].kind != ChainOpKind::kStore &&
                    kn.chain[i].kind != ChainOpKind::kCast;
        if (plain && !is_output(s_name) && rs.size() == 1 && !done[rs[0]] &&
            dims_of(tensor(s_name)) == kn.args[0].dims) {
            const Op& next = p.ops[rs[0]];
            if (is_row_reduction(next.kind) && reduces_last_dim(next, s_name)) {
                Prologue pre{kn.args[0].name, {kn.chain.begin(), kn.chain.end() - 1}};
                done[rs[0]] = true;
                available.erase(s_name);
                stored_dtype.erase(s_name);
                return add_rowwise(next, &pre);
            }
        }
    }
    const Tensor& y = tensor(op.output);
    int64_t innermost = 1;
    for (size_t i = y.shape.size(); i-- > 0;) {
        if (dims_of(y)[i] != "1") {
            innermost = y.shape[i];
            break;
        }
    }
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind))};
    for (const auto& c : map_candidates(y.numel(), innermost, max_bytes(kn), limits)) {
        kn.map = c;
        pk.candidates.push_back(kn);
    }
    kernels.push_back(std::move(pk));
    return Ok{};
}

}  // namespace

Expected<std::vector<PlannedKernel>> plan_kernels(const Problem& problem,
                                                  const dsl::DeviceLimits& limits,
                                                  const SeedOptions& options) {
    Planner pl{problem, limits, options, {}, {}, {}, {}, {}};
    for (const Tensor* t : problem.graph_inputs()) pl.available.insert(t->name);
    for (const Tensor& t : problem.tensors) pl.readers[t.name];
    for (size_t i = 0; i < problem.ops.size(); ++i)
        for (const auto& in : problem.ops[i].inputs) pl.readers[in].push_back(i);
    pl.done.assign(problem.ops.size(), false);
    for (size_t i = 0; i < problem.ops.size(); ++i) {
        if (pl.done[i]) continue;
        pl.done[i] = true;
        const Op& op = problem.ops[i];
        for (const auto& in : op.inputs) {
            if (!pl.available.count(in))
                return make_error(op.json_path, "internal: input " + in + " was never stored");
        }
        Status st = Ok{};
        switch (op_class(op.kind)) {
        case OpClass::kMatrix: st = pl.add_gemm(op); break;
        case OpClass::kReduction:
        case OpClass::kRowwise: st = pl.add_rowwise(op); break;
        case OpClass::kElementwise: st = pl.add_map(op); break;
        case OpClass::kConv: st = pl.add_conv2d(op); break;
        }
        if (!st) return st.error();
    }
    for (size_t k = 0; k < pl.kernels.size(); ++k)
        for (auto& c : pl.kernels[k].candidates) c.name = "k" + std::to_string(k);
    return std::move(pl.kernels);
}

}  // namespace kforge::search::detail
