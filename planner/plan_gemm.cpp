// Matrix ops in the fusion planner (planner/partition.h): matmul / linear as a gemm kernel whose
// epilogue chain absorbs the element-wise ops that follow (operands named by their problem dims,
// so transposes and a batch dim follow from the names); a matrix-vector product as a row sum;
// f16/bf16 operands with odd rows staged as f32 by a map kernel first.
#include <algorithm>

#include "codegen/gemm_spec.h"
#include "dsl/printer.h"
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

namespace {

// The batch dims of a matrix operand or output as a program names them: all but the last two,
// size-1 dims dropped.
std::vector<std::string> batch_of(const std::vector<std::string>& dims) {
    return named({dims.begin(), dims.end() - std::min<std::ptrdiff_t>(2, std::ptrdiff_t(dims.size()))});
}

// A copy kernel `copy expand(x[..]) { store <x>_b<k>[L.., rows, cols] }`: x with the batch dims
// `batch` in front of its matrix dims (a program intermediate that computes no problem op), for a
// matmul operand that has only some of its output's batch dims.
dsl::TensorRef expand_operand(Planner& pl, const Op& op, const Tensor& x,
                              const std::vector<std::string>& batch) {
    const auto dx = dims_of(x);
    std::vector<std::string> dims = batch;
    dims.insert(dims.end(), dx.end() - 2, dx.end());
    std::string name = x.name + "_b" + std::to_string(pl.kernels.size());
    while (pl.p.find_tensor(name) != nullptr || pl.available.count(name)) name += "_";
    const dsl::TensorRef out{name, dims, {}};
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kCopy;
    kn.copy_op = OpKind::kExpand;
    kn.args = {pl.ref(x.name)};
    if (pl.dtype_of(x.name) != DType::kF32) {  // a copy's value is f32 until cast back
        ChainOp cast = stmt(ChainOpKind::kCast);
        cast.cast_to = pl.dtype_of(x.name);
        kn.chain.push_back(cast);
    }
    ChainOp store = stmt(ChainOpKind::kStore);
    store.tensor = out;
    kn.chain.push_back(store);
    pl.available.insert(name);
    pl.stored_dtype[name] = pl.dtype_of(x.name);
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind)) + ": " + x.name +
                             " expanded to the batch dims " + dsl::dims_text(batch) +
                             " (a gemm operand has all of its batch dims or none)"};
    dsl::CopyConfig c;
    dsl::CopyConfig safe;
    safe.threads = 128;
    safe.vec = 1;
    for (const auto& cfg : {c, safe}) {
        kn.copy = cfg;
        pk.candidates.push_back(kn);
    }
    pl.kernels.push_back(std::move(pk));
    return out;
}

}  // namespace

// A matmul or linear as one gemm kernel: D[L.., F.., M, N] = A[L.., F.., M, K] x B[L.., K, N] with
// any batch dims, as codegen/gemm_spec.h lowers it - L.. (every batch dim both operands have, or
// one has and the other lacks entirely: batch stride 0) flattened into CUTLASS's one batch mode,
// F.. (the trailing batch dims A has and B lacks, A K-major) folded into M; both free views of
// packed tensors. An operand with only some of L.. ([B,H,M,K] x [H,K,N]) is expanded by a copy
// kernel first (expand_operand), the one copy the single batch stride cannot avoid. Transposes
// are layouts (A[K,M], B[N,K]), never copies.
Status Planner::add_gemm(const Op& op) {
    if (add_row_contraction(op)) return Ok{};
    const Tensor& a = tensor(op.inputs[0]);
    const Tensor& b = tensor(op.inputs[1]);
    const Tensor& y = tensor(op.output);
    const auto da = dims_of(a), db = dims_of(b), dy = dims_of(y);
    if (da.size() < 2 || db.size() < 2 || (op.kind == OpKind::kLinear && db.size() != 2))
        return not_expressible(op, "operands of rank " + std::to_string(da.size()) + " and " +
                                       std::to_string(db.size()) + "; a gemm takes matrices "
                                       "behind batch dims");
    DType dt = dtype_of(a.name);
    if (dt != dtype_of(b.name) || !is_float_storage(dt)) {
        return not_expressible(op, "gemm operands " + a.name + " and " + b.name + " must share one "
                                   "dtype of f32, f16 or bf16");
    }
    const bool ta = op.kind == OpKind::kMatmul && op.attrs.transpose_a;
    const bool tb = op.kind == OpKind::kLinear || op.attrs.transpose_b;
    // The program names dims, not layouts: where A's and B's names repeat (a square operand) the
    // lowering reads matmul's order (codegen::resolve_gemm_layout), which must be the op's.
    const std::vector<std::string> a2(da.end() - 2, da.end()), b2(db.end() - 2, db.end());
    const auto layout = codegen::resolve_gemm_layout(a2, b2, dy[dy.size() - 2], dy.back());
    if (!layout || layout->a_row_major == ta || layout->b_col_major != tb)
        return not_expressible(op, "operands " + a.name + dsl::dims_text(da) + " and " + b.name + dsl::dims_text(db) +
                                   " name their dims so that a program cannot tell which is "
                                   "contracted (transpose_a " + (ta ? "true" : "false") +
                                   ", transpose_b " + (tb ? "true" : "false") + ")");
    // Batch dims: F.. folded into M, L.. the rest (codegen/gemm_spec.cpp batch_dims).
    const auto bd = batch_of(dy), ba = batch_of(da), bb = batch_of(db);
    const size_t f = codegen::gemm_fold_count(ba, bb, bd, !ta);
    const std::vector<std::string> batch(bd.begin(), bd.end() - std::ptrdiff_t(f));
    const std::vector<std::string> a_rest(ba.begin(), ba.end() - std::ptrdiff_t(f));
    dsl::TensorRef ra = ref(a.name), rb = ref(b.name);
    if (!a_rest.empty() && a_rest != batch) ra = expand_operand(*this, op, a, bd);
    if (!bb.empty() && bb != batch) rb = expand_operand(*this, op, b, batch);
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kGemm;
    kn.args = {ra, rb};
    // f16/bf16 operands with a row of an odd number of elements (not a multiple of 4 bytes): no
    // CUTLASS GEMM reads them (TMA needs 16-byte rows, cp.async at least 4 bytes, and the SIMT
    // mainloop takes f32 only), so a map kernel first casts each operand to f32 and the GEMM
    // runs on f32 rows (4-byte aligned: multistage; tf32 holds f16 and bf16 values exactly).
    if (dt != DType::kF32 && ((a.shape.back() * dtype_bytes(dt)) % 4 != 0 ||
                              (b.shape.back() * dtype_bytes(dt)) % 4 != 0)) {
        if (ra.name != a.name || rb.name != b.name)
            return not_expressible(op, "f16/bf16 operands with rows of an odd number of elements "
                                       "that are also broadcast over part of the batch dims");
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
    s.m = y.shape[r - 2];
    s.n = y.shape[r - 1];
    s.l = 1;
    // the folded dims are the last f named batch dims (bd, as gemm_fold_count counted them):
    // counted from the end past the size-1 dims, not by position ([L,F,1,M,N]: F folds)
    size_t named_after = 0;
    for (size_t i = r - 2; i-- > 0;) {
        if (dy[i] == "1") continue;
        (named_after++ < f ? s.m : s.l) *= y.shape[i];
    }
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
