// Shape selection for the correctness gates and the list of those gates (eval/evaluate.h:
// small_shape, check_shape, correctness_gates).
#include <algorithm>

#include "builder/build.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "eval/evaluate.h"
#include "problem/interpret.h"
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

// The problem with every dim shrunk to `cap`, if the program checks on it.
Expected<Problem> shrink(const Problem& problem, const dsl::Program& program,
                         const dsl::DeviceLimits& limits, int64_t cap) {
    std::map<std::string, int64_t> dims;
    for (const auto& [name, value] : problem.dims) {
        if (problem.derived_dims.count(name) == 0) dims[name] = shrink_dim(value, cap);
    }  // derived dims (a conv2d's output sizes) follow the dims they are computed from
    auto p = rebind_dims(problem, dims);
    if (!p) return p.error();
    auto checked = dsl::check_program(program, *p, limits);
    if (!checked.ok()) return checked.errors.front();
    return p;
}

struct Context {
    dsl::Program program;
    dsl::DeviceLimits limits;
};

Expected<Context> context_of(const std::string& program_text, const std::string& device_key) {
    auto program = dsl::parse_program(program_text, "<program>");
    if (!program) return program.error();
    return Context{*program, builder::check_limits(target_for_device(device_key))};
}

}  // namespace

std::string shapes_key(const Problem& problem) {
    std::string key;
    for (const auto& [name, value] : problem.dims)
        key += (key.empty() ? "" : ",") + name + "=" + std::to_string(value);
    return key;
}

Expected<Problem> small_shape(const Problem& problem, const std::string& program_text,
                              const std::string& device_key, double max_flops) {
    auto ctx = context_of(program_text, device_key);
    if (!ctx) return ctx.error();
    std::string last;
    // 128 first; smaller caps when many dims multiply up (batched GEMMs, [N,C,H,W] norms);
    // larger ones when the program's knobs need longer rows (vec, tiles).
    for (int64_t cap : {128, 64, 32, 16, 8, 256, 512, 1024}) {
        auto p = shrink(problem, ctx->program, ctx->limits, cap);
        if (!p) {
            last = p.error().to_string();
            continue;
        }
        if (reference_feasible(*p, max_flops)) return p;
        last = "the reference at dims " + shapes_key(*p) + " exceeds the CPU budget";
    }
    return make_error("correctness_small", "no small shape fits the program and the CPU "
                                           "reference budget (" + last + ")");
}

Expected<Problem> check_shape(const Problem& problem, const Problem& small,
                              const std::string& program_text, const std::string& device_key) {
    if (reference_feasible(problem, kCheckShapeMaxFlops)) return problem;
    auto ctx = context_of(program_text, device_key);
    if (!ctx) return ctx.error();
    for (int64_t cap : {4096, 2048, 1024, 512, 256}) {
        auto p = shrink(problem, ctx->program, ctx->limits, cap);
        if (!p || !reference_feasible(*p, kCheckShapeMaxFlops)) continue;
        if (p->dims == small.dims) break;
        return p;
    }
    return small;  // nothing larger is feasible: the small shape is the largest checkable
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
