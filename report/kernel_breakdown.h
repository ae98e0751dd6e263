// The per-kernel breakdown of a report's best program (report/model.h KernelRow): from its
// evaluation's per-kernel times (store/records.h kernel_times_ns) and its stored evidence's
// "kernels" (eval/evaluate.h KernelSummary: name, kind, the graph ops it computes, its stores),
// each kernel's share of the kernels' total time, its SOL bound (sol/kernel_bounds.h) on the
// report's ceilings and %SOL, and the roofline side of that bound as its bottleneck.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "problem/problem.h"
#include "report/model.h"
#include "sol/calibration.h"

namespace kforge::report {

struct KernelBreakdown {
    std::vector<KernelRow> rows;  // empty: nothing to show (see note)
    std::string note;             // why there are no rows, for a program of several kernels
};

// Rows for a program of two or more kernels (`evidence`'s "kernels", one per time in
// `kernel_times_ns`); none for one kernel. `problem` is the stored spec (nullptr when it does not
// parse: no bounds), `ceilings` the report's (none: no bounds).
KernelBreakdown kernel_breakdown(const std::vector<double>& kernel_times_ns,
                                 const nlohmann::ordered_json& evidence, const Problem* problem,
                                 const std::optional<Ceilings>& ceilings);

// The table's header and one row's cells as every renderer shows them: kernel, kind, ops, time,
// share of the kernels' total, % of SOL (the kernel's own bound; "-" without one), bottleneck.
const std::vector<std::string>& kernel_table_header();
std::vector<std::string> kernel_table_cells(const KernelRow& row);

// The bar chart of the kernels' times (report/svg.h svg_bar_chart, us per kernel); "" for none.
std::string svg_kernel_chart(const std::vector<KernelRow>& rows);

// The file the Markdown report links for problem `p`'s kernel chart (written beside it).
std::string kernel_chart_file(const ProblemReport& p);

}  // namespace kforge::report
