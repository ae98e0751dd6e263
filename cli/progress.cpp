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

// Seconds left before some limit ends the run (nullopt: none known).
std::optional<double> eta_s(const search::SearchState& st, const search::SearchOptions& o,
                            const search::Spent& sp) {
    std::optional<double> eta;
    auto take = [&](double v) { eta = std::max(0.0, std::min(eta.value_or(v), v)); };
    if (o.budget.wall_s) take(*o.budget.wall_s - sp.wall_s);
    if (o.budget.gpu_s && sp.gpu_s > 0 && sp.wall_s > 0)
        take((*o.budget.gpu_s - sp.gpu_s) * sp.wall_s / sp.gpu_s);
    if (o.stop.max_rounds && st.progress.rounds > 0 && sp.wall_s > 0)
        take((*o.stop.max_rounds - st.progress.rounds) * sp.wall_s / st.progress.rounds);
    if (o.budget.compiles && sp.compiles > 0 && sp.wall_s > 0)
        take(static_cast<double>(*o.budget.compiles - sp.compiles) * sp.wall_s /
             static_cast<double>(sp.compiles));
    return eta;
}

// "wall 12/600s" and the like: the budget used of each limit, short.
std::string used_text(const search::SearchState& st, const search::SearchOptions& o,
                      const search::Spent& sp) {
    std::string t;
    auto add = [&](const std::string& part) { t += (t.empty() ? "" : " ") + part; };
    if (o.budget.wall_s) add("wall " + fmt("%.0f", sp.wall_s) + "/" + fmt("%.0f", *o.budget.wall_s) + "s");
    if (o.budget.gpu_s) add("gpu " + fmt("%.0f", sp.gpu_s) + "/" + fmt("%.0f", *o.budget.gpu_s) + "s");
    if (o.budget.compiles)
        add("compiles " + std::to_string(sp.compiles) + "/" + std::to_string(*o.budget.compiles));
    if (o.stop.max_rounds)
        add("round " + std::to_string(st.progress.rounds) + "/" + std::to_string(*o.stop.max_rounds));
    return t.empty() ? "no limit" : t;
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
    fields.push_back(used_text(st, o, sp));
    if (!heartbeat.empty()) {
        fields.push_back(heartbeat);
    } else if (auto eta = eta_s(st, o, sp)) {
        fields.push_back("ETA " + duration(*eta));
    }
    if (st.simulated) fields.push_back("(sim)");
    const std::string sep = " | ";
    // the round, unless the round limit's field says it
    std::string name = st.problem.name +
                       (o.stop.max_rounds ? "" : " [" + std::to_string(st.progress.rounds) + "]");
    // the name may shrink to 12 characters (ending in ~) before any field is dropped
    size_t need = name.size();
    for (const auto& f : fields) need += sep.size() + f.size();
    const size_t w = static_cast<size_t>(std::max(width, 20)) - 1;  // the last column stays free
    if (need > w && name.size() > 12) {
        const long keep = static_cast<long>(name.size()) - static_cast<long>(need - w) - 1;
        name = name.substr(0, static_cast<size_t>(std::max(11L, keep))) + "~";
    }
    std::string out = name.substr(0, w);
    for (const auto& f : fields) {
        if (out.size() + sep.size() + f.size() > w) continue;  // a shorter later field may fit
        out += sep + f;
    }
    return out;
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
    if (!state_) return;
    status_ = status_line(*state_, *options_, *spent_, width(), heartbeat_);
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

void ProgressPrinter::finish() {
    std::lock_guard lock(mu_);
    if (mode_ == ProgressMode::kTty && !status_.empty()) {
        std::fprintf(out_, "\r\033[K%s\n", status_.c_str());
        std::fflush(out_);
    }
    status_.clear();
    state_ = nullptr;
}

}  // namespace kforge::cli
