// lower_program: see lower.h. The pass list reads top to bottom in lower_program().
#include "codegen/lower.h"

#include <map>

#include <cstdlib>

#include "codegen/gemm_emit_common.h"
#include "codegen/memory_plan.h"

namespace kforge::codegen {
namespace {

Expected<std::vector<int64_t>> shape_of(const dsl::TensorRef& ref, const Problem& problem) {
    std::vector<int64_t> shape;
    for (const auto& d : ref.dims) {
        auto it = problem.dims.find(d);
        if (it != problem.dims.end()) {
            shape.push_back(it->second);
            continue;
        }
        char* end = nullptr;
        long long v = std::strtoll(d.c_str(), &end, 10);
        if (d.empty() || *end != '\0' || v < 1)
            return make_error(ref.name, "unknown dim \"" + d + "\" in " + ref.name);
        shape.push_back(v);
    }
    return shape;
}

std::string table_text(const std::map<std::string, TensorInfo>& tensors) {
    std::string s;
    for (const auto& [name, t] : tensors) {
        s += name + " " + std::string(to_string(t.dtype)) + " [";
        for (size_t i = 0; i < t.shape.size(); ++i)
            s += (i ? "," : "") + t.dim_names[i] + "=" + std::to_string(t.shape[i]);
        s += t.intermediate ? "] intermediate\n" : "]\n";
    }
    return s;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
}

}  // namespace

CutlassEntry cutlass_entry(const std::string& ns, const std::string& symbol,
                           const std::string& device_source, std::string entry_source) {
    const std::string open = "namespace " + ns + " {", close = "}  // namespace " + ns;
    const size_t begin = device_source.find(open), end = device_source.find(close);
    CutlassEntry e;
    if (begin != std::string::npos && end != std::string::npos && end > begin) {
        e.key = device_source.substr(begin, end + close.size() - begin) + "\n" + entry_source;
        replace_all(e.key, ns, "@NS@");
        replace_all(e.key, symbol, "@SYMBOL@");
    } else {
        e.key = "no namespace block: " + symbol;  // keyed by its own name: never shared
    }
    e.source = std::move(entry_source);
    e.symbol = symbol;
    return e;
}

Expected<std::map<std::string, TensorInfo>> build_tensor_table(const dsl::Program& program,
                                                               const Problem& problem) {
    std::map<std::string, TensorInfo> table;
    auto add_problem_tensor = [&](const Tensor& t) {
        table[t.name] = TensorInfo{t.name, t.dim_names, t.shape, t.dtype, false};
    };
    auto is_io = [&](const Tensor* t) { return t && t->role != TensorRole::kIntermediate; };
    for (const auto& k : program.kernels) {
        for (const auto& a : k.args) {
            if (table.count(a.name)) continue;
            const Tensor* t = problem.find_tensor(a.name);
            if (is_io(t)) add_problem_tensor(*t);
        }
        for (const auto& op : k.pre) {  // a rowwise prologue's operands: read only
            if (!op.tensor || table.count(op.tensor->name)) continue;
            const Tensor* t = problem.find_tensor(op.tensor->name);
            if (is_io(t)) add_problem_tensor(*t);
        }
        DType value_dtype = DType::kF32;
        std::map<std::string, DType> named_dtype;  // `let t` keeps the dtype; `use t` restores it
        for (const auto& op : k.chain) {
            if (op.kind == dsl::ChainOpKind::kCast) value_dtype = op.cast_to;
            if (op.kind == dsl::ChainOpKind::kLet) named_dtype[op.name] = value_dtype;
            if (op.kind == dsl::ChainOpKind::kUse && named_dtype.count(op.name))
                value_dtype = named_dtype[op.name];
            if (!op.tensor || table.count(op.tensor->name)) continue;
            const Tensor* t = problem.find_tensor(op.tensor->name);
            if (is_io(t)) {
                add_problem_tensor(*t);
                continue;
            }
            bool defines = op.kind == dsl::ChainOpKind::kStore || op.kind == dsl::ChainOpKind::kReduce;
            if (!defines) continue;  // read before defined: reported below
            auto shape = shape_of(*op.tensor, problem);
            if (!shape) return shape.error();
            table[op.tensor->name] = TensorInfo{op.tensor->name, op.tensor->dims, *shape,
                                                op.kind == dsl::ChainOpKind::kStore
                                                    ? value_dtype : DType::kF32,
                                                true};
        }
    }
    for (const auto& k : program.kernels) {
        auto check = [&](const dsl::TensorRef& r) -> Status {
            if (table.count(r.name)) return Ok{};
            return make_error(k.name, "tensor \"" + r.name + "\" is neither a problem input or "
                                      "output nor stored by an earlier kernel");
        };
        for (const auto& a : k.args)
            if (auto st = check(a); !st) return st.error();
        for (const auto* ops : {&k.pre, &k.chain})
            for (const auto& op : *ops)
                if (op.tensor)
                    if (auto st = check(*op.tensor); !st) return st.error();
    }
    return table;
}

Expected<Lowered> lower_program(const dsl::Program& program, const Problem& problem,
                                const LowerOptions& options) {
    auto dump = [&](std::string_view pass, std::string_view text) {
        if (options.dump) options.dump(pass, text);
    };
    if (program.kernels.empty()) return make_error(program.name, "a program has no kernels");

    // 1. tensor table
    auto table = build_tensor_table(program, problem);
    if (!table) return table.error();
    dump("tensors", table_text(*table));
    LowerContext ctx;
    ctx.problem = &problem;
    ctx.program = &program;
    ctx.tensors = *table;
    ctx.sm_count = options.sm_count;
    ctx.arch = options.arch;
    LowerContext config;  // the configuration shape's context (config_problem)
    if (options.config_problem && options.config_problem->dims != problem.dims)
        if (auto full = build_tensor_table(program, *options.config_problem)) {
            config = ctx;
            config.problem = options.config_problem;
            config.tensors = std::move(*full);
            ctx.config = &config;
        }

    // 2. per-kernel lowering
    Lowered out;
    bool sm90 = false, sm80 = false, conv = false, fmha = false;
    std::string device, host;
    std::map<std::string, std::string> entry_symbols;  // CutlassEntry::key -> the first's symbol
    for (const auto& k : program.kernels) {
        Expected<KernelCode> code = make_error("", "");
        switch (k.kind) {
            case dsl::KernelKind::kGemm:
                code = lower_gemm(k, ctx);
                (k.gemm.schedule == dsl::Schedule::kMultistage ? sm80 : sm90) = true;
                break;
            case dsl::KernelKind::kRowwise: code = lower_rowwise(k, ctx); break;
            case dsl::KernelKind::kMap: code = lower_map(k, ctx); break;
            case dsl::KernelKind::kPool: code = lower_pool(k, ctx); break;
            case dsl::KernelKind::kAttention:
                code = lower_attention(k, ctx);
                fmha = fmha || k.attention.impl != dsl::AttentionImpl::kWmma;  // CUTLASS's
                break;
            case dsl::KernelKind::kCopy: code = lower_copy(k, ctx); break;
            case dsl::KernelKind::kRnn: code = lower_rnn(k, ctx); break;
            case dsl::KernelKind::kConv2d:
                code = lower_conv2d(k, ctx);
                conv = conv || k.gemm.schedule != dsl::Schedule::kDirect;  // direct: kforge's own
                break;
        }
        if (!code) return code.error();
        dump("kernel " + k.name, code->device_source + (code->entry ? code->entry->source : "") +
                                     code->host_source);
        device += code->device_source;
        if (code->entry) {  // one entry per distinct CUTLASS kernel type (kernel_lowering.h)
            auto [first, fresh] = entry_symbols.emplace(code->entry->key, code->entry->symbol);
            if (fresh)
                device += code->entry->source;
            else
                for (KernelLaunch& l : code->launches)
                    if (l.symbol == code->entry->symbol) l.symbol = first->second;
        }
        device += "\n";
        host += code->host_source.empty() ? "" : code->host_source + "\n";
        for (auto& l : code->launches) out.plan.kernels.push_back(std::move(l));
        for (auto& b : code->buffers) out.plan.buffers.push_back(std::move(b));
    }

    // 3. translation unit
    out.has_host_code = !host.empty();
    out.uses_cutlass = sm80 || sm90 || conv || fmha;
    std::string src = "// Generated by kforge from program " + program.name + " for problem \"" +
                      problem.name + "\" (" + options.arch + "). Do not edit.\n#include \"kernels/cstdint.cuh\"\n";
    if (out.has_host_code) src += "\n#include \"codegen/host_abi.h\"\n";
    if (out.uses_cutlass) src += cutlass_prelude(sm90, sm80);
    src += "\n" + device;
    if (out.has_host_code)
        src += "// Host param builders (codegen/host_abi.h), generated by kforge.\n" + host;
    out.cuda_source = std::move(src);
    dump("source", out.cuda_source);

    // 4. plan: intermediates first, then the kernels' workspaces
    std::vector<BufferDecl> buffers;
    for (const auto& [name, t] : ctx.tensors)
        if (t.intermediate) buffers.push_back(BufferDecl{name, t.dtype, t.shape, false, false});
    for (auto& b : out.plan.buffers) buffers.push_back(std::move(b));
    out.plan.buffers = std::move(buffers);
    out.plan.program_hash = options.program_hash;
    out.plan.source_file = options.source_file;
    if (out.has_host_code) out.plan.host_library = options.host_library;
    plan_memory(out.plan, problem);  // 5. the buffers' arena (codegen/memory_plan.h)
    dump("plan", to_json(out.plan).dump(2));
    return out;
}

}  // namespace kforge::codegen
