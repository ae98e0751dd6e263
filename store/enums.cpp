#include "store/enums.h"

#include <array>
#include <utility>

namespace kforge {
namespace {

template <typename E, size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

constexpr Names<EvalTier, 6> kTierNames{{
    {EvalTier::kStatic, "static"},
    {EvalTier::kCostModel, "cost_model"},
    {EvalTier::kCompile, "compile"},
    {EvalTier::kQuick, "quick"},
    {EvalTier::kFull, "full"},
    {EvalTier::kProfile, "profile"},
}};

constexpr Names<EvalStatus, 10> kStatusNames{{
    {EvalStatus::kPassed, "passed"},
    {EvalStatus::kIncorrect, "incorrect"},
    {EvalStatus::kCompileFailed, "compile_failed"},
    {EvalStatus::kLaunchFailed, "launch_failed"},
    {EvalStatus::kTimedOut, "timed_out"},
    {EvalStatus::kCrashed, "crashed"},
    {EvalStatus::kResourcesExceeded, "resources_exceeded"},
    {EvalStatus::kInvalidProgram, "invalid_program"},
    {EvalStatus::kFlaggedGaming, "flagged_gaming"},
    {EvalStatus::kNotSupported, "not_supported"},
}};

constexpr Names<RunStatus, 4> kRunStatusNames{{
    {RunStatus::kRunning, "running"},
    {RunStatus::kFinished, "finished"},
    {RunStatus::kFailed, "failed"},
    {RunStatus::kInterrupted, "interrupted"},
}};

constexpr Names<ArtefactKind, 4> kArtefactNames{{
    {ArtefactKind::kCudaSource, "cuda_source"},
    {ArtefactKind::kLaunchPlan, "launch_plan"},
    {ArtefactKind::kCubinHash, "cubin_hash"},
    {ArtefactKind::kPtxasReport, "ptxas_report"},
}};

template <typename E, size_t N>
std::string_view name_of(const Names<E, N>& names, E value) {
    for (const auto& [v, name] : names) {
        if (v == value) return name;
    }
    return "?";  // unreachable for a valid enumerator
}

template <typename E, size_t N>
std::optional<E> value_of(const Names<E, N>& names, std::string_view s) {
    for (const auto& [v, name] : names) {
        if (name == s) return v;
    }
    return std::nullopt;
}

}  // namespace

std::string_view to_string(EvalTier t) { return name_of(kTierNames, t); }
std::optional<EvalTier> eval_tier_from_string(std::string_view s) {
    return value_of(kTierNames, s);
}

std::string_view to_string(EvalStatus s) { return name_of(kStatusNames, s); }
std::optional<EvalStatus> eval_status_from_string(std::string_view s) {
    return value_of(kStatusNames, s);
}

bool is_cacheable(EvalStatus s) {
    return s != EvalStatus::kTimedOut && s != EvalStatus::kCrashed;
}

std::string_view to_string(RunStatus s) { return name_of(kRunStatusNames, s); }
std::optional<RunStatus> run_status_from_string(std::string_view s) {
    return value_of(kRunStatusNames, s);
}

std::string_view to_string(ArtefactKind k) { return name_of(kArtefactNames, k); }
std::optional<ArtefactKind> artefact_kind_from_string(std::string_view s) {
    return value_of(kArtefactNames, s);
}

}  // namespace kforge
