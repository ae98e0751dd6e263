#include "report/kernel_breakdown.h"

#include "report/svg.h"
#include "report/text.h"
#include "sol/kernel_bounds.h"

namespace kforge::report {
namespace {

struct StoredKernel {
    std::string name, kind;
    std::vector<size_t> ops;
    std::vector<std::string> stores;
};

// The evidence's "kernels" (eval/report_json.cpp writes them); an entry of the wrong shape
// leaves the list empty.
std::vector<StoredKernel> stored_kernels(const nlohmann::ordered_json& evidence) {
    std::vector<StoredKernel> out;
    if (!evidence.is_object() || !evidence.contains("kernels")) return out;
    const auto& a = evidence["kernels"];
    if (!a.is_array()) return out;
    for (const auto& e : a) {
        if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) return {};
        StoredKernel k;
        k.name = e["name"].get<std::string>();
        k.kind = e.value("kind", "");
        if (e.contains("ops") && e["ops"].is_array())
            for (const auto& i : e["ops"])
                if (i.is_number_unsigned()) k.ops.push_back(i.get<size_t>());
        if (e.contains("stores") && e["stores"].is_array())
            for (const auto& t : e["stores"])
                if (t.is_string()) k.stores.push_back(t.get<std::string>());
        out.push_back(std::move(k));
    }
    return out;
}

std::string ops_text(const Problem* problem, const std::vector<size_t>& ops) {
    std::string s;
    for (size_t i : ops) {
        if (!s.empty()) s += ", ";
        s += problem && i < problem->ops.size() ? std::string(to_string(problem->ops[i].kind))
                                                : "op " + std::to_string(i);
    }
    return s.empty() ? "-" : s;
}

}  // namespace

KernelBreakdown kernel_breakdown(const std::vector<double>& kernel_times_ns,
                                 const nlohmann::ordered_json& evidence, const Problem* problem,
                                 const std::optional<Ceilings>& ceilings) {
    KernelBreakdown b;
    std::vector<StoredKernel> kernels = stored_kernels(evidence);
    if (kernels.size() < 2) return b;  // one kernel: its time is the program's
    if (kernel_times_ns.empty()) {
        b.note = "no per-kernel times recorded for this evaluation";
        return b;
    }
    if (kernel_times_ns.size() != kernels.size()) {
        b.note = std::to_string(kernel_times_ns.size()) + " per-kernel times for " +
                 std::to_string(kernels.size()) + " kernels: not shown";
        return b;
    }
    double total = 0;
    for (double t : kernel_times_ns) total += t;
    for (size_t i = 0; i < kernels.size(); ++i) {
        const StoredKernel& k = kernels[i];
        KernelRow row;
        row.name = k.name;
        row.kind = k.kind;
        row.ops = ops_text(problem, k.ops);
        row.time_ns = kernel_times_ns[i];
        row.share = total > 0 ? row.time_ns / total : 0;
        row.bottleneck = "-";
        if (problem && ceilings && !k.ops.empty()) {
            if (auto bound = kernel_bounds(*problem, k.ops, k.stores, *ceilings); bound.ok()) {
                row.time_sol_ns = bound->time_fused_s * 1e9;
                row.sol = sol_share(row.time_ns * 1e-9, bound->time_fused_s);
                row.bottleneck = bound->kind == BoundKind::kCompute
                                     ? "compute (" + bound->compute_unit + ")"
                                     : std::string("memory");
            }
        }
        b.rows.push_back(std::move(row));
    }
    return b;
}

const std::vector<std::string>& kernel_table_header() {
    static const std::vector<std::string> h{"kernel", "kind",     "ops",       "time",
                                            "share",  "% of SOL", "bottleneck"};
    return h;
}

std::vector<std::string> kernel_table_cells(const KernelRow& r) {
    return {r.name,
            r.kind,
            r.ops,
            format_time_ns(r.time_ns),
            format_fraction(r.share),
            r.time_sol_ns ? format_sol_share(r.sol, 1, false) : "-",
            r.bottleneck};
}

std::string svg_kernel_chart(const std::vector<KernelRow>& rows) {
    std::vector<Bar> bars;
    for (const KernelRow& r : rows) bars.push_back(Bar{r.name + " " + r.kind, r.time_ns / 1e3});
    return svg_bar_chart("time per kernel (us)", bars, " us", 0);
}

std::string kernel_chart_file(const ProblemReport& p) {
    return "kernels_run" + std::to_string(p.run_id) + "_problem" + std::to_string(p.problem_id) +
           ".svg";
}

}  // namespace kforge::report
