// Shape selection for the correctness gates and the list of those gates (eval/evaluate.h:
// small_shape, check_shape, correctness_gates).
#include <algorithm>
#include <cctype>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "builder/build.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "eval/evaluate.h"
#include "problem/interpret.h"
#include "problem/spec.h"
#include "problem/work.h"
#include "sol/device.h"

namespace kforge::eval {
namespace {

int64_t total_elements(const Problem& p) {
    int64_t n = 0;
    for (const Tensor& t : p.tensors) n += t.numel();
    return n;
}

bool reference_feasible(const Problem& p, double max_flops) {
    auto w = count_work(p);
    return w.ok() && w->flops() <= max_flops && total_elements(p) <= kCheckShapeMaxElements;
}

int64_t shrink_dim(int64_t value, int64_t cap) {
    if (value <= cap) return value;
    int64_t unit = value & -value;  // largest power of two dividing value
    unit = std::min(unit, cap);
    return std::max(unit, cap / unit * unit);
}

using Dims = std::map<std::string, int64_t>;

// Whether the program checks at a binding of the problem's non-derived dims, remembered per
// binding: the picker tries the same binding at several caps and again without halving, and each
// try re-parses the spec (rebind_dims) and checks the program on it (dsl::check_program), which
// is most of a second on a 1000-op network. `problem_level` answers from the re-parse alone
// (shape inference: a pool's window on a shrunk image, a reshape to a literal extent), a tenth of
// the cost, for the search of which dims to restore.
class Checker {
public:
    Checker(const Problem& problem, const dsl::Program& program, const dsl::DeviceLimits& limits)
        : problem_(problem), program_(program), limits_(limits) {}

