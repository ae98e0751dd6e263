// The progress display of `kforge optimize` (cli/progress.h).
#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "sol/sol_share.h"

namespace kforge::cli {
namespace {

std::string fmt(const char* f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

// "45s", "9m48s", "2h05m"
std::string duration(double s) {
    if (!(s >= 0) || !std::isfinite(s)) return "?";
    const long t = std::lround(s);
    char b[32];
    if (t < 60) std::snprintf(b, sizeof b, "%lds", t);
    else if (t < 3600) std::snprintf(b, sizeof b, "%ldm%02lds", t / 60, t % 60);
    else std::snprintf(b, sizeof b, "%ldh%02ldm", t / 3600, (t / 60) % 60);
    return b;
}

std::string time_us(double ns) {
    return ns >= 1e6 ? fmt("%.3g ms", ns / 1e6) : fmt("%.4g us", ns / 1e3);
}

int64_t evaluations(const search::SearchState& st) {
    return st.counts.quick + st.counts.full + st.counts.invalid;
}

// Seconds left of the budget's wall and GPU limits (nullopt: neither set). Not the compile
// limit: free evaluations go on after it (search/budget.h compile_budget_spent).
std::optional<double> budget_left_s(const search::SearchOptions& o, const search::Spent& sp) {
    std::optional<double> left;
    auto take = [&](double v) { left = std::max(0.0, std::min(left.value_or(v), v)); };
    if (o.budget.wall_s) take(*o.budget.wall_s - sp.wall_s);
    if (o.budget.gpu_s && sp.gpu_s > 0 && sp.wall_s > 0)
        take((*o.budget.gpu_s - sp.gpu_s) * sp.wall_s / sp.gpu_s);
    return left;
}

// Seconds left before some limit ends the run (nullopt: none known).
std::optional<double> eta_s(const search::SearchState& st, const search::SearchOptions& o,
                            const search::Spent& sp) {
    std::optional<double> eta = budget_left_s(o, sp);
    if (o.stop.max_rounds && st.progress.rounds > 0 && sp.wall_s > 0) {
        const double v = (*o.stop.max_rounds - st.progress.rounds) * sp.wall_s / st.progress.rounds;
        eta = std::max(0.0, std::min(eta.value_or(v), v));
    }
    return eta;
}

// "wall 12/600s gpu 3/60s" and the like: the budget used of each of its limits, short ("": none).
std::string budget_used_text(const search::SearchOptions& o, const search::Spent& sp) {
    std::string t;
    auto add = [&](const std::string& part) { t += (t.empty() ? "" : " ") + part; };
    if (o.budget.wall_s) add("wall " + fmt("%.0f", sp.wall_s) + "/" + fmt("%.0f", *o.budget.wall_s) + "s");
    if (o.budget.gpu_s) add("gpu " + fmt("%.0f", sp.gpu_s) + "/" + fmt("%.0f", *o.budget.gpu_s) + "s");
    if (o.budget.compiles)
        add("compiles " + std::to_string(sp.compiles) + "/" + std::to_string(*o.budget.compiles));
    return t;
}

// The budget used, and the round of a round limit.
std::string used_text(const search::SearchState& st, const search::SearchOptions& o,
                      const search::Spent& sp) {
    std::string t = budget_used_text(o, sp);
    if (o.stop.max_rounds)
        t += (t.empty() ? "" : " ") + std::string("round ") + std::to_string(st.progress.rounds) +
             "/" + std::to_string(*o.stop.max_rounds);
    return t.empty() ? "no limit" : t;
}

// `name`, then each of `fields` (most important first) that still fits in `width` columns less
// the last: the name may shrink to 12 characters (ending in ~) before any field is dropped; then
// each of `extras` that fits (dropped before the name shrinks).
std::string fit_status(std::string name, const std::vector<std::string>& fields, int width,
                       const std::vector<std::string>& extras = {}) {
    const std::string sep = " | ";
    size_t need = name.size();
    for (const auto& f : fields) need += sep.size() + f.size();
    const size_t w = static_cast<size_t>(std::max(width, 20)) - 1;  // the last column stays free
    if (need > w && name.size() > 12) {
        const long keep = static_cast<long>(name.size()) - static_cast<long>(need - w) - 1;
        name = name.substr(0, static_cast<size_t>(std::max(11L, keep))) + "~";
    }
    std::string out = name.substr(0, w);
    for (const auto* list : {&fields, &extras}) {
        for (const auto& f : *list) {
            if (out.size() + sep.size() + f.size() > w) continue;  // a shorter later one may fit
            out += sep + f;
        }
    }
    return out;
}

// The suite's figures: evaluations of every problem, the best speedup of any, simulated.
struct SuiteFigures {
    int64_t evaluations = 0;
    std::optional<double> best_speedup;
    bool simulated = false;
};

SuiteFigures suite_figures(const search::SuiteProgress& p) {
    SuiteFigures f;
    if (!p.states) return f;
    for (const search::SearchState& st : *p.states) {
        f.evaluations += evaluations(st);
        f.simulated = f.simulated || st.simulated;
        auto best = search::best_time_ns(st);
        auto start = search::start_time_ns(st);
        if (best && start) f.best_speedup = std::max(f.best_speedup.value_or(0.0), *start / *best);
    }
    return f;
}

}  // namespace

std::optional<ProgressMode> progress_mode_from_string(const std::string& s, std::FILE* out) {
    if (s == "auto") return isatty(fileno(out)) ? ProgressMode::kTty : ProgressMode::kPlain;
    if (s == "tty") return ProgressMode::kTty;
    if (s == "plain") return ProgressMode::kPlain;
    if (s == "json") return ProgressMode::kJson;
    if (s == "none") return ProgressMode::kNone;
    return std::nullopt;
}

std::optional<ProgressMode> progress_mode_flag(const char* cmd, const std::string& s,
                                               std::FILE* out) {
    auto mode = progress_mode_from_string(s, out);
    if (!mode)
        std::fprintf(stderr, "kforge %s: --progress must be auto, tty, plain, json or none, not '%s'\n",
                     cmd, s.c_str());
    return mode;
}

std::string budget_text(const search::SearchOptions& o) {
    std::string t;
    auto add = [&](const std::string& part) { t += (t.empty() ? "" : ", ") + part; };
    if (o.budget.wall_s) add("wall " + fmt("%g", *o.budget.wall_s) + " s");
    if (o.budget.gpu_s) add("gpu " + fmt("%g", *o.budget.gpu_s) + " s");
    if (o.budget.compiles) add("compiles " + std::to_string(*o.budget.compiles));
    if (o.stop.max_rounds) add("rounds " + std::to_string(*o.stop.max_rounds));
    if (o.stop.patience_rounds) add("patience " + std::to_string(*o.stop.patience_rounds) + " rounds");
    if (o.stop.within_sol_percent) add("within " + fmt("%g", *o.stop.within_sol_percent) + "% of SOL");
    return t.empty() ? "unlimited" : t;
}

std::string status_line(const search::SearchState& st, const search::SearchOptions& o,
                        const search::Spent& spent, int width, const std::string& heartbeat) {
    search::Spent sp = spent;
    search::tick(sp);
    auto best = search::best_time_ns(st);
    auto start = search::start_time_ns(st);
    // fields, most important first; each kept only while the line fits
    std::vector<std::string> fields;
    fields.push_back("best " + (best ? time_us(*best) : std::string("-")));
    if (best) {
        const SolShare share = sol_share(*best * 1e-9, st.bounds.time_fused_s);
        fields.push_back(fmt("%.1f%% SOL", sol_percent(share)) + (share.under_bound ? "!" : ""));
    }
    if (best && start) fields.push_back(fmt("%.2fx", *start / *best));
    fields.push_back(std::to_string(evaluations(st)) + " evals");
    // compiles apart from evaluations (a launch-knob variant is one without a compile); with a
    // compile budget the budget's field says them
    if (!o.budget.compiles) fields.push_back(std::to_string(st.counts.compiles) + " compiles");
    fields.push_back(used_text(st, o, sp));
    if (!heartbeat.empty()) {
        fields.push_back(heartbeat);
    } else if (auto eta = eta_s(st, o, sp)) {
        fields.push_back("ETA " + duration(*eta));
    }
    if (st.simulated) fields.push_back("(sim)");
    // the round, unless the round limit's field says it
    return fit_status(st.problem.name + (o.stop.max_rounds
                                             ? ""
                                             : " [" + std::to_string(st.progress.rounds) + "]"),
                      fields, width);
}

std::string suite_status_line(const search::SuiteProgress& p, const search::SearchOptions& o,
                              int width, const std::string& heartbeat) {
    search::Spent sp = p.spent ? *p.spent : search::Spent{};
    search::tick(sp);
    const SuiteFigures f = suite_figures(p);
    const size_t problems = p.states ? p.states->size() : 0;
    // the fields kept while the problem's name shrinks, then those that go before it does
    std::vector<std::string> fields, extras;
    fields.push_back(std::to_string(p.done) + "/" + std::to_string(problems) + " done");
    if (f.best_speedup) fields.push_back("best " + fmt("%.2fx", *f.best_speedup));
    const std::string used = budget_used_text(o, sp);
    fields.push_back(used.empty() ? "no limit" : used);
    if (!heartbeat.empty()) {
        fields.push_back(heartbeat);
    } else if (auto left = budget_left_s(o, sp)) {
        fields.push_back(duration(*left) + " left");
    }
    extras.push_back(std::to_string(f.evaluations) + " evals");
    if (!o.budget.compiles) extras.push_back(std::to_string(sp.compiles) + " compiles");
    if (f.simulated) extras.push_back("(sim)");
    // the problem a round is given to, with its rounds so far (as optimize's); else the phase
    std::string name = "suite";
    if (p.current && p.states && *p.current < problems) {
        const search::SearchState& st = (*p.states)[*p.current];
        name = st.problem.name + " [" + std::to_string(st.progress.rounds) + "]";
    } else if (!p.finished && f.evaluations == 0) {
        name = "suite: starts";
    }
    return fit_status(name, fields, width, extras);
}

void ProgressPrinter::line(const std::string& text, std::FILE* err) {
    std::lock_guard lock(mu_);
    if (mode_ == ProgressMode::kNone) return;
    if (mode_ == ProgressMode::kJson) {
        std::fprintf(out_, "%s\n",
                     nlohmann::ordered_json{{"event", err ? "note" : "log"}, {"text", text}}
                         .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                         .c_str());
        std::fflush(out_);
        return;
    }
    std::FILE* to = err ? err : out_;
    if (mode_ == ProgressMode::kTty && !status_.empty()) {
        std::fprintf(out_, "\r\033[K");
        std::fflush(out_);
    }
    std::fprintf(to, "%s\n", text.c_str());
    std::fflush(to);
    if (mode_ == ProgressMode::kTty && !status_.empty()) draw_locked();
}

void ProgressPrinter::json(const nlohmann::ordered_json& object) {
    std::lock_guard lock(mu_);
    if (mode_ != ProgressMode::kJson) return;
    std::fprintf(out_, "%s\n",
                 object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    std::fflush(out_);
}

int ProgressPrinter::width() const {
    struct winsize ws {};
    if (ioctl(fileno(out_), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    if (const char* c = std::getenv("COLUMNS"); c && std::atoi(c) > 0) return std::atoi(c);
    return 80;
}

void ProgressPrinter::draw_locked() {
    if (suite_) {
        status_ = suite_status_line(*suite_, *options_, width(), heartbeat_);
    } else {
        if (!state_) return;
        status_ = status_line(*state_, *options_, *spent_, width(), heartbeat_);
    }
    std::fprintf(out_, "\r\033[K%s", status_.c_str());
    std::fflush(out_);
}

void ProgressPrinter::event(const search::ProgressEvent& e, const search::SearchOptions& o) {
    using Kind = search::ProgressEvent::Kind;
    std::lock_guard lock(mu_);
    if (mode_ == ProgressMode::kNone) return;
    if (e.state) {
        state_ = e.state;
        spent_ = e.spent;
        options_ = &o;
    }
    if (mode_ == ProgressMode::kJson) {
        nlohmann::ordered_json j;
        const search::SearchState* st = e.state ? e.state : state_;
        auto best = st ? search::best_time_ns(*st) : std::nullopt;
        switch (e.kind) {
            case Kind::kEvaluation:
                j = {{"event", "evaluation"},
                     {"candidate", e.hash.substr(0, 16)},
                     {"tier", std::string(to_string(e.tier))},
                     {"status", std::string(to_string(e.status))},
                     {"time_ns", e.median_ns ? nlohmann::ordered_json(*e.median_ns) : nullptr},
                     {"cached", e.cached}};
                break;
            case Kind::kRound:
                j = {{"event", "round"}, {"round", st ? st->progress.rounds : 0}};
                break;
            case Kind::kHeartbeat:
                j = {{"event", "heartbeat"}, {"text", e.text}, {"elapsed_s", e.elapsed_s}};
                break;
        }
        if (st && e.kind != Kind::kHeartbeat) {
            search::Spent sp = *(e.spent ? e.spent : spent_);
            search::tick(sp);
            j["run"] = st->run_id;
            j["best_ns"] = best ? nlohmann::ordered_json(*best) : nullptr;
            j["sol_percent"] =
                best ? nlohmann::ordered_json(
                           sol_percent(sol_share(*best * 1e-9, st->bounds.time_fused_s)))
                     : nullptr;
            auto start = search::start_time_ns(*st);
            j["speedup"] = best && start ? nlohmann::ordered_json(*start / *best) : nullptr;
            j["evaluations"] = evaluations(*st);
            j["wall_s"] = sp.wall_s;
            j["budget_used"] = used_text(*st, o, sp);
            auto eta = eta_s(*st, o, sp);
            j["eta_s"] = eta ? nlohmann::ordered_json(*eta) : nullptr;
        }
        std::fprintf(out_, "%s\n",
                     j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        std::fflush(out_);
        return;
    }
    if (e.kind == Kind::kHeartbeat) {
        heartbeat_ = e.text + ", " + duration(e.elapsed_s);
        if (mode_ == ProgressMode::kTty) {
            draw_locked();
        } else {
            std::fprintf(out_, "... %s\n", heartbeat_.c_str());
            std::fflush(out_);
        }
        return;
    }
    heartbeat_.clear();
    if (mode_ == ProgressMode::kTty) {
        draw_locked();
        // a round's line stays (the history above); the next draw starts a new status line
        if (e.kind == Kind::kRound) std::fprintf(out_, "\n");
    } else if (e.kind == Kind::kRound && e.state) {
        // plain: one whole status line per round (a log can read it; no \r)
        std::fprintf(out_, "%s\n", status_line(*e.state, o, *e.spent, 1000).c_str());
        std::fflush(out_);
    }
}

void ProgressPrinter::suite(const search::SuiteProgress& p, const search::SearchOptions& o) {
    std::unique_lock lock(mu_);
    if (mode_ == ProgressMode::kNone) return;
    suite_ = p;
    options_ = &o;
    if (mode_ == ProgressMode::kJson) {
        search::Spent sp = p.spent ? *p.spent : search::Spent{};
        search::tick(sp);
        const SuiteFigures f = suite_figures(p);
        const auto left = budget_left_s(o, sp);
        nlohmann::ordered_json j{
            {"event", "suite"},
            {"problem", p.current && p.states ? nlohmann::ordered_json(
                                                    (*p.states)[*p.current].problem.name)
                                              : nullptr},
            {"done", p.done},
            {"problems", p.states ? p.states->size() : 0},
            {"best_speedup", f.best_speedup ? nlohmann::ordered_json(*f.best_speedup) : nullptr},
            {"evaluations", f.evaluations},
            {"wall_s", sp.wall_s},
            {"budget_used", budget_used_text(o, sp)},
            {"left_s", left ? nlohmann::ordered_json(*left) : nullptr},
            {"finished", p.finished}};
        std::fprintf(out_, "%s\n",
                     j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
        std::fflush(out_);
        if (p.finished) suite_.reset();
        return;
    }
    if (mode_ == ProgressMode::kPlain) {
        // whole lines: before and after the starts, after each round, and the last
        if (!p.current) {
            std::fprintf(out_, "%s\n", suite_status_line(p, o, 1000).c_str());
            std::fflush(out_);
        }
        if (p.finished) suite_.reset();
        return;
    }
    heartbeat_.clear();
    draw_locked();
    if (p.finished) {
        lock.unlock();
        finish();
    }
}

void ProgressPrinter::finish() {
    std::lock_guard lock(mu_);
    if (mode_ == ProgressMode::kTty && !status_.empty()) {
        std::fprintf(out_, "\r\033[K%s\n", status_.c_str());
        std::fflush(out_);
    }
    status_.clear();
    state_ = nullptr;
    suite_.reset();
}

}  // namespace kforge::cli
