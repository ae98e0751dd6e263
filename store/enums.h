// The closed enums that kforge stores in SQLite, each with its one to_string/from_string pair.
// The strings are the stored values: renaming one needs a schema migration.
#pragma once

#include <optional>
#include <string_view>

namespace kforge {

// Fidelity tier of an evaluation, cheapest first (DESIGN.md: coarse-to-fine).
enum class EvalTier { kStatic, kCostModel, kCompile, kQuick, kFull, kProfile };
std::string_view to_string(EvalTier t);
std::optional<EvalTier> eval_tier_from_string(std::string_view s);

// How an evaluation ended (DESIGN.md decision 2: failure of a candidate is a result).
enum class EvalStatus {
    kPassed,
    kIncorrect,
    kCompileFailed,
    kLaunchFailed,
    kTimedOut,
    kCrashed,
    kResourcesExceeded,
    kInvalidProgram,
    kFlaggedGaming,
    kNotSupported,  // keep last: code iterates kPassed..kNotSupported
};
std::string_view to_string(EvalStatus s);
std::optional<EvalStatus> eval_status_from_string(std::string_view s);
// Whether an evaluation with this status answers the same question asked again on the same
// device, toolchain and shapes. A time-out or a crash may come from the machine (a noisy
// neighbour, a sticky error left by an earlier candidate), so those are evaluated again.
bool is_cacheable(EvalStatus s);

enum class RunStatus { kRunning, kFinished, kFailed, kInterrupted };
std::string_view to_string(RunStatus s);
std::optional<RunStatus> run_status_from_string(std::string_view s);

enum class ArtefactKind { kCudaSource, kLaunchPlan, kCubinHash, kPtxasReport };
std::string_view to_string(ArtefactKind k);
std::optional<ArtefactKind> artefact_kind_from_string(std::string_view s);

}  // namespace kforge
