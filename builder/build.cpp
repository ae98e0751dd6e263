// build(): parse -> check -> lower -> compile for a Target (builder/build.h).
#include "builder/build.h"

#include <exception>

#include "common/hash.h"
#include "compile/failure_message.h"
#include "dsl/parser.h"
#include "dsl/printer.h"

namespace kforge::builder {
namespace {

BuiltCandidate& refuse(BuiltCandidate& c, BuildStatus status, std::vector<Error> errors) {
    c.status = status;
    c.message = errors.empty() ? std::string(to_string(status)) : errors.front().to_string();
    c.errors = std::move(errors);
    return c;
}

}  // namespace

std::string_view to_string(BuildStatus s) {
    switch (s) {
        case BuildStatus::kBuilt: return "built";
        case BuildStatus::kLowered: return "lowered";
        case BuildStatus::kChecked: return "checked";
        case BuildStatus::kInvalidProgram: return "invalid_program";
        case BuildStatus::kLoweringFailed: return "lowering_failed";
        case BuildStatus::kCompileFailed: return "compile_failed";
        case BuildStatus::kCompileTimedOut: return "compile_timed_out";
        case BuildStatus::kToolchainMissing: return "toolchain_missing";
        case BuildStatus::kCompileSetupFailed: return "compile_setup_failed";
        case BuildStatus::kCompileAborted: return "compile_aborted";
    }
    return "invalid_program";
}

std::optional<BuildStatus> build_status_from_string(std::string_view s) {
    for (BuildStatus v :
         {BuildStatus::kBuilt, BuildStatus::kLowered, BuildStatus::kChecked,
          BuildStatus::kInvalidProgram,
          BuildStatus::kLoweringFailed, BuildStatus::kCompileFailed, BuildStatus::kCompileTimedOut,
          BuildStatus::kToolchainMissing, BuildStatus::kCompileSetupFailed,
          BuildStatus::kCompileAborted})
        if (to_string(v) == s) return v;
    return std::nullopt;
}

Target target_of(const dsl::DeviceLimits& limits) {
    Target t = target_for_device(limits.name, limits.sm_count);
    t.cc_major = limits.cc_major;
    t.cc_minor = limits.cc_minor;
    t.arch = cuda_arch(limits.cc_major, limits.cc_minor);
    t.smem_per_block_optin_bytes = limits.smem_per_block_optin_bytes;
    return t;
}

dsl::DeviceLimits check_limits(const Target& target) {
    dsl::DeviceLimits limits;
    if (auto spec = find_device(target.device_key); target.known && spec.ok())
        return dsl::device_limits(*spec);
    limits.sm_count = target.sm_count;
    return limits;
}

compile::CompileOptions compile_options(const codegen::Lowered& lowered, const Target& target,
                                        const BuildOptions& options) {
    compile::CompileOptions co = compile::default_compile_options(target.arch);
    co.host_library = lowered.has_host_code;
    co.try_nvrtc = !lowered.uses_cutlass && !lowered.has_host_code;
    co.cache_dir = options.compile_cache_dir;
    co.out_dir = options.out_dir;
    co.timeout_s = options.compile_timeout_s;
    return co;
}

std::string compile_unit_key(const BuiltCandidate& c) {
    const compile::CompileOptions& o = c.compile_options;
    return o.arch + (o.host_library ? "|host" : "|device") + (o.try_nvrtc ? "|nvrtc|" : "|nvcc|") +
           c.lowered.cuda_source;
}

namespace {

// check (unless the caller did) -> lower -> compile, for a program whose text (when it came as
// text) the checker's messages point into.
BuiltCandidate build_parsed(const dsl::Program& program, std::string_view source,
                            const Problem& problem, const Target& target,
                            const BuildOptions& options) {
    BuiltCandidate c;
    c.parsed = true;
    c.program = program;
    c.arch = target.arch;
    c.canonical_text = dsl::print_canonical(program);
    c.program_hash = sha256_hex(c.canonical_text);  // dsl::program_hash(program)
    if (options.check) {
        auto checked = dsl::check_program(program, problem, check_limits(target),
                                          dsl::CheckOptions{options.file_name, source});
        c.warnings = std::move(checked.warnings);
        if (!checked.ok())
            return std::move(refuse(c, BuildStatus::kInvalidProgram, std::move(checked.errors)));
    }
    if (options.check_only) {
        c.status = BuildStatus::kChecked;
        return c;
    }
    codegen::LowerOptions lower;
    lower.arch = target.arch;
    lower.sm_count = target.sm_count;
    lower.program_hash = c.program_hash;
    lower.config_problem = options.config_problem;
    lower.dump = options.dump;
    auto lowered = codegen::lower_program(program, problem, lower);
    if (!lowered) return std::move(refuse(c, BuildStatus::kLoweringFailed, {lowered.error()}));
    c.lowered = std::move(*lowered);
    c.compile_options = compile_options(c.lowered, target, options);
    c.status = BuildStatus::kLowered;
    if (!options.no_build) compile_lowered(c);
    return c;
}

}  // namespace

BuiltCandidate build(std::string_view program_text, const Problem& problem, const Target& target,
                     const BuildOptions& options) {
    auto program = dsl::parse_program(program_text, options.file_name);
    if (!program) {
        BuiltCandidate c;
        c.arch = target.arch;
        return std::move(refuse(c, BuildStatus::kInvalidProgram, {program.error()}));
    }
    return build_parsed(*program, program_text, problem, target, options);
}

BuiltCandidate build(const dsl::Program& program, const Problem& problem, const Target& target,
                     const BuildOptions& options) {
    return build_parsed(program, {}, problem, target, options);
}

void compile_lowered(BuiltCandidate& c) {
    if (c.status != BuildStatus::kLowered) return;
    Expected<compile::CompileResult> r = make_error("compile", "not compiled");
    try {
        r = compile::compile_cuda(c.lowered.cuda_source, c.compile_options);
    } catch (const std::exception& e) {
        r = make_error("compile", e.what());
    }
    if (!r) {
        c.status = BuildStatus::kCompileSetupFailed;
        c.message = r.error().to_string();
        return;
    }
    c.compiled = std::move(*r);
    switch (c.compiled->status) {
        case compile::CompileStatus::kOk: c.status = BuildStatus::kBuilt; break;
        case compile::CompileStatus::kCompileFailed: c.status = BuildStatus::kCompileFailed; break;
        case compile::CompileStatus::kTimedOut: c.status = BuildStatus::kCompileTimedOut; break;
        case compile::CompileStatus::kToolchainMissing:
            c.status = BuildStatus::kToolchainMissing;
            break;
        case compile::CompileStatus::kAborted: c.status = BuildStatus::kCompileAborted; break;
    }
    // the compiler's own words (first error lines, a missing header named, the command)
    c.message = c.status == BuildStatus::kBuilt ? "" : compile::failure_message(*c.compiled);
}

}  // namespace kforge::builder
