// The outputs of a search: best program, CUDA, plan and the evidence summary (search/loop.h).
#include <cstdio>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
#include "search/group_budget.h"
#include "search/loop_internal.h"
#include "sol/sol_share.h"

namespace kforge::search {
namespace {

namespace fs = std::filesystem;

// The files a search writes into --out; evidence.json marks a folder as kforge's output folder.
constexpr const char* kEvidenceFile = "evidence.json";
constexpr const char* kOutputFiles[] = {"best.kf", "best.cu", "plan.json", kEvidenceFile};

// Writes `files` (name -> text) into `out_dir` as the whole of this run's outputs: each file
// atomically (common/atomic_file.h: a symlink at a name is replaced, never written through),
// evidence.json last, and every other output name kforge writes (an earlier run's best.kf,
// best.cu, plan.json) removed first, so a failing run leaves no earlier best beside its
// "best": null. Files of other names are never touched. A folder that holds one of those names
// but no evidence.json was not written by kforge: it is refused, nothing removed or replaced.
Status write_output_folder(const fs::path& out_dir, const std::map<std::string, std::string>& files,
                           int64_t run_id) {
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (ec) return make_error(out_dir.string(), "cannot create the output folder: " + ec.message());
    const bool ours = fs::exists(fs::symlink_status(out_dir / kEvidenceFile, ec));
    for (const char* name : kOutputFiles) {
        const fs::path p = out_dir / name;
        if (!fs::exists(fs::symlink_status(p, ec))) continue;
        if (!ours)
            return make_error(out_dir.string(),
                              std::string("--out: holds ") + name + " but no " + kEvidenceFile +
                                  ", so it is not a kforge output folder; kforge replaces or "
                                  "removes nothing there. Give a new or empty folder (run " +
                                  std::to_string(run_id) + " is in the store: kforge report)");
        if (files.count(name)) continue;
        fs::remove(p, ec);  // a symlink is removed itself
        if (ec) return make_error(p.string(), "cannot remove the earlier run's file: " +
                                                  ec.message());
    }
    for (const auto& [name, text] : files) {
        if (name == kEvidenceFile) continue;
        if (auto st = write_file_atomic(out_dir / name, text); !st) return st.error();
    }
    if (auto it = files.find(kEvidenceFile); it != files.end())
        if (auto st = write_file_atomic(out_dir / kEvidenceFile, it->second); !st)
            return st.error();
    return Ok{};
}

}  // namespace

Expected<std::string> write_outputs(const SearchState& st, Store& store, const std::string& out_dir) {
    const char* sim = st.simulated ? " (simulated)" : "";
    auto hash = best_hash(st);
    std::map<std::string, std::string> files;  // what --out receives, by file name
    nlohmann::ordered_json ev;
    ev["problem"] = st.problem.name;
    ev["run_id"] = st.run_id;
    ev["device"] = st.device_name;
    ev["simulated"] = st.simulated;
    ev["stop_reason"] = st.stop_reason;
    ev["sol_time_ns"] = st.bounds.time_fused_s * 1e9;
    ev["bound"] = std::string(to_string(st.bounds.kind));
    std::string text = "problem " + st.problem.name + ", run " + std::to_string(st.run_id) +
                       ", device " + st.device_name + sim + "\n";
    text += "stopped: " + st.stop_reason + "\n";
    // compiles and evaluations apart: a launch-knob variant of a compiled program is an
    // evaluation without a compile
    const TierCounts& n = st.counts;
    text += "evaluations: " + std::to_string(n.quick + n.full) + " timed (" +
            std::to_string(n.quick) + " quick, " + std::to_string(n.full) + " full) of " +
            std::to_string(n.compiles + n.free) + " programs: " + std::to_string(n.compiles) +
            " compiled, " + std::to_string(n.free) + " free (no compile of their own)" +
            (n.cached ? ", " + std::to_string(n.cached) + " from the store's cache" : "") + "\n";
    ev["counts"] = {{"proposed", n.proposed}, {"quick", n.quick},     {"full", n.full},
                    {"invalid", n.invalid},   {"cached", n.cached},   {"compiles", n.compiles},
                    {"free", n.free},         {"profiled", n.profiled}};
    // where the run's proposals and GPU-seconds went per kernel group, against each group's gain
    ev["kernel_groups"] = groups_json(st);
    text += groups_text(st);
    if (!hash) {
        auto start = st.candidates.find(st.start_hash);
        if (start != st.candidates.end() && start->second.quick) {
            char line[200];
            std::snprintf(line, sizeof line,
                          "no candidate reached the full tier before the stop; the start program "
                          "passed the quick tier at %.3f us\n", start->second.quick->median_ns / 1e3);
            text += line;
        } else {
            text += "no candidate passed the full tier\n";
            // what stopped the start program, where it was evaluated: the one line a user
            // needs when a run ends empty (a gate's failure, or a device that cannot run it)
            if (start != st.candidates.end() && start->second.evaluated &&
                start->second.status != EvalStatus::kPassed)
                text += "the start program: " + std::string(to_string(start->second.status)) +
                        (start->second.message.empty() ? "" : ": " + start->second.message) +
                        "\n";
        }
        ev["best"] = nullptr;
    } else {
        const CandidateState& c = st.candidates.at(*hash);
        double t = c.full->median_ns;
        auto start = start_time_ns(st);
        const SolShare share = sol_share(t * 1e-9, st.bounds.time_fused_s);
        char line[400];
        std::snprintf(line, sizeof line,
                      "best: %.3f us (95%% CI [%.3f, %.3f], %d samples), %s, %.3fx vs "
                      "the start program (%s us)%s\n",
                      t / 1e3, c.full->ci95_low_ns / 1e3, c.full->ci95_high_ns / 1e3,
                      c.full->count, format_sol_share(share).c_str(), start ? *start / t : 0.0,
                      start ? std::to_string(*start / 1e3).c_str() : "-", sim);
        text += line;
        ev["best"] = {{"hash", *hash}, {"candidate_id", c.id}, {"program", c.text},
                      {"median_ns", t}, {"ci95_low_ns", c.full->ci95_low_ns},
                      {"ci95_high_ns", c.full->ci95_high_ns}, {"samples", c.full->count},
                      {"fraction_of_sol", share.fraction},  // at most 1 (sol/sol_share.h)
                      {"under_sol_bound", share.under_bound},
                      {"time_over_sol", share.time_over_sol}};
        if (start) ev["start_median_ns"] = *start, ev["speedup_vs_start"] = *start / t;
        // gates of the full evaluation
        auto evals = store.list_evaluations(c.id);
        if (!evals) return evals.error();
        for (const EvaluationRecord& e : *evals) {
            if (e.tier != EvalTier::kFull) continue;
            auto j = nlohmann::ordered_json::parse(e.evidence_json, nullptr, false);
            if (j.is_object() && j.contains("gates")) {
                ev["gates"] = j["gates"];
                text += "gates:";
                for (const auto& g : j["gates"])
                    text += " " + g.value("gate", "") + (g.value("skipped", false) ? "(skip)"
                                                         : g.value("passed", false) ? "(ok)" : "(FAIL)");
                text += "\n";
            }
        }
        auto lineage = store.lineage(c.id);
        if (!lineage) return lineage.error();
        ev["lineage"] = nlohmann::ordered_json::array();
        text += "lineage:\n";
        for (const LineageEntry& l : *lineage) {
            ev["lineage"].push_back({{"depth", l.depth}, {"candidate_id", l.candidate.id},
                                     {"proposer", l.candidate.proposer}, {"move", l.candidate.move}});
            text += "  " + std::string(2 * l.depth, ' ') + "#" + std::to_string(l.candidate.id) +
                    " " + l.candidate.proposer + ": " + l.candidate.move + "\n";
        }
        if (!out_dir.empty()) {
            files["best.kf"] = c.text;
            auto arts = store.list_artefacts(c.id);
            if (!arts) return arts.error();
            for (const ArtefactRecord& a : *arts) {
                if (a.kind == ArtefactKind::kCudaSource) files["best.cu"] = a.content;
                if (a.kind == ArtefactKind::kLaunchPlan) files["plan.json"] = a.content;
            }
        }
    }
    if (!out_dir.empty()) {
        files[kEvidenceFile] = ev.dump(2);
        if (auto written = write_output_folder(out_dir, files, st.run_id); !written)
            return written.error();
    }
    return text;
}

}  // namespace kforge::search
