// The bottleneck diagnosis of a program as plain data: per kernel a bottleneck class, the
// evidence that decided it (metric, value, threshold) and the knob moves that address it (the
// one moves table, diagnosis/moves.h), plus the ptxas summary of its compile. profile/ makes it
// (from an ncu profile or from ptxas + the roofline); search/ reads it typed (the diagnosis
// proposer, search/proposers_diagnosis.cpp). Text is made from it only for logs, reports and the
// LLM prompt (diagnosis_text).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnosis/bottleneck.h"
#include "diagnosis/moves.h"
#include "dsl/ast.h"

namespace kforge {

// One reading that took part in the decision ("dram__throughput... 91.2 >= 60").
struct BottleneckEvidence {
    std::string metric;
    double value = 0;
    std::string op;  // ">=", "<", ...
    double threshold = 0;
    std::string note;
};

// One kernel's diagnosis.
struct KernelDiagnosis {
    std::string kernel;                      // entry symbol, kforge_<kernel>
    std::optional<dsl::KernelKind> kind;     // the program kernel's kind, when known
    Bottleneck bottleneck = Bottleneck::kUnknown;
    bool from_profile = true;                // false: ptxas + SOL fallback
    std::vector<BottleneckEvidence> evidence;  // what decided the class (first: the deciding rule)
    // The moves for the class and the kernel's kind (moves_for; every kind's first move when the
    // kind is unknown); empty when `stop`.
    std::vector<DirectedMove> moves;
    bool stop = false;                       // within kNearSolFraction of SOL on a DRAM or
                                             // tensor class: nothing left to move
    std::string summary;                     // one line: "k0: dram_bound (metric v >= t)"
};

// A program's diagnosis: its kernels' diagnoses and what ptxas reported for its compile.
struct Diagnosis {
    std::vector<KernelDiagnosis> kernels;
    std::string ptxas_summary;   // compile::format_ptxas_report of the compile; "" when none
    bool ptxas_spills = false;   // some kernel of that compile spills registers
    bool empty() const { return kernels.empty() && ptxas_summary.empty(); }
    // True when some kernel has class `b`.
    bool has(Bottleneck b) const;
};

// T_sol / T at or above this on a DRAM or tensor class: the diagnosis says stop.
inline constexpr double kNearSolFraction = 0.8;

// The lines `kforge profile` prints as moves: the stop line, or one per move (move_text).
std::vector<std::string> move_lines(const KernelDiagnosis& d);

// "k0: dram_bound (dram__throughput 91.2 >= 60) -> moves: vec up (...); ..." one line per
// kernel, then the ptxas summary when there is one: what logs and the LLM prompt show.
std::string diagnosis_text(const std::vector<KernelDiagnosis>& kernels);
std::string diagnosis_text(const Diagnosis& d);
nlohmann::ordered_json to_json(const KernelDiagnosis& d);

}  // namespace kforge
