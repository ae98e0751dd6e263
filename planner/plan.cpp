// seed_program / seed_variants (planner/plan.h): the partition (partition.cpp) gives each kernel
// its candidate configurations; this file picks for each kernel the first candidate with no
// checker error on that kernel whose lowering does not fail on it (Selector: in rounds over the
// whole program). To tell whose error is whose, each kernel's source locations are set to
// line = its index + 1 while selecting; the returned program has no locations.
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

// Picks each kernel's configuration. A kernel's checker errors and its lowering depend on its
// own configuration only (every candidate of a kernel has the same head and chain), so one
// check of the whole program tells every kernel whether its current candidate checks: each
// round advances every kernel that has an error to its next candidate, and once none has, one
// lowering names the first kernel that does not lower (the lowering stops there). The rounds
// are bounded by the candidates of one kernel, not the number of kernels: a network of hundreds
// of kernels takes a few checks, where checking kernel by kernel took one check and one lowering
// of the whole program per kernel (quadratic). The result is the kernel-by-kernel rule's: each
// kernel gets its first candidate that checks and lowers; a kernel none of whose candidates
// does fails with its first candidate's error, the lowest such kernel first. A lowering error
// that names no kernel cannot be placed: then the kernel-by-kernel rule decides (nullopt).
class Selector {
public:
    Selector(const Problem& problem, const dsl::DeviceLimits& limits,
             const std::vector<detail::PlannedKernel>& plan)
        : problem_(problem), limits_(limits), plan_(plan), target_(builder::target_of(limits)) {
        lower_only_.check = false;
        lower_only_.no_build = true;
    }

    std::optional<Expected<std::vector<size_t>>> in_rounds() {
        const size_t n = plan_.size();
        std::vector<size_t> choice(n, 0);
        first_.assign(n, std::nullopt);
        size_t failed = n;  // the lowest kernel out of candidates
        for (;;) {
            const dsl::Program prog = assemble(problem_, plan_, choice);
            const dsl::CheckResult res = check(prog);
            std::vector<const Error*> err(n, nullptr);
            for (const Error& e : res.errors) {
                const int k = error_kernel(e, n);
                if (k >= 0 && !err[k]) err[k] = &e;
            }
            bool advanced = false;
            for (size_t k = 0; k < failed; ++k) {
                if (!err[k]) continue;
                if (!advance(k, *err[k], choice)) failed = k;
                else advanced = true;
            }
            if (advanced) continue;
            const auto low = lower(prog);
            const int at = low.ok() ? static_cast<int>(n) : error_kernel(low.errors.front(), n);
            if (at < 0) return std::nullopt;
            if (static_cast<size_t>(at) >= failed) {
                if (failed < n) return Expected<std::vector<size_t>>(failure(failed));
                confirmed = res.ok() && low.ok();  // the picks as they are: checked and lowered
                return choice;
            }
            if (!advance(static_cast<size_t>(at), low.errors.front(), choice))
                failed = static_cast<size_t>(at);
        }
    }

    // Kernel by kernel: each candidate of kernel k checked and lowered with the kernels before
    // it at their picks and the ones after at their first candidate.
    Expected<std::vector<size_t>> one_by_one() {
        const size_t n = plan_.size();
        std::vector<size_t> choice(n, 0);
        first_.assign(n, std::nullopt);
        for (size_t k = 0; k < n; ++k) {
            bool accepted = false;
            for (size_t c = 0; c < plan_[k].candidates.size() && !accepted; ++c) {
                choice[k] = c;
                const dsl::Program prog = assemble(problem_, plan_, choice);
                std::optional<Error> err = error_of(check(prog).errors, static_cast<int>(k), n);
                if (!err) {
                    const auto low = lower(prog);
                    if (!low.ok()) {
                        const int at = error_kernel(low.errors.front(), n);
                        if (at < 0 || at <= static_cast<int>(k)) err = low.errors.front();
                    }
                }
                if (!err) accepted = true;
                else if (!first_[k]) first_[k] = err;
            }
            if (!accepted) return failure(k);
        }
        return choice;
    }

