// Semantics: resolve every tensor a program names, build the program's canonical expressions
// (check_expr.h) kernel by kernel, and compare each problem output with what the program stores.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "dsl/check_internal.h"
#include "dsl/check_sem_kernel.h"
#include "problem/copy_op.h"
#include "problem/shape_ops.h"

namespace kforge::dsl {

std::string ref_text(const TensorRef& ref) { return ref.name + dims_text(ref.dims); }

std::string first_store(const Kernel& kernel) {
    for (const ChainOp& c : kernel.chain)
        if (c.kind == ChainOpKind::kStore && c.tensor) return c.tensor->name;
    return "";
}

int64_t Sem::extent(const std::string& dim) const {
    auto it = problem.dims.find(dim);
    if (it != problem.dims.end()) return it->second;
    return std::all_of(dim.begin(), dim.end(), ::isdigit) && !dim.empty() ? std::stoll(dim) : 0;
}

int64_t Sem::numel(const std::vector<std::string>& dims) const {
    int64_t n = 1;
    for (const auto& d : dims) n *= extent(d);
    return n;
}

ResolvedTensor& Sem::entry(const std::string& name) {
    auto& tensors = reporter.result().tensors;
    for (auto& t : tensors)
        if (t.name == name) return t;
    tensors.emplace_back();
    tensors.back().name = name;
    return tensors.back();
}

bool Sem::dims_known(const TensorRef& ref) {
    for (const auto& d : ref.dims) {
        if (extent(d) > 0) continue;
        std::string known;
        for (const auto& [name, value] : problem.dims) known += (known.empty() ? "" : ", ") + name;
        reporter.error(ref.loc, "unknown dim " + d + " in " + ref_text(ref) +
                                    "; the problem's dims are " + known + " (or write an integer)");
        return false;
    }
    return true;
}

bool Sem::problem_dims_match(const TensorRef& ref, const Tensor& t) {
    std::vector<std::string> want;
    for (size_t i = 0; i < t.shape.size(); ++i) want.push_back(dim_text(t, i));
    if (ref.dims == want) return true;
    reporter.error(ref.loc, ref.name + " is " + dims_text(want) + " in the problem; the program writes " +
                                ref_text(ref) + " (write " + t.name + dims_text(want) + ")");
    return false;
}

static std::vector<std::string> dims_of_tensor(const Tensor& t) {
    std::vector<std::string> dims;
    for (size_t i = 0; i < t.shape.size(); ++i) dims.push_back(dim_text(t, i));
    return dims;
}

const Tensor* Sem::renamed_read(const TensorRef& ref, const Tensor& t) const {
    if (ref.dims == dims_of_tensor(t)) return nullptr;
    return renamed_view(problem, t.name, ref.dims);
}

int Sem::view_node(int node, const std::string& root, const Tensor& view, const Origin& origin) {
    for (const Op* op : views_between(problem, root, view.name))
        if (!is_rank_view(problem, *op)) node = copy_node(graph, {node}, *op, problem, origin);
    return node;
}

std::optional<int> Sem::read(const TensorRef& ref, int kernel) {
    if (!dims_known(ref)) return std::nullopt;
    const Tensor* t = problem.find_tensor(ref.name);
    const bool is_input = t && (t->role == TensorRole::kInput || t->role == TensorRole::kParam);
    if (is_input) {
        const Tensor* view = renamed_read(ref, *t);
        if (view == nullptr && !problem_dims_match(ref, *t)) return std::nullopt;
        entry(ref.name).read_by.push_back(kernel);
        Origin o{Reporter::loc_text(ref.loc), ref.name, ref.name};
        max_bytes = std::max(max_bytes, dtype_bytes(t->dtype));
        if (view != nullptr) {
            const int root = graph.leaf(ref.name, named_dims(dims_of_tensor(*t)), o);
            return view_node(root, ref.name, *view, o);
        }
        return graph.leaf(ref.name, named_dims(ref.dims), o);
    }
    auto it = bound.find(ref.name);
    if (it != bound.end() && it->second.kernel < kernel) {
        // a pure rename of the stored tensor (problem/copy_op.h rename_dims): its buffer read
        // under the view's dim names, the value the problem's reshapes make of it
        const Tensor* view = t != nullptr && ref.dims != it->second.dims &&
                                     it->second.dims == dims_of_tensor(*t)
                                 ? renamed_read(ref, *t)
                                 : nullptr;
        if (view != nullptr) {
            it->second.read = true;
            entry(ref.name).read_by.push_back(kernel);
            if (it->second.node < 0) return std::nullopt;
            max_bytes = std::max(max_bytes, dtype_bytes(it->second.dtype));
            return view_node(it->second.node, ref.name, *view,
                             Origin{Reporter::loc_text(ref.loc), ref.name, ref.name});
        }
        if (ref.dims != it->second.dims) {
            reporter.error(ref.loc, ref.name + " was stored as " + ref.name +
                                        dims_text(it->second.dims) + " at " +
                                        Reporter::loc_text(it->second.loc) + "; read it with the same dims");
            return std::nullopt;
        }
        it->second.read = true;
        entry(ref.name).read_by.push_back(kernel);
        if (it->second.node < 0) return std::nullopt;  // its kernel failed; reported there
        max_bytes = std::max(max_bytes, dtype_bytes(it->second.dtype));
        return it->second.node;
    }
    auto st = stores.find(ref.name);
    if (st != stores.end()) {
        const auto& [k, loc] = st->second.front();
        reporter.error(ref.loc, ref.name + " is read by kernel " + program.kernels[kernel].name +
                                    " before it is stored: kernel " + program.kernels[k].name +
                                    " stores it at " + Reporter::loc_text(loc) +
                                    "; an intermediate must be stored by an earlier kernel");
        return std::nullopt;
    }
    std::string inputs;
    for (const Tensor* in : problem.graph_inputs()) inputs += (inputs.empty() ? "" : ", ") + in->name;
    reporter.error(ref.loc, "unknown tensor " + ref.name + ": not an input of the problem (" + inputs +
                                ") and no earlier kernel stores it");
    return std::nullopt;
}

void Sem::store(const TensorRef& ref, int node, DType dtype, int kernel) {
    if (!dims_known(ref)) return;
    const Tensor* t = problem.find_tensor(ref.name);
    if (t && (t->role == TensorRole::kInput || t->role == TensorRole::kParam)) {
        reporter.error(ref.loc, "cannot store " + ref.name + ": it is an input of the problem");
        return;
    }
    const bool is_output = t && t->role == TensorRole::kOutput;
    if (is_output && !problem_dims_match(ref, *t)) return;
    // a dim name twice ([B,T,T] of q @ k^T) may be one dim of the value's expression (a
    // contraction's); a value that keeps both (a reshape to [..,14,14,16,16]) stores as it is
    const std::vector<std::string> distinct = distinct_dims(named_dims(ref.dims));
    if (node >= 0 && named_dims(ref.dims) != graph.at(node).dims &&
        distinct != graph.at(node).dims) {
        reporter.error(ref.loc, "store " + ref_text(ref) + " writes a value with dims " +
                                    dims_text(graph.at(node).dims));
        return;
    }
    auto it = bound.find(ref.name);
    if (it != bound.end()) {
        reporter.error(ref.loc, ref.name + " is stored twice (first at " +
                                    Reporter::loc_text(it->second.loc) + "); " +
                                    (is_output ? "every problem output is stored exactly once"
                                               : "an intermediate is stored once"));
        return;
    }
    if (is_output && dtype != t->dtype) {
        std::string want(to_string(t->dtype));
        reporter.error(ref.loc, "store " + ref_text(ref) + " writes " + std::string(to_string(dtype)) +
                                    " but the problem's output " + ref.name + " is " + want +
                                    "; add `cast " + want + "` before the store");
    }
    max_out_bytes = std::max(max_out_bytes, dtype_bytes(dtype));
    bound[ref.name] = Bound{node, dtype, ref.dims, kernel, ref.loc, false};
    ResolvedTensor& e = entry(ref.name);
    e.dim_names = ref.dims;
    e.shape.clear();
    for (const auto& d : ref.dims) e.shape.push_back(extent(d));
    e.dtype = dtype;
    e.role = is_output ? TensorRole::kOutput : TensorRole::kIntermediate;
    e.stored_by = kernel;
}

bool below_policy(PrecisionPolicy policy, DType dtype) {
    if (dtype == DType::kBF16) return policy != PrecisionPolicy::kBf16;
    if (dtype == DType::kF16) return policy != PrecisionPolicy::kFp16;
    return false;
}

void Sem::narrowing_at_store(const TensorRef& ref, int node,
                             const std::optional<Narrowed>& narrowed) {
    if (!narrowed) return;
    const Tensor* t = problem.find_tensor(ref.name);
    // Rounded once, right before a store in a dtype the problem declares for this value (an
    // f16 / bf16 output, whose value is compared below; or a tensor of the problem's graph that
    // computes the same): the problem's own rounding.
    if (narrowed->pending) {
        if (t && t->role == TensorRole::kOutput && t->dtype == narrowed->dtype) return;
        if (node >= 0 && problem_values && graph.stopped().empty()) {
            if (declared_values.empty()) {
                for (const auto& [name, id] : problem_values->value)
                    if (const Tensor* declared = problem.find_tensor(name))
                        declared_values.emplace(problem_values->graph.at(id).key, declared->dtype);
            }
            if (declared_values.count({graph.at(node).key, narrowed->dtype})) return;
        }
    }
    if (!t || t->role != TensorRole::kOutput) {
        narrowed_tensors[ref.name] = Narrowed{narrowed->cast, narrowed->dtype, false};
        return;
    }
    if (narrowed->pending && t->dtype != narrowed->dtype) return;  // the store's dtype error
    const std::pair<int, int> at{narrowed->cast.line, narrowed->cast.col};
    if (std::find(narrowing_reported.begin(), narrowing_reported.end(), at) ==
        narrowing_reported.end()) {
        narrowing_reported.push_back(at);
        const std::string d(to_string(narrowed->dtype));
        const std::string policy(to_string(problem.policy));
        const char* computes = problem.policy == PrecisionPolicy::kBf16   ? "bf16 or f32"
                               : problem.policy == PrecisionPolicy::kFp16 ? "f16 or f32"
                                                                          : "f32";
        reporter.error(narrowed->cast,
                       "cast " + d + " rounds the value below precision policy " + policy +
                           " (intermediates in " + computes + "), and the rounded value reaches "
                           "the output " + ref.name + " (stored at " + Reporter::loc_text(ref.loc) +
                           "); cast to " + d + " only right before storing a value the problem "
                           "declares " + d + " (an output, or a tensor of its graph), or keep the "
                           "value in f32");
    }
}

bool Sem::stopped(SourceLoc loc) {
    if (graph.stopped().empty()) return false;
    if (!out_of_steps) {
        reporter.error(loc, "the program is too large to check from here: " + graph.stopped() +
                                " (values reused by `let` and long sums or products of distinct "
                                "terms cost the most)");
    }
    out_of_steps = true;
    return true;
}

std::vector<KernelFacts> check_semantics(const Program& program, const Problem& problem,
                                         Reporter& reporter, StepBudget& budget) {
    if (program.problem != problem.name) {
        reporter.error(program.loc, "program " + program.name + " is for problem \"" +
                                        program.problem + "\", not \"" + problem.name + "\"");
    }
    // The problem's expressions first: a problem too large to check is not the program's fault.
    ProblemExprs pe = problem_exprs(problem, &budget);
    if (!pe.graph.stopped().empty()) {
        reporter.error(program.loc, "problem " + problem.name + " is too large to check a program "
                                        "against at " + pe.graph.stopped_where() + ": " +
                                        pe.graph.stopped());
        return std::vector<KernelFacts>(program.kernels.size());
    }
    Sem sem{program, problem, reporter, ExprGraph(&budget), {}, {}, 0, 0, false, &pe, {}, {}, {}};
    for (const Tensor& t : problem.tensors) {
        if (t.role == TensorRole::kIntermediate) continue;
        ResolvedTensor& e = sem.entry(t.name);
        for (size_t i = 0; i < t.shape.size(); ++i) e.dim_names.push_back(dim_text(t, i));
        e.shape = t.shape;
        e.dtype = t.dtype;
        e.role = t.role;
    }
    for (size_t k = 0; k < program.kernels.size(); ++k) {
        for (const ChainOp& op : program.kernels[k].chain) {
            if ((op.kind == ChainOpKind::kStore || op.kind == ChainOpKind::kReduce) && op.tensor)
                sem.stores[op.tensor->name].emplace_back(static_cast<int>(k), op.tensor->loc);
        }
    }
    std::vector<KernelFacts> facts;
    for (size_t k = 0; k < program.kernels.size(); ++k) {
        if (sem.stopped(program.kernels[k].loc)) facts.emplace_back();
        else facts.push_back(check_kernel_semantics(sem, static_cast<int>(k)));
    }
    if (sem.stopped(program.loc)) return facts;  // nothing it stores can be compared

    for (const std::string& out : problem.outputs) {
        const Op* producer = problem.producer(out);
        auto it = sem.bound.find(out);
        if (it == sem.bound.end()) {
            const Tensor* t = problem.find_tensor(out);
            std::vector<std::string> dims;
            for (size_t i = 0; t && i < t->shape.size(); ++i) dims.push_back(dim_text(*t, i));
            reporter.error(program.loc, "the problem's output " + out +
                                            (producer ? " (" + op_display(*producer, problem) +
                                                            " at " + producer->json_path + ")"
                                                      : std::string()) +
                                            " is never stored; add `store " + out +
                                            dims_text(dims) + "` to the kernel that computes it");
            continue;
        }
        if (pe.value.count(out) == 0 || it->second.node < 0) continue;
        if (auto d = diff(pe.graph, pe.value[out], sem.graph, it->second.node, out)) {
            reporter.error(it->second.loc, out + " is not what the problem computes: " + *d);
        }
    }
    for (const auto& [name, b] : sem.bound) {
        const Tensor* t = problem.find_tensor(name);
        if (!b.read && !(t && t->role == TensorRole::kOutput)) {
            reporter.warn(b.loc, "intermediate " + name + " is stored by kernel " +
                                     program.kernels[b.kernel].name + " but never read");
        }
    }
    return facts;
}

}  // namespace kforge::dsl
