#include "search/kernel_groups.h"

#include <algorithm>
#include <map>

#include "dsl/printer.h"
#include "problem/spec.h"
#include "search/knob_space.h"

namespace kforge::search {
namespace {

// The op class a kernel kind computes one op of (nullopt: map and rowwise, whose chain and row
// op say everything).
std::optional<OpClass> op_class_of(dsl::KernelKind kind) {
    switch (kind) {
        case dsl::KernelKind::kGemm:
        case dsl::KernelKind::kAttention: return OpClass::kMatrix;
        case dsl::KernelKind::kConv2d: return OpClass::kConv;
        case dsl::KernelKind::kPool: return OpClass::kPool;
        case dsl::KernelKind::kCopy: return OpClass::kShape;
        case dsl::KernelKind::kRnn: return OpClass::kRecurrent;
        default: return std::nullopt;
    }
}

// `t` with its name replaced by its dtype and its dims by their sizes.
void anonymize(dsl::TensorRef& t, const Problem& problem) {
    const Tensor* pt = problem.find_tensor(t.name);
    t.name = pt ? "t_" + std::string(to_string(pt->dtype)) : "t_unknown";
    for (std::string& d : t.dims)
        if (auto it = problem.dims.find(d); it != problem.dims.end()) d = std::to_string(it->second);
    t.loc = {};
}

// The semantic fields that live in the knob structs (not tuning knobs: is_tuning_knob).
void keep_semantics(const dsl::Kernel& from, dsl::Kernel& to) {
    to.rowwise.reverse = from.rowwise.reverse;
    to.rowwise.exclusive = from.rowwise.exclusive;
    to.attention.scale = from.attention.scale;
}

}  // namespace

std::vector<std::string> op_signatures(const Problem& problem) {
    std::vector<std::string> out;
    auto j = problem_to_json(problem);
    if (!j.contains("graph") || !j["graph"].is_array()) return out;
    for (size_t i = 0; i < j["graph"].size(); ++i) {
        auto op = j["graph"][i];
        op.erase("inputs");
        op.erase("output");
        // bounds and groups written as dim expressions ("2*E") by their values: two ops alike
        // at this binding are one signature, as when the spec writes numbers
        const OpAttrs& a = problem.ops[i].attrs;
        if (op.contains("start") && op["start"].is_string()) op["start"] = a.slice_start;
        if (op.contains("end") && op["end"].is_string() && a.slice_end) op["end"] = *a.slice_end;
        if (op.contains("groups") && op["groups"].is_string()) op["groups"] = a.groups;
        out.push_back(op.dump());
    }
    return out;
}

std::string kernel_identity(const dsl::Kernel& k, const Problem& problem,
                            const std::vector<std::string>& op_sigs) {
    dsl::Kernel c = k;
    c.name = "k";
    c.gemm = c.kind == dsl::KernelKind::kConv2d ? dsl::conv2d_default_config() : dsl::GemmConfig{};
    c.rowwise = {};
    c.map = {};
    c.pool = {};
    c.attention = {};
    c.copy = {};
    c.rnn = {};
    keep_semantics(k, c);
    for (dsl::TensorRef& t : c.args) anonymize(t, problem);
    for (std::vector<dsl::ChainOp>* chain : {&c.pre, &c.chain})
        for (dsl::ChainOp& op : *chain)
            if (op.tensor) anonymize(*op.tensor, problem);
    std::string key = dsl::print_canonical(dsl::strip_locations(dsl::Program{"g", "", {c}, {}}));
    // the problem op the kernel computes: the first of its class that reads the kernel's first
    // (and, for two-operand kinds, second) argument
    if (auto cls = op_class_of(k.kind); cls && !k.args.empty()) {
        for (size_t i = 0; i < problem.ops.size() && i < op_sigs.size(); ++i) {
            const Op& op = problem.ops[i];
            if (op_class(op.kind) != *cls) continue;
            auto reads = [&](const std::string& name) {
                return std::find(op.inputs.begin(), op.inputs.end(), name) != op.inputs.end();
            };
            if (!reads(k.args[0].name)) continue;
            if (k.args.size() > 1 && *cls != OpClass::kShape && *cls != OpClass::kRecurrent &&
                !reads(k.args[1].name))
                continue;
            key += "\nop " + op_sigs[i];
            break;
        }
    }
    return key;
}

std::vector<KernelGroup> kernel_groups(const dsl::Program& p, const Problem& problem,
                                       const std::vector<std::string>& op_sigs) {
    std::vector<KernelGroup> groups;
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < p.kernels.size(); ++i) {
        std::string key = kernel_identity(p.kernels[i], problem, op_sigs);
        auto [it, fresh] = index.emplace(key, groups.size());
        if (fresh) groups.push_back(KernelGroup{std::move(key), {}, ""});
        groups[it->second].kernels.push_back(i);
    }
    for (KernelGroup& g : groups) {
        g.label = p.kernels[g.kernels[0]].name;
        if (g.kernels.size() < 2) continue;
        g.label += " x" + std::to_string(g.kernels.size()) + " (";
        for (size_t j = 0; j < g.kernels.size(); ++j)
            g.label += (j ? "," : "") + p.kernels[g.kernels[j]].name;
        g.label += ")";
    }
    return groups;
}

void copy_tuning_knobs(const dsl::Kernel& from, dsl::Kernel& to) {
    dsl::Kernel keep = to;
    to.gemm = from.gemm;
    to.rowwise = from.rowwise;
    to.map = from.map;
    to.pool = from.pool;
    to.attention = from.attention;
    to.copy = from.copy;
    to.rnn = from.rnn;
    keep_semantics(keep, to);
}

bool same_tuning_knobs(const dsl::Kernel& a, const dsl::Kernel& b) {
    return a.gemm == b.gemm && a.rowwise == b.rowwise && a.map == b.map && a.pool == b.pool &&
           a.attention == b.attention && a.copy == b.copy && a.rnn == b.rnn;
}

std::optional<std::vector<size_t>> changed_groups(const dsl::Program& from, const dsl::Program& to,
                                                  const std::vector<KernelGroup>& groups) {
    if (!same_structure(from, to)) return std::nullopt;
    std::vector<size_t> out;
    for (size_t g = 0; g < groups.size(); ++g)
        for (size_t k : groups[g].kernels)
            if (k < to.kernels.size() && !same_tuning_knobs(from.kernels[k], to.kernels[k])) {
                out.push_back(g);
                break;
            }
    return out;
}

bool unify_groups(dsl::Program& p, const dsl::Program* parent, const std::vector<KernelGroup>& groups) {
    const bool related = parent && same_structure(*parent, p);
    bool changed = false;
    for (const KernelGroup& g : groups) {
        if (g.kernels.size() < 2 || g.kernels.back() >= p.kernels.size()) continue;
        size_t source = g.kernels[0];
        if (related)
            for (size_t k : g.kernels)
                if (!same_tuning_knobs(parent->kernels[k], p.kernels[k])) {
                    source = k;
                    break;
                }
        for (size_t k : g.kernels) {
            if (k == source || same_tuning_knobs(p.kernels[source], p.kernels[k])) continue;
            copy_tuning_knobs(p.kernels[source], p.kernels[k]);
            changed = true;
        }
    }
    return changed;
}

}  // namespace kforge::search
