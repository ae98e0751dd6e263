// The checker's driver (dsl/check.h): semantics, then legality of every kernel whose tensors
// resolved; error rendering with carets.
#include "dsl/check.h"

#include "dsl/check_attention.h"
#include "dsl/check_internal.h"
#include "dsl/check_rnn.h"
#include "dsl/diagnostic.h"
#include "sol/device.h"

namespace kforge::dsl {

std::string Reporter::loc_text(SourceLoc loc) {
    return std::to_string(loc.line) + ":" + std::to_string(loc.col);
}

std::string Reporter::where(SourceLoc loc) const {
    std::string file(options_.file_name);
    if (loc.line <= 0) return file;
    return file + ":" + loc_text(loc);
}

void Reporter::error(SourceLoc loc, std::string message) {
    if (!options_.source.empty() && loc.line > 0) {
        result_.errors.push_back(
            source_error(options_.source, options_.file_name, loc, 1, std::move(message)));
    } else {
        result_.errors.push_back(Error{where(loc), std::move(message), {}});
    }
}

void Reporter::warn(SourceLoc loc, std::string message) {
    result_.warnings.push_back(where(loc) + ": warning: " + message);
}

SourceLoc knob_loc(const Kernel& kernel, std::string_view knob) {
    for (const auto& [name, loc] : kernel.knob_locs)
        if (name == knob) return loc;
    return kernel.loc;
}

const ResolvedTensor* CheckResult::find_tensor(std::string_view name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

DeviceLimits device_limits(const DeviceSpec& device) {
    DeviceLimits limits;
    limits.name = device.name;
    limits.cc_major = device.cc_major;
    limits.cc_minor = device.cc_minor;
    limits.sm_count = device.sm_count;
    limits.smem_per_block_optin_bytes = device.smem_per_block_optin_bytes;
    limits.smem_per_sm_bytes = device.smem_per_sm_bytes;
    limits.regs_per_sm = device.regs_per_sm;
    limits.max_threads_per_block = 1024;  // every compute capability kforge supports
    limits.max_regs_per_thread = 255;
    // Thread-block clusters exist from sm_90; kforge's CUTLASS schedules use at most 4 CTAs.
    limits.cluster_max = device.cc_major >= 9 ? 4 : 1;
    return limits;
}

CheckResult check_program(const Program& program, const Problem& problem,
                          const DeviceLimits& limits, const CheckOptions& options) {
    CheckResult result;
    Reporter reporter(options, result);
    if (program.kernels.empty()) {
        reporter.error(program.loc, "program " + program.name + " has no kernels");
        return result;
    }
    StepBudget budget(options.max_steps);
    std::vector<KernelFacts> facts = check_semantics(program, problem, reporter, budget);
    result.steps = budget.used();
    for (size_t k = 0; k < program.kernels.size(); ++k) {
        const Kernel& kernel = program.kernels[k];
        if (!facts[k].resolved) continue;  // its errors are already reported
        switch (kernel.kind) {
        case KernelKind::kGemm:
            check_legality_gemm(kernel, facts[k], problem, result, limits, reporter);
            break;
        case KernelKind::kRowwise:
            check_legality_rowwise(kernel, facts[k], result, limits, reporter);
            break;
        case KernelKind::kMap: check_legality_map(kernel, facts[k], limits, reporter); break;
        case KernelKind::kConv2d:
            check_legality_conv2d(kernel, facts[k], problem, result, limits, reporter);
            break;
        case KernelKind::kPool: check_legality_pool(kernel, limits, reporter); break;
        case KernelKind::kAttention:  // check_attention.cpp
            check_legality_attention(kernel, problem, limits, reporter);
            break;
        case KernelKind::kCopy: check_legality_copy(kernel, limits, reporter); break;
        case KernelKind::kRnn: check_legality_rnn(kernel, problem, limits, reporter); break;
        }
        check_lowering(kernel, reporter);
    }
    return result;
}

}  // namespace kforge::dsl