    dsl::CheckResult check(const dsl::Program& prog) {
        ++checks;
        return dsl::check_program(prog, problem_, limits_, dsl::CheckOptions{kFile, {}});
    }
    builder::BuiltCandidate lower(const dsl::Program& prog) {
        ++lowerings;
        return builder::build(prog, problem_, target_, lower_only_);
    }

    int checks = 0;
    int lowerings = 0;
    bool confirmed = false;  // in_rounds' last round checked the picks with no error and lowered

private:
    // Kernel k's current candidate failed with `e`: its next one, false when none is left.
    bool advance(size_t k, const Error& e, std::vector<size_t>& choice) {
        if (!first_[k]) first_[k] = e;
        if (choice[k] + 1 >= plan_[k].candidates.size()) return false;
        ++choice[k];
        return true;
    }
    Error failure(size_t k) const {
        Error e = *first_[k];
        e.message = "kernel k" + std::to_string(k) + " (from " + plan_[k].origin +
                    "): no configuration checks and lowers: " + e.where + ": " + e.message;
        e.where = problem_.name;
        return e;
    }

    const Problem& problem_;
    const dsl::DeviceLimits& limits_;
    const std::vector<detail::PlannedKernel>& plan_;
    const Target target_;
    builder::BuildOptions lower_only_;
    std::vector<std::optional<Error>> first_;  // each kernel's first candidate's error
};

}  // namespace

Expected<Seeded> seed_program_counted(const Problem& problem, const dsl::DeviceLimits& limits,
                                      const SeedOptions& options) {
    auto plan = detail::plan_kernels(problem, limits, options);
    if (!plan) return plan.error();
    if (plan->empty()) return make_error(problem.name, "not expressible: the problem has no ops");
    // Each configuration is lowered (never compiled) by the one build path, for the target
    // the limits describe (builder/build.h); the seed checks with its own limits first.
    Selector select(problem, limits, *plan);
    auto picked = select.in_rounds();
    if (!picked) picked = select.one_by_one();
    if (!*picked) return picked->error();
    dsl::Program prog = assemble(problem, *plan, **picked);
    if (select.confirmed)
        return Seeded{dsl::strip_locations(std::move(prog)), SeedWork{select.checks, select.lowerings}};
    const dsl::CheckResult res = select.check(prog);
    if (!res.ok()) {
        Error e = res.errors.front();
        e.message = "the seeded program does not check: " + e.where + ": " + e.message;
        e.where = problem.name;
        return e;
    }
    const auto low = select.lower(prog);
    if (!low.ok()) {
        Error e = low.errors.front();
        e.message = "the seeded program does not lower: " + e.where + ": " + e.message;
        e.where = problem.name;
        return e;
    }
    return Seeded{dsl::strip_locations(std::move(prog)), SeedWork{select.checks, select.lowerings}};
}

Expected<dsl::Program> seed_program(const Problem& problem, const dsl::DeviceLimits& limits,
                                    const SeedOptions& options) {
    auto seeded = seed_program_counted(problem, limits, options);
    if (!seeded) return seeded.error();
    return std::move(seeded->program);
}

std::vector<dsl::Program> seed_variants(const Problem& problem, const dsl::DeviceLimits& limits) {
    std::vector<SeedOptions> plans(9);
    plans[1].gemm_tiles = SeedGemmTiles::kSquare;
    plans[2].gemm_tiles = SeedGemmTiles::kWide;
    plans[3].fuse = false;
    plans[4].intermediates_f32 = true;
    plans[5].rowwise_threads_scale = 2.0;
    plans[6].rowwise_one_read = true;
    plans[7].attention_wmma = true;
    plans[8].conv_direct = false;
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