    // nullopt: the spec re-binds at `dims`, else why not.
    const std::optional<Error>& problem_level(const Dims& dims) {
        auto it = rebound_.find(dims);
        if (it != rebound_.end()) return it->second;
        auto p = rebind_dims(problem_, dims);
        std::optional<Error> why;
        if (!p) why = p.error();
        return rebound_.emplace(dims, std::move(why)).first->second;
    }
    // nullopt: the spec re-binds and the program checks at `dims`, else the first error.
    const std::optional<Error>& full(const Dims& dims) {
        auto it = checked_.find(dims);
        if (it != checked_.end()) return it->second;
        std::optional<Error> why;
        auto known = rebound_.find(dims);
        if (known != rebound_.end() && known->second) {
            why = known->second;
        } else {
            auto p = rebind_dims(problem_, dims);
            if (!p) {
                why = p.error();
            } else {
                auto checked = dsl::check_program(program_, *p, limits_);
                if (!checked.ok()) why = checked.errors.front();
                else last_ok_.emplace(dims, *p);
            }
            if (known == rebound_.end())
                rebound_.emplace(dims, p ? std::nullopt : std::optional<Error>(p.error()));
        }
        return checked_.emplace(dims, std::move(why)).first->second;
    }
    bool ok(const Dims& dims) { return !full(dims).has_value(); }
    Expected<Problem> problem_at(const Dims& dims) {
        if (const auto& why = full(dims)) return *why;
        if (last_ok_ && last_ok_->first == dims) return last_ok_->second;
        return rebind_dims(problem_, dims);
    }
    const Problem& problem() const { return problem_; }

private:
    const Problem& problem_;
    const dsl::Program& program_;
    const dsl::DeviceLimits& limits_;
    std::map<Dims, std::optional<Error>> rebound_, checked_;
    std::optional<std::pair<Dims, Problem>> last_ok_;  // the last binding that checked
};

// Which of the shrunk dims `shrunk` (name order) to restore to full size so that the binding
// `dims` checks. Restored one at a time in name order until it checks, the picker would restore
// the shortest prefix that checks and then shrink back every dim of it that need not be full -
// one full check each, most of a second on a 1000-op network. Here the prefix is found by
// bisection and only its last dim is restored; the dims before it are searched again the same
// way while the binding still fails. While the spec's re-parse is what fails (a pool's window on
// a shrunk image), the re-parse alone decides (a tenth of the cost); then the full check.
// Returns the dims restored (name order) with `dims` updated, or the first error when not even
// every shrunk dim restored checks.
Expected<std::vector<std::string>> restore_dims(Checker& checker, Dims& dims,
                                                const std::vector<std::string>& shrunk) {
    const Problem& problem = checker.problem();
    const Error first = *checker.full(dims);
    std::set<std::string> restored;
    std::vector<std::string> window;  // where the next dim to restore is searched
    bool last_cheap = false;
    while (checker.full(dims)) {
        std::vector<std::string> remaining;
        for (const std::string& d : shrunk)
            if (restored.count(d) == 0) remaining.push_back(d);
        const bool cheap = checker.problem_level(dims).has_value();
        if (cheap != last_cheap || restored.empty()) window = remaining;
        last_cheap = cheap;
        auto fails = [&](size_t k) {  // with window[0, k) restored too
            Dims d = dims;
            for (size_t i = 0; i < k; ++i) d[window[i]] = problem.dims.at(window[i]);
            return cheap ? checker.problem_level(d).has_value() : !checker.ok(d);
        };
        if (window.empty() || fails(window.size())) {
            // the window came from another prefix (restoring is not always monotone): all
            if (window.size() == remaining.size()) return first;
            window = remaining;
            if (window.empty() || fails(window.size())) return first;
        }
        size_t lo = 0, hi = window.size();  // fails(lo), !fails(hi)
        while (hi - lo > 1) {
            const size_t mid = lo + (hi - lo) / 2;
            (fails(mid) ? lo : hi) = mid;
        }
        dims[window[hi - 1]] = problem.dims.at(window[hi - 1]);
        restored.insert(window[hi - 1]);
        window.resize(hi - 1);
    }
    return std::vector<std::string>(restored.begin(), restored.end());
}

// The values a dim tied at full size may take instead, best first: its shrink to `cap`, then
// `full` halved while it stays whole (768: 384, 192, ..., 3, so a literal that divides it - a
// head count of 12 - still divides them), those of at most `cap` from the largest down, then
// those above `cap` from the smallest up.
std::vector<int64_t> tied_candidates(int64_t full, int64_t cap) {
    std::vector<int64_t> halves;
    for (int64_t v = full; v % 2 == 0; v /= 2) halves.push_back(v / 2);
    std::vector<int64_t> out{shrink_dim(full, cap)};
    for (int64_t v : halves)
        if (v <= cap && v != out.front()) out.push_back(v);
    for (auto it = halves.rbegin(); it != halves.rend(); ++it)
        if (*it > cap) out.push_back(*it);
    return out;
}

// The problem with every dim shrunk to `cap`, if the program checks on it. A problem whose
// literal bounds tie a dim to its full size (a slice [768:-768] of a dim named D2304, a reshape
// to [N, 25088] of [N, C, H, W], a head count of 12 in a reshape of n_embd) cannot shrink every
// dim: the dims in `keep` start at full size, and when the shrink still fails, dims are restored
// to full size until it checks (restore_dims: as a restore one at a time in name order would,
// without restoring the dims it would only shrink back); then each restored or kept dim takes
// the first of its tied_candidates with which the problem still checks (a pooled image needs 32,
// not 224) - alone, else together with the other tied dims of its full value (a sequence T and
// its T_1) -, else stays full (without `halve`, every tied dim stays full). `keep` carries the
// dims not at their shrunk value to the next cap.
Expected<Problem> shrink(Checker& checker, int64_t cap, std::set<std::string>& keep,
                         bool halve = true) {
    const Problem& problem = checker.problem();
    Dims dims;
    std::vector<std::string> shrunk;  // dims below their full size, in name order
    std::vector<std::string> tied;    // dims at full size that a shrink would change
    for (const auto& [name, value] : problem.dims) {
        if (problem.derived_dims.count(name) != 0) continue;
        // derived dims (a conv2d's output sizes, "3*n_embd") follow the dims they come from
        dims[name] = keep.count(name) ? value : shrink_dim(value, cap);
        if (dims[name] != value) shrunk.push_back(name);
        else if (shrink_dim(value, cap) != value) tied.push_back(name);
    }
    if (const auto& why = checker.full(dims)) {
        if (shrunk.empty()) return *why;
        auto restored = restore_dims(checker, dims, shrunk);
        if (!restored) return restored.error();
        tied.insert(tied.end(), restored->begin(), restored->end());
    }
    // Each tied dim alone (the last restored first), else with every tied dim of its full value
    // still at full size (T and T_1, equal at every binding: one cannot move without the other).
    auto move = [&](const std::vector<std::string>& group, int64_t full) {
        for (int64_t v : tied_candidates(full, cap)) {
            if (v == full) continue;
            for (const std::string& d : group) dims[d] = v;
            if (checker.ok(dims)) return true;
        }
        for (const std::string& d : group) dims[d] = full;
        return false;
    };
    for (auto it = tied.rbegin(); halve && it != tied.rend(); ++it) {
        const int64_t full = problem.dims.at(*it);
        if (dims[*it] != full || move({*it}, full)) continue;
        std::vector<std::string> group;
        for (const std::string& d : tied)
            if (problem.dims.at(d) == full && dims[d] == full) group.push_back(d);
        if (group.size() > 1) move(group, full);
    }
    keep.clear();
    for (const std::string& d : tied)
        if (dims[d] != shrink_dim(problem.dims.at(d), cap)) keep.insert(d);
    return checker.problem_at(dims);
}

// The non-derived dims a param carries, directly or through the dims its shape's derived dims
// are expressions of ("D96": "3*D32" carries D32): a weight's dims are the model's widths, the
// others (batch, sequence, image) only how much data goes through it.
std::set<std::string> weight_dims(const Problem& problem) {
    std::set<std::string> out;
    std::vector<std::string> todo;
    for (const Tensor& t : problem.tensors)
        if (t.role == TensorRole::kParam)
            for (const std::string& d : t.dim_names)
                if (!d.empty()) todo.push_back(d);
    while (!todo.empty()) {
        std::string name = std::move(todo.back());
        todo.pop_back();
        if (!out.insert(name).second) continue;
        auto expr = problem.dim_exprs.find(name);
        if (expr == problem.dim_exprs.end()) continue;
        const std::string& e = expr->second;
        auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
        for (size_t i = 0; i < e.size();) {
            if (!word(e[i])) {
                ++i;
                continue;
            }
            size_t j = i;
            while (j < e.size() && word(e[j])) ++j;
            // a number ("3" of "3*D32") is no name
            if (!std::isdigit(static_cast<unsigned char>(e[i]))) todo.push_back(e.substr(i, j - i));
            i = j;
        }
    }
    return out;
}

struct Context {
    dsl::Program program;
    dsl::DeviceLimits limits;
    Target target;
};

Expected<Context> context_of(const std::string& program_text, const std::string& device_key) {
    auto program = dsl::parse_program(program_text, "<program>");
    if (!program) return program.error();
    const Target target = target_for_device(device_key);
    return Context{*program, builder::check_limits(target), target};
}

// Whether the program lowers at `shape` as the evaluator lowers it (configured for the full
// problem): a shape that checks may still be one a lowering refuses (a grouped conv left with
// one channel per group has no SIMT kernel); its message, else empty.
std::string lowering_refusal(const Context& ctx, const Problem& shape, const Problem& full) {
    builder::BuildOptions options;
    options.check = false;
    options.no_build = true;
    options.config_problem = &full;
    auto built = builder::build(ctx.program, shape, ctx.target, options);
    return built.ok() ? "" : built.message;
}

// Below the cap: `dims` (the non-derived dims of a cap's shrink, which checks) with dims halved
// one at a time (shrink_dim to half its value), each halving kept where the program still checks,
// until the reference fits `max_flops` and the element budget and the lowering takes the
// program. A literal may tie a big dim to its full size (a window count fixed by the model keeps
// a 224x224 image): at the smallest cap whose rows the lowering takes, the other dims at the cap
// may still leave the reference over the budget. The dims no weight carries (batch, sequence)
// are halved first, then the others below their full size, then those at full size; after
// each kept halving the order starts again (the batch halves before any width). A dim whose
// halving does not check is not tried again; one whose halving the lowering refuses is put back
// and not tried again. An Error when nothing fits.
Expected<Problem> shrink_below(Checker& checker, const Context& ctx, Dims dims, double max_flops) {
    const Problem& problem = checker.problem();
    const std::set<std::string> weights = weight_dims(problem);
    std::vector<std::string> order;
    for (int group = 0; group < 3; ++group)
        for (const auto& [name, value] : dims) {
            const bool full = value == problem.dims.at(name);
            const int g = full ? 2 : weights.count(name) ? 1 : 0;
            if (g == group) order.push_back(name);
        }
    std::set<std::string> blocked;
    std::optional<std::pair<std::string, int64_t>> last;  // the last halving kept, its old value
    auto p = checker.problem_at(dims);
    while (p) {
        if (reference_feasible(*p, max_flops)) {
            if (lowering_refusal(ctx, *p, problem).empty()) return p;
            if (!last) break;
            dims[last->first] = last->second;
            blocked.insert(last->first);
        }
        last.reset();
        for (const std::string& d : order) {
            if (blocked.count(d) != 0 || dims[d] <= 1) continue;
            Dims t = dims;
            t[d] = shrink_dim(dims[d], dims[d] / 2);
            if (checker.ok(t)) {
                last.emplace(d, dims[d]);
                dims = std::move(t);
                break;
            }
            blocked.insert(d);
        }
        if (!last) break;
        p = checker.problem_at(dims);
    }
    if (!p) return p.error();
    return make_error("correctness_small", "below the cap, nothing more halves at dims " +
                                               shapes_key(*p));
}

}  // namespace

std::string shapes_key(const Problem& problem) {
    std::string key;
    for (const auto& [name, value] : problem.dims)
        key += (key.empty() ? "" : ",") + name + "=" + std::to_string(value);
    return key;
}

namespace {

Expected<Problem> pick_small_shape(const Problem& problem, const std::string& program_text,
                                   const std::string& device_key, double max_flops) {
    auto ctx = context_of(program_text, device_key);
    if (!ctx) return ctx.error();
    Checker checker(problem, ctx->program, ctx->limits);
    std::string last;
    std::set<std::string> keep;  // dims a literal bound ties to their full size (shrink)
    // 128 first; smaller caps when many dims multiply up (batched GEMMs, [N,C,H,W] norms);
    // larger ones when the program's knobs need longer rows (vec, tiles).
    // caps below 8 where even 8 is over the budget with the dims a literal ties kept (batch and
    // sequence of a network whose channels stay full).
    // The non-derived dims of each cap's shrink (128 down to 1) that checks but whose reference
    // is over the budget, smallest cap last: when no cap fits, shrink_below starts from the last.
    std::vector<Dims> over_budget;
    for (int64_t cap : {128, 64, 32, 16, 8, 4, 2, 1, 256, 512, 1024}) {
        auto p = shrink(checker, cap, keep);
        std::string why;
        if (!p) {
            why = p.error().to_string();
        } else {
            if (!reference_feasible(*p, max_flops)) {
                why = "the reference at dims " + shapes_key(*p) + " exceeds the CPU budget";
                Dims dims;
                for (const auto& [name, value] : p->dims)
                    if (problem.derived_dims.count(name) == 0) dims[name] = value;
                if (cap <= 128 && (over_budget.empty() || over_budget.back() != dims))
                    over_budget.push_back(std::move(dims));
            } else {
                why = lowering_refusal(*ctx, *p, problem);
                if (why.empty()) return p;
                why = "at dims " + shapes_key(*p) + " the lowering refuses the program: " + why;
                // the tied dims at full size instead of halved (a grouped conv halved to one
                // channel per group has no kernel)
                std::set<std::string> full_keep = keep;
                auto q = shrink(checker, cap, full_keep, false);
                if (q && reference_feasible(*q, max_flops) &&
                    lowering_refusal(*ctx, *q, problem).empty())
                    return q;
            }
        }
        // the smallest cap's reason says why nothing fits (the largest cap's is only its budget)
        if (last.empty() || cap == 1) last = why;
    }
    // No cap fits: the smallest cap's over-budget shrink with dims halved below it (a batch of 4
    // at cap 4 where the lowering refuses cap 2 and a literal keeps the image at full size). Where
    // that fails, the next larger cap's: the smallest cap may leave rows the lowering refuses (a
    // width of 1 at cap 1, which no halving of the other dims undoes) - KernelBench L3 30 SwinV2,
    // whose heads only halve to a vec-compatible 4 / 2 below the cap. Picks that fit before are
    // unchanged; only a problem that fits nowhere pays the checks of each cap.
    for (auto it = over_budget.rbegin(); it != over_budget.rend(); ++it) {
        auto p = shrink_below(checker, *ctx, *it, max_flops);
        if (p) return p;
    }
    return make_error("correctness_small", "no small shape fits the program and the CPU "
                                           "reference budget (" + last + ")");
}

Expected<Problem> pick_check_shape(const Problem& problem, const Problem& small,
                                   const std::string& program_text,
                                   const std::string& device_key) {
    if (reference_feasible(problem, kCheckShapeMaxFlops)) return problem;
    auto ctx = context_of(program_text, device_key);
    if (!ctx) return ctx.error();
    std::set<std::string> keep;
    Checker checker(problem, ctx->program, ctx->limits);
    for (int64_t cap : {4096, 2048, 1024, 512, 256}) {
        auto p = shrink(checker, cap, keep);
        if (!p || !reference_feasible(*p, kCheckShapeMaxFlops)) continue;
        if (p->dims == small.dims) break;
        return p;
    }
    return small;  // nothing larger is feasible: the small shape is the largest checkable
}

// The last shapes picked in this process, by what picks them: a candidate evaluated at the quick
// tier and again at the full tier (and the precompile ahead of it) asks for the same shapes up to
// three times, each one a few seconds on a 1000-op network.
Expected<Problem> remembered(const std::string& what, const Problem& problem,
                             const std::string& program_text, const std::string& device_key,
                             const std::function<Expected<Problem>()>& pick) {
    constexpr size_t kEntries = 8;
    static std::mutex mutex;
    static std::deque<std::pair<std::string, Expected<Problem>>> picked;
    std::string key = what;
    for (const std::string* part : {&device_key, &program_text})
        key += '\0' + std::to_string(part->size()) + ':' + *part;
    key += '\0' + problem_to_json(problem).dump();
    {
        std::lock_guard<std::mutex> lock(mutex);
        for (const auto& [k, shape] : picked)
            if (k == key) return shape;
    }
    Expected<Problem> shape = pick();
    std::lock_guard<std::mutex> lock(mutex);
    picked.emplace_front(std::move(key), shape);
    if (picked.size() > kEntries) picked.pop_back();
    return shape;
}

}  // namespace

Expected<Problem> small_shape(const Problem& problem, const std::string& program_text,
                              const std::string& device_key, double max_flops) {
    return remembered("small " + std::to_string(max_flops), problem, program_text, device_key,
                      [&] { return pick_small_shape(problem, program_text, device_key,
                                                    max_flops); });
}

Expected<Problem> check_shape(const Problem& problem, const Problem& small,
                              const std::string& program_text, const std::string& device_key) {
    return remembered("check " + shapes_key(small), problem, program_text, device_key,
                      [&] { return pick_check_shape(problem, small, program_text, device_key); });
}

Distribution correctness_distribution(int round) {
    constexpr Distribution kCycle[] = {Distribution::kUniform01, Distribution::kNormal,
                                       Distribution::kHeavyTailed};
    return kCycle[round % 3];
}

std::vector<CorrectnessGatePlan> correctness_gates(const Problem& problem,
                                                   const std::string& program_text,
                                                   const std::string& device_key, uint64_t seed,
                                                   EvalTier tier, bool gpu_reference) {
    std::vector<CorrectnessGatePlan> gates;
    auto add = [&](std::string gate, const Problem& shape, int rounds, uint64_t seed_base,
                   bool gpu) -> CorrectnessGatePlan& {
        gates.push_back(
            CorrectnessGatePlan{std::move(gate), shape, rounds, seed_base, gpu, false, {}});
        return gates.back();
    };
    auto small = small_shape(problem, program_text, device_key, kSmallShapeMaxFlops);
    if (!small) {
        add("correctness_small", problem, 0, 0, false).error = small.error().to_string();
        return gates;
    }
    add("correctness_small", *small, 2, seed * 1000, false);
    if (tier != EvalTier::kFull && tier != EvalTier::kProfile) return gates;
    auto check = check_shape(problem, *small, program_text, device_key);
    if (!check) {
        add("correctness_full", problem, 0, 0, false).error = check.error().to_string();
        return gates;
    }
    if (gpu_reference) {
        if (check->dims != problem.dims && check->dims != small->dims)
            add("correctness_hidden", *check, 3, seed * 1000 + 200, false);
        add("correctness_full", problem, 5, seed * 1000 + 100, true);
        add("correctness_full", *check, 5, seed * 1000 + 100, false).fallback = true;
    } else {
        add("correctness_full", *check, 5, seed * 1000 + 100, false);
    }
    return gates;
}

}  // namespace kforge::eval
