// The fault suite (tests/faults/scenarios.json) run through ONE supervisor session: every
// scenario is evaluated in turn and the table scenario -> expected -> got is printed. Shared by
// the simulated-device run (CI, SimFault) and the CUDA run (real faulty kernels).
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "eval/supervisor.h"

namespace kforge::eval::faults {

inline const std::string kFaultDir = std::string(KFORGE_SOURCE_DIR) + "/tests/faults";

inline std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline nlohmann::json manifest() {
    return nlohmann::json::parse(read_text(kFaultDir + "/scenarios.json"));
}

// The evaluate payload of one scenario (eval_request_to_json's fields). `prebuilt_cubin`, when
// set, asks the worker to run that cubin with tests/faults/plan.json instead of lowering the
// program (the hand-written kernel is the candidate).
inline nlohmann::json payload_for(const nlohmann::json& scenario, bool simulated,
                                  const std::string& prebuilt_cubin = {}) {
    nlohmann::json p;
    p["problem"] = nlohmann::json::parse(read_text(kFaultDir + "/problem.json"));
    p["program"] = read_text(kFaultDir + "/program.kf");
    p["program_file"] = kFaultDir + "/program.kf";
    p["tier"] = "quick";
    p["sim_fault"] = simulated ? scenario["sim_fault"].get<std::string>() : "none";
    p["run_timeout_s"] = 5.0;
    if (!prebuilt_cubin.empty()) {
        p["prebuilt"] = {{"cubin", prebuilt_cubin},
                         {"plan", nlohmann::json::parse(read_text(kFaultDir + "/plan.json"))}};
    }
    return p;
}

inline double median_ns(const nlohmann::json& report) {
    auto it = report.find("timing");
    if (it == report.end() || !it->is_object()) return 0;
    return it->value("median_ns", 0.0);
}

// Runs every scenario; `cubin_for(source)` gives the prebuilt cubin (empty on the sim device).
template <typename CubinFor>
void run_fault_suite(Supervisor& supervisor, bool simulated, CubinFor cubin_for) {
    auto m = manifest();
    std::printf("%-16s %-16s %-16s %12s  %s\n", "scenario", "expected", "got", "median_us",
                "notes");
    double correct_ns = 0;
    int mismatches = 0;
    for (const auto& s : m["scenarios"]) {
        std::string name = s["name"];
        std::string cubin = cubin_for(s["source"].get<std::string>());
        auto r = supervisor.evaluate(payload_for(s, simulated, cubin), 60.0);
        ASSERT_TRUE(r.ok()) << name << ": " << r.error().to_string();
        std::string got(to_string(r->status));
        double t = median_ns(r->report);
        if (name == "correct") correct_ns = t;
        std::string note;
        for (const auto& g : r->report.value("gates", nlohmann::json::array()))
            if (!g.value("passed", true))
                note += g.value("gate", "") + ": " + g.value("message", "").substr(0, 90) + "; ";
        if (!r->notes.empty()) note += "worker restarted; ";
        if (s.value("slow", false)) {
            bool slow = correct_ns > 0 && t > 10 * correct_ns;
            note += slow ? "recorded slow (>10x correct); " : "NOT slower than correct; ";
            if (!slow) ++mismatches;
            EXPECT_TRUE(slow) << name << ": " << t << " ns vs correct " << correct_ns << " ns";
        }
        std::printf("%-16s %-16s %-16s %12.1f  %s\n", name.c_str(),
                    s["expected"].get<std::string>().c_str(), got.c_str(), t / 1e3, note.c_str());
        std::string caught_by = s.value("caught_by", "");
        if (!caught_by.empty() && r->report.dump().find(caught_by) == std::string::npos) {
            ++mismatches;
            ADD_FAILURE() << name << ": no gate says '" << caught_by << "'";
        }
        if (got != s["expected"]) {
            ++mismatches;
            ADD_FAILURE() << name << ": expected " << s["expected"] << ", got " << got << " ("
                          << r->message << ") report: " << r->report.dump().substr(0, 2000);
        }
    }
    std::printf("fault suite: %d mismatch(es); workers started %d, timeouts %d, crashes %d, "
                "restarts (broken device) %d\n", mismatches, supervisor.stats().workers_started,
                supervisor.stats().timeouts, supervisor.stats().crashes,
                supervisor.stats().restarts_broken);
}

}  // namespace kforge::eval::faults
