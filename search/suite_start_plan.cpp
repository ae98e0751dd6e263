// The start phase's plan: compile classes, estimates, priorities and waves (search/suite_start.h).
#include <algorithm>
#include <cstdio>

#include "compile/compile_history.h"
#include "dsl/attention_fmha.h"
#include "dsl/attention_mea.h"
#include "search/suite_start.h"

namespace kforge::search {
namespace {

std::string gemm_config(const dsl::GemmConfig& g) {
    std::string c = std::to_string(g.tile_m) + "x" + std::to_string(g.tile_n) + "x" +
                    std::to_string(g.tile_k) + " " + std::string(dsl::to_string(g.schedule)) + " " +
                    std::string(dsl::to_string(g.math));
    if (g.cluster_m * g.cluster_n > 1)
        c += " cluster " + std::to_string(g.cluster_m) + "x" + std::to_string(g.cluster_n);
    return c;
}

}  // namespace

CompileClass compile_class(const dsl::Program& p) {
    CompileClass best;
    for (const dsl::Kernel& k : p.kernels) {
        CompileClass c;
        switch (k.kind) {
            case dsl::KernelKind::kConv2d:  // schedule direct: kforge's own, an NVRTC compile
                c = k.gemm.schedule == dsl::Schedule::kDirect
                        ? CompileClass{"conv2d_direct", "", false, 1}
                        : CompileClass{"conv2d", gemm_config(k.gemm), true, 4};
                break;
            case dsl::KernelKind::kGemm:
                c = k.gemm.schedule == dsl::Schedule::kMultistage
                        ? CompileClass{"gemm_multistage", gemm_config(k.gemm), true, 2}
                        : CompileClass{"gemm_sm90", gemm_config(k.gemm), true, 3};
                break;
            case dsl::KernelKind::kRowwise: c = {"rowwise", "", false, 1}; break;
            case dsl::KernelKind::kMap: c = {"map", "", false, 0}; break;
            case dsl::KernelKind::kPool: c = {"pool", "", false, 0}; break;
            case dsl::KernelKind::kAttention:
                // CUTLASS's Hopper FMHA is an nvcc compile (~70-80 s), its memory-efficient
                // attention one too (~40 s on the 2-core host), the WMMA kernel NVRTC
                c = k.attention.impl == dsl::AttentionImpl::kCutlassFmha
                        ? CompileClass{"attention_fmha",
                                       dsl::fmha_tile_text(k.attention.fmha_m, k.attention.fmha_n,
                                                           k.attention.fmha_d) + " " +
                                           std::string(dsl::to_string(k.attention.fmha_schedule)),
                                       true, 3}
                    : k.attention.impl == dsl::AttentionImpl::kCutlassMea
                        ? CompileClass{"attention_mea",
                                       dsl::mea_tile_text(k.attention.mea_m, k.attention.mea_n),
                                       true, 2}
                        : CompileClass{"attention", "", false, 1};
                break;
            case dsl::KernelKind::kCopy: c = {"copy", "", false, 0}; break;
        }
        if (c.rank > best.rank) best = c;
    }
    return best;
}

namespace {

std::string fmt(double v, const char* f = "%.1f") {
    char b[32];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

}  // namespace

StartPlan plan_starts(const std::vector<SearchState>& states, bool compiles,
                      const std::string& history_dir, int jobs, double time_est_s) {
    StartPlan plan;
    plan.jobs = std::max(1, jobs);
    plan.time_est_s = time_est_s;
    const std::vector<compile::CompileTimeSample> history =
        compiles ? compile::load_compile_history(history_dir)
                 : std::vector<compile::CompileTimeSample>{};
    std::vector<StartPlanItem> nvcc, ready;
    for (size_t i = 0; i < states.size(); ++i) {
        const SearchState& st = states[i];
        auto it = st.candidates.find(st.start_hash);
        if (it == st.candidates.end() || it->second.evaluated) continue;  // resumed: timed
        StartPlanItem item;
        item.state = i;
        if (it->second.program) {
            CompileClass c = compile_class(*it->second.program);
            item.kind = c.kind;
            item.config = c.config;
            item.needs_nvcc = compiles && c.needs_nvcc;
            if (st.cost)
                if (auto est = st.cost->estimate_ns(*it->second.program); est && *est > 0)
                    item.headroom =
                        std::clamp(1.0 - st.bounds.time_fused_s * 1e9 / *est, 0.05, 1.0);
        }
        if (item.needs_nvcc) {
            compile::CompileEstimate e = compile::estimate_compile_s(history, item.kind, item.config);
            item.compile_est_s = e.seconds;
            item.estimate_basis = e.basis;
        } else {
            item.estimate_basis = compiles ? "NVRTC, compiled in its timing"
                                           : "nothing to compile on the simulated device";
        }
        item.priority = item.headroom / std::max(1.0, item.compile_est_s);
        (item.needs_nvcc ? nvcc : ready).push_back(item);
    }
    auto by_priority = [](const StartPlanItem& a, const StartPlanItem& b) {
        return a.priority > b.priority || (a.priority == b.priority && a.state < b.state);
    };
    std::stable_sort(nvcc.begin(), nvcc.end(), by_priority);
    std::stable_sort(ready.begin(), ready.end(), by_priority);
    // list scheduling on `jobs` workers at the estimates: each compile on the first free worker
    std::vector<double> free_at(static_cast<size_t>(plan.jobs), 0.0);
    for (size_t n = 0; n < nvcc.size(); ++n) {
        auto w = std::min_element(free_at.begin(), free_at.end());
        nvcc[n].wave = static_cast<int>(n / free_at.size()) + 1;
        *w += nvcc[n].compile_est_s;
        nvcc[n].planned_ready_s = *w;
    }
    plan.items = std::move(nvcc);
    plan.items.insert(plan.items.end(), ready.begin(), ready.end());
    return plan;
}

std::string describe_start_plan(const StartPlan& plan, const std::vector<SearchState>& states,
                                const Budget& budget) {
    double total = 0;
    int compiled = 0;
    for (const StartPlanItem& it : plan.items)
        if (it.needs_nvcc) total += it.compile_est_s, ++compiled;
    std::string s = "start plan: " + std::to_string(plan.items.size()) + " start programs, " +
                    std::to_string(compiled) + " to compile with nvcc on " +
                    std::to_string(plan.jobs) + " jobs (estimated " + fmt(total) +
                    " compile-seconds), the others timed while they compile";
    s += budget.wall_s ? ", wall budget " + fmt(*budget.wall_s) + " s\n" : "\n";
    for (const StartPlanItem& it : plan.items) {
        const std::string& name = states[it.state].problem.name;
        char line[512];
        if (it.needs_nvcc) {
            const bool fits = !budget.wall_s ||
                              it.planned_ready_s + plan.time_est_s <= *budget.wall_s;
            std::snprintf(line, sizeof line,
                          "  wave %d  %-28s %s %s: compile est %s s (%s), ready at %s s%s, "
                          "headroom %.2f\n",
                          it.wave, name.c_str(), it.kind.c_str(), it.config.c_str(),
                          fmt(it.compile_est_s).c_str(), it.estimate_basis.c_str(),
                          fmt(it.planned_ready_s).c_str(), fits ? "" : " (past the budget)",
                          it.headroom);
        } else {
            std::snprintf(line, sizeof line, "  now     %-28s %s: %s, headroom %.2f\n", name.c_str(),
                          it.kind.c_str(), it.estimate_basis.c_str(), it.headroom);
        }
        s += line;
    }
    return s;
}

}  // namespace kforge::search
