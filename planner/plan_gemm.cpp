// Matrix ops in the fusion planner (planner/partition.h): matmul / linear as a gemm kernel whose
// epilogue chain absorbs the element-wise ops that follow (operands named by their problem dims,
// so transposes and a batch dim follow from the names); a matrix-vector product as a row sum;
// f16/bf16 operands with odd rows staged as f32 by a map kernel first.
#include <algorithm>

#include "planner/knobs.h"
#include "planner/partition.h"

namespace kforge::planner::detail {

using dsl::ChainOp;
using dsl::ChainOpKind;

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

}  // namespace kforge::planner::detail
