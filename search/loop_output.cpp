// The outputs of a search: best program, CUDA, plan and the evidence summary (search/loop.h).
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "search/loop_internal.h"
#include "sol/sol_share.h"

namespace kforge::search {
namespace {

Status write_file(const std::filesystem::path& p, const std::string& text) {
    std::ofstream out(p);
    out << text;
    if (!out) return make_error(p.string(), "cannot write the file");
    return Ok{};
}

}  // namespace

Expected<std::string> write_outputs(const SearchState& st, Store& store, const std::string& out_dir) {
    const char* sim = st.simulated ? " (simulated)" : "";
    auto hash = best_hash(st);
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
            std::error_code ec;
            std::filesystem::create_directories(out_dir, ec);
            if (ec) return make_error(out_dir, "cannot create the output folder: " + ec.message());
            std::filesystem::path d(out_dir);
            if (auto s = write_file(d / "best.kf", c.text); !s) return s.error();
            auto arts = store.list_artefacts(c.id);
            if (!arts) return arts.error();
            for (const ArtefactRecord& a : *arts) {
                if (a.kind == ArtefactKind::kCudaSource)
                    if (auto s = write_file(d / "best.cu", a.content); !s) return s.error();
                if (a.kind == ArtefactKind::kLaunchPlan)
                    if (auto s = write_file(d / "plan.json", a.content); !s) return s.error();
            }
        }
    }
    if (!out_dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(out_dir, ec);
        if (auto s = write_file(std::filesystem::path(out_dir) / "evidence.json", ev.dump(2)); !s)
            return s.error();
    }
    return text;
}

}  // namespace kforge::search
