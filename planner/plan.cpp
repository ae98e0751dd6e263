// seed_program / seed_variants (planner/plan.h): the partition (partition.cpp) gives each kernel
// its candidate configurations; this file picks, kernel by kernel, the first candidate with no
// checker error on that kernel whose lowering does not fail on it. To tell whose error is whose,
// each kernel's source locations are set to line = its index + 1 while selecting; the returned
// program has no locations.
#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "builder/build.h"
#include "dsl/printer.h"
#include "planner/partition.h"

namespace kforge::planner {
namespace {

constexpr const char* kFile = "seed";

void set_locs(dsl::Kernel& kn, int line) {
    const dsl::SourceLoc loc{line, 1};
    kn.loc = loc;
    for (auto& a : kn.args) a.loc = loc;
    for (auto* ops : {&kn.pre, &kn.chain}) {
        for (auto& c : *ops) {
            c.loc = loc;
            if (c.tensor) c.tensor->loc = loc;
        }
    }
}

// The kernel an error is about: "seed:L:C" or "L:C" (line L = kernel L-1), "kernel kN",
// "kN" or "kN (line ..)"; -1 when it names none.
int error_kernel(const Error& e, size_t kernels) {
    std::string w = e.where;
    if (w.rfind(std::string(kFile) + ":", 0) == 0) w = w.substr(std::string(kFile).size() + 1);
    if (w.rfind("kernel ", 0) == 0) w = w.substr(7);
    if (!w.empty() && w[0] == 'k') {
        size_t i = 1;
        while (i < w.size() && std::isdigit(static_cast<unsigned char>(w[i]))) ++i;
        if (i > 1 && (i == w.size() || w[i] == ' ')) {
            const int k = std::stoi(w.substr(1, i - 1));
            return k < static_cast<int>(kernels) ? k : -1;
        }
        return -1;
    }
    size_t i = 0;
    while (i < w.size() && std::isdigit(static_cast<unsigned char>(w[i]))) ++i;
    if (i > 0 && i < w.size() && w[i] == ':') {
        const int line = std::stoi(w.substr(0, i));
        return line >= 1 && line <= static_cast<int>(kernels) ? line - 1 : -1;
    }
    return -1;
}

std::string program_name(const Problem& problem) {
    std::string s = "seed_";
    for (char c : problem.name)
        s += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    return s;
}

dsl::Program assemble(const Problem& problem, const std::vector<detail::PlannedKernel>& plan,
                      const std::vector<size_t>& choice) {
    dsl::Program prog;
    prog.name = program_name(problem);
    prog.problem = problem.name;
    for (size_t k = 0; k < plan.size(); ++k) {
        prog.kernels.push_back(plan[k].candidates[choice[k]]);
        set_locs(prog.kernels.back(), static_cast<int>(k) + 1);
    }
    return prog;
}

// The first error about kernel k (or about no kernel at all when k < 0), if any.
std::optional<Error> error_of(const std::vector<Error>& errors, int k, size_t kernels) {
    for (const Error& e : errors)
        if (error_kernel(e, kernels) == k) return e;
    return std::nullopt;
}

}  // namespace

Expected<dsl::Program> seed_program(const Problem& problem, const dsl::DeviceLimits& limits,
                                    const SeedOptions& options) {
    auto plan = detail::plan_kernels(problem, limits, options);
    if (!plan) return plan.error();
    const size_t n = plan->size();
    if (n == 0) return make_error(problem.name, "not expressible: the problem has no ops");
    // Each configuration is lowered (never compiled) by the one build path, for the target
    // the limits describe (builder/build.h); the seed checks with its own limits first.
    const Target target = builder::target_of(limits);
    builder::BuildOptions lower_only;
    lower_only.check = false;
    lower_only.no_build = true;
    const dsl::CheckOptions check{kFile, {}};
    std::vector<size_t> choice(n, 0);
    for (size_t k = 0; k < n; ++k) {
        std::optional<Error> first;
        bool accepted = false;
        for (size_t c = 0; c < (*plan)[k].candidates.size() && !accepted; ++c) {
            choice[k] = c;
            const dsl::Program prog = assemble(problem, *plan, choice);
            const dsl::CheckResult res = dsl::check_program(prog, problem, limits, check);
            std::optional<Error> err = error_of(res.errors, static_cast<int>(k), n);
            if (!err) {
                const auto low = builder::build(prog, problem, target, lower_only);
                if (!low.ok()) {
                    const int at = error_kernel(low.errors.front(), n);
                    if (at < 0 || at <= static_cast<int>(k)) err = low.errors.front();
                }
            }
            if (!err) accepted = true;
            else if (!first) first = err;
        }
        if (!accepted) {
            Error e = *first;
            e.message = "kernel k" + std::to_string(k) + " (from " + (*plan)[k].origin +
                        "): no configuration checks and lowers: " + e.where + ": " + e.message;
            e.where = problem.name;
            return e;
        }
    }
    dsl::Program prog = assemble(problem, *plan, choice);
    const dsl::CheckResult res = dsl::check_program(prog, problem, limits, check);
    if (!res.ok()) {
        Error e = res.errors.front();
        e.message = "the seeded program does not check: " + e.where + ": " + e.message;
        e.where = problem.name;
        return e;
    }
    const auto low = builder::build(prog, problem, target, lower_only);
    if (!low.ok()) {
        Error e = low.errors.front();
        e.message = "the seeded program does not lower: " + e.where + ": " + e.message;
        e.where = problem.name;
        return e;
    }
    return dsl::strip_locations(std::move(prog));
}

std::vector<dsl::Program> seed_variants(const Problem& problem, const dsl::DeviceLimits& limits) {
    std::vector<SeedOptions> plans(8);
    plans[1].gemm_tiles = SeedGemmTiles::kSquare;
    plans[2].gemm_tiles = SeedGemmTiles::kWide;
    plans[3].fuse = false;
    plans[4].intermediates_f32 = true;
    plans[5].rowwise_threads_scale = 2.0;
    plans[6].rowwise_one_read = true;
    plans[7].attention_wmma = true;
    std::vector<dsl::Program> out;
    std::set<std::string> seen;
    for (size_t i = 0; i < plans.size(); ++i) {
        auto prog = seed_program(problem, limits, plans[i]);
        if (!prog) {
            if (i == 0) return {};
            continue;
        }
        if (seen.insert(dsl::print_canonical(*prog)).second) out.push_back(std::move(*prog));
    }
    return out;
}

std::string describe_fusion_plan(const dsl::Program& program) {
    std::string out;
    for (const dsl::Kernel& k : program.kernels) {
        out += (out.empty() ? "" : "; ") + k.name + " " + std::string(to_string(k.kind));
        if (k.kind == dsl::KernelKind::kRowwise) out += " " + std::string(to_string(k.row_op));
        if (!k.pre.empty()) {  // the element-wise prologue folded into a row reduction
            std::string pre;
            for (const dsl::ChainOp& c : k.pre) {
                std::string op(to_string(c.kind));
                if (c.tensor) op += " " + c.tensor->name;
                else if (!c.name.empty()) op += " " + c.name;
                pre += (pre.empty() ? "" : ", ") + op;
            }
            out += " pre {" + pre + "}";
        }
        std::string fused, stored;
        for (const dsl::ChainOp& c : k.chain) {
            if (c.kind == dsl::ChainOpKind::kStore) {
                stored += (stored.empty() ? "" : ", ") + (c.tensor ? c.tensor->name : "?");
                continue;
            }
            std::string op(to_string(c.kind));
            if (c.tensor && c.tensor->name.size()) op += " " + c.tensor->name;
            else if (!c.name.empty()) op += " " + c.name;  // let/use t, or a named operand
            if (c.kind == dsl::ChainOpKind::kCast) op += " " + std::string(to_string(c.cast_to));
            fused += (fused.empty() ? "" : ", ") + op;
        }
        if (!fused.empty()) out += " {" + fused + "}";
        out += " -> " + (stored.empty() ? std::string("?") : stored);
    }
    return out;
}

}  // namespace kforge::planner
