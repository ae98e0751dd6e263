// lower_rnn: a checked `rnn lstm|gru(x, h0[, c0])` kernel to two launches per layer of
// kernels/rnn.cuh: the time-parallel input projection of all steps (grid N/64 x M/64 x D, 256
// threads), then the persistent recurrent kernel (D * ceil(H / units) CTAs of `threads`, W_hh
// rows in dynamic shared memory, one grid barrier per step). Sizes are literals.
//
// The op is the problem's lstm / gru the kernel computes (the checker's rule: its kind, x, h0,
// c0 as its args, the one the chain stores where several match). Workspaces (f32 unless said):
// <k>_proj [D, T, B, G*H], <k>_seq0 / <k>_seq1 [T, B, D*H] (layer outputs, ping-pong), <k>_h
// [D, 2, B, H] (the recurrent state exchanged between CTAs), <k>_sync [L] (i32 arrival counters,
// zeroed before the launches). The last layer writes an `output` result straight into the
// stored tensor in its layout (batch_first or not); h_n / c_n results are written by every
// layer's last step.
#include <sstream>

#include "codegen/kernel_entry.h"
#include "codegen/kernel_lowering.h"
#include "problem/rnn.h"

namespace kforge::codegen {
namespace {

const Op* find_rnn_op(const dsl::Kernel& kernel, const Problem& problem) {
    const dsl::ChainOp* store = first_store(kernel.chain);
    const Op* first = nullptr;
    for (const Op& op : problem.ops) {
        if (op.kind != kernel.rnn_op || kernel.args.size() != rnn_state_count(op.kind)) continue;
        bool same = true;
        for (size_t i = 0; i < kernel.args.size(); ++i) same = same && op.inputs[i] == kernel.args[i].name;
        if (!same) continue;
        if (store && op.output == store->tensor->name) return &op;
        if (!first) first = &op;
    }
    return first;
}

std::string lit(int64_t v) { return std::to_string(v) + "LL"; }

}  // namespace

Expected<KernelCode> lower_rnn(const dsl::Kernel& kernel, const LowerContext& ctx) {
    const std::string where = "kernel " + kernel.name;
    const dsl::RnnConfig& cfg = kernel.rnn;
    if (cfg.threads < 32 || cfg.threads > 1024 || cfg.threads % 32 != 0)
        return make_error(where, "threads must be a multiple of 32 in 32..1024");
    if (cfg.units < 1 || cfg.units > 64) return make_error(where, "units must be in 1..64");
    const Op* op = find_rnn_op(kernel, *ctx.problem);
    const dsl::ChainOp* store = first_store(kernel.chain);
    if (op == nullptr || store == nullptr || kernel.chain.size() != 1)
        return make_error(where, "an rnn kernel computes one lstm / gru op of the problem from its "
                                 "x, h0 (c0) and stores its result once");
    for (const std::string& name : op->inputs) {
        const Tensor* t = ctx.problem->find_tensor(name);
        auto ti = ctx.tensors.find(name);
        const DType dt = ti != ctx.tensors.end() ? ti->second.dtype : t ? t->dtype : DType::kF64;
        if (dt != DType::kF32) return make_error(where, "rnn kernels take f32 operands; " + name + " is not");
    }
    const Tensor* x = ctx.problem->find_tensor(op->inputs[0]);
    const Tensor* h0 = ctx.problem->find_tensor(op->inputs[1]);
    if (!x || !h0) return make_error(where, "unknown rnn operands");
    const RnnGeometry g = rnn_geometry(*op, x->shape, h0->shape);
    const bool lstm = g.lstm;
    const int64_t T = g.seq, B = g.batch, H = g.hidden, D = g.dirs, G = g.gates, GH = G * H;
    const int64_t ctas = D * ((H + cfg.units - 1) / cfg.units);
    const int64_t smem = rnn_recurrent_smem_bytes(lstm, B, H, cfg.units);
    const std::string y = store->tensor->name;
    const std::string k = kernel.name;
    const std::string proj = k + "_proj", seq0 = k + "_seq0", seq1 = k + "_seq1",
                      hs = k + "_h", sync = k + "_sync";
    const RnnResult result = op->attrs.rnn_result;

    KernelCode code;
    std::ostringstream src;
    const std::string cell = "kforge_" + k + "_cell";
    src << "// kernel " << k << ": " << to_string(op->kind) << " " << op->json_path << ", "
        << g.layers << " layer(s) x " << D << " direction(s), T " << T << ", B " << B << ", H "
        << H << ", " << ctas << " recurrent CTAs\n"
        << "using " << cell << " = kforge::RnnCell<" << (lstm ? "true" : "false") << ", " << lit(T)
        << ", " << lit(B) << ", " << lit(H) << ", " << D << ", " << cfg.units << ", "
        << cfg.threads << ">;\n";
    auto weight = [&](int64_t l, int64_t d, int which) {
        return op->inputs[rnn_weight_index(op->kind, op->attrs, l, d, which)];
    };
    for (int64_t l = 0; l < g.layers; ++l) {
        const bool last = l == g.layers - 1;
        const std::string in = l == 0 ? op->inputs[0] : ((l - 1) % 2 ? seq1 : seq0);
        const bool in_is_x = l == 0;
        // the layer's input rows (t, b): x in its layout, else a [T, B, D*H] sequence
        const int64_t a_t = in_is_x ? (g.batch_first ? g.input : B * g.input) : B * D * H;
        const int64_t a_b = in_is_x ? (g.batch_first ? T * g.input : g.input) : D * H;
        const int64_t K = g.layer_input(l);
        // 1. the projection
        EntryParams pp;
        if (in_is_x) pp.add_tensor(in, "float", false);
        else pp.add_workspace(in);
        for (int64_t d = 0; d < D; ++d) {
            pp.add_tensor(weight(l, d, 0), "float", false);
            if (g.bias) pp.add_tensor(weight(l, d, 2), "float", false);
        }
        pp.add_workspace(proj);
        const std::string psym = "kforge_" + k + "_proj_l" + std::to_string(l);
        auto tref = [](const std::string& n) { return "t_" + n; };
        auto wref = [](const std::string& n) { return "w_" + n; };
        const std::string a_ptr = in_is_x ? tref(in) : wref(in);
        src << "extern \"C\" __global__ void __launch_bounds__(256) " << psym << "("
            << pp.signature() << ") {\n"
            << "    __shared__ kforge::RnnProjTile tile;\n"
            << "    const int d = int(blockIdx.z);\n";
        src << "    const float* w = ";
        for (int64_t d = 0; d + 1 < D; ++d) src << "d == " << d << " ? " << tref(weight(l, d, 0)) << " : ";
        src << tref(weight(l, D - 1, 0)) << ";\n    const float* bias = ";
        if (!g.bias) src << "nullptr;\n";
        else {
            for (int64_t d = 0; d + 1 < D; ++d) src << "d == " << d << " ? " << tref(weight(l, d, 2)) << " : ";
            src << tref(weight(l, D - 1, 2)) << ";\n";
        }
        src << "    kforge::rnn_project(tile, " << a_ptr << ", " << lit(a_t) << ", " << lit(a_b)
            << ", " << lit(B) << ", w, bias, w_" << proj << " + int64_t(d) * " << lit(T * B * GH)
            << ", " << lit(T * B) << ", " << lit(GH) << ", " << lit(K) << ");\n}\n";
        KernelLaunch pl;
        pl.name = k;
        pl.symbol = psym;
        pl.grid = {unsigned((GH + 63) / 64), unsigned((T * B + 63) / 64), unsigned(D)};
        pl.block = {256, 1, 1};
        pl.params = pp.plan_params();
        code.launches.push_back(pl);

        // 2. the recurrence
        EntryParams rp;
        rp.add_tensor(op->inputs[1], "float", false);
        if (lstm) rp.add_tensor(op->inputs[2], "float", false);
        for (int64_t d = 0; d < D; ++d) {
            rp.add_tensor(weight(l, d, 1), "float", false);
            if (g.bias) rp.add_tensor(weight(l, d, 3), "float", false);
        }
        rp.add_workspace(proj);
        rp.add_workspace(hs);
        rp.add_workspace(sync, "unsigned");
        const bool to_y = last && result == RnnResult::kOutput;
        const bool states_to_y = result != RnnResult::kOutput;
        if (to_y || states_to_y) rp.add_tensor(y, "float", true);
        if (!to_y) rp.add_workspace(l % 2 ? seq1 : seq0);
        const std::string rsym = "kforge_" + k + "_rec_l" + std::to_string(l);
        const int64_t slot = l * D * B * H;
        const int64_t out_t = to_y && g.batch_first ? D * H : B * D * H;
        const int64_t out_b = to_y && g.batch_first ? T * D * H : D * H;
        auto per_dir = [&](int which) {
            std::string s = "{";
            for (int64_t d = 0; d < 2; ++d) {
                const int64_t dd = d < D ? d : 0;
                s += (d ? ", " : "") + (which == 3 && !g.bias ? std::string("nullptr") : tref(weight(l, dd, which)));
            }
            return s + "}";
        };
        src << "extern \"C\" __global__ void __launch_bounds__(" << cfg.threads << ") " << rsym
            << "(" << rp.signature() << ") {\n"
            << "    extern __shared__ float kf_smem[];\n"
            << "    const kforge::RnnLayer a{" << tref(op->inputs[1]) << " + " << lit(slot) << ", "
            << (lstm ? tref(op->inputs[2]) + " + " + lit(slot) : "nullptr") << ", "
            << per_dir(1) << ", " << per_dir(3) << ", w_" << proj << ", w_" << hs << ", w_"
            << sync << " + " << l << ", " << (to_y ? tref(y) : wref(l % 2 ? seq1 : seq0)) << ", "
            << lit(out_t) << ", " << lit(out_b) << ", "
            << (result == RnnResult::kHn ? tref(y) + " + " + lit(slot) : "nullptr") << ", "
            << (result == RnnResult::kCn ? tref(y) + " + " + lit(slot) : "nullptr") << "};\n"
            << "    kforge::rnn_layer<" << cell << ", " << cfg.threads << ">(a, kf_smem);\n}\n";
        KernelLaunch rl;
        rl.name = k;
        rl.symbol = rsym;
        rl.grid = {unsigned(ctas), 1, 1};
        rl.block = {unsigned(cfg.threads), 1, 1};
        rl.smem_bytes = unsigned(smem);
        rl.params = rp.plan_params();
        code.launches.push_back(rl);
    }
    code.device_source = "#include \"kernels/rnn.cuh\"\n" + src.str();
    auto buffer = [&](const std::string& name, DType dt, std::vector<int64_t> shape, bool zero) {
        BufferDecl b;
        b.name = name;
        b.dtype = dt;
        b.shape = std::move(shape);
        b.zero_init = zero;
        b.workspace = true;
        code.buffers.push_back(b);
    };
    buffer(proj, DType::kF32, {D, T, B, GH}, false);
    buffer(seq0, DType::kF32, {T, B, D * H}, false);
    if (g.layers > 1) buffer(seq1, DType::kF32, {T, B, D * H}, false);
    buffer(hs, DType::kF32, {D, 2, B, H}, false);
    buffer(sync, DType::kI32, {g.layers}, true);
    return code;
}

}  // namespace kforge::codegen
