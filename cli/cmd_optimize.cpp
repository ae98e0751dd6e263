// `kforge optimize SPEC [--program START.kf] [--budget-wall S] [--budget-gpu S]
// [--budget-compiles N] [--rounds N] [--patience N] [--within-sol PCT] [--device sim|cuda|auto]
// [--db PATH] [--resume RUN] [--seed N] [--out DIR] [--proposers a,b]`: the budget-aware search
// of search/loop.h on one problem. Exit 0 a candidate passed, 1 none did, 2 user error, 3 env.
#include "cli/cmd_optimize.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "problem/spec.h"
#include "search/proposers.h"
#include "store/store.h"

namespace kforge::cli {

void add_optimize_options(CLI::App* cmd, OptimizeArgs& a) {
    cmd->add_option("--program", a.program, "start program (default: SPEC's .kf beside it)");
    cmd->add_option("--budget-wall", a.budget_wall_s, "wall-clock budget, seconds");
    cmd->add_option("--budget-gpu", a.budget_gpu_s, "evaluation-time budget, seconds");
    cmd->add_option("--budget-compiles", a.budget_compiles, "compilation budget");
    cmd->add_option("--rounds", a.max_rounds, "round limit");
    cmd->add_option("--patience", a.patience, "stop after N rounds without improvement");
    cmd->add_option("--within-sol", a.within_sol_percent, "stop within PCT % of SOL");
    cmd->add_option("--device", a.device, "sim, cuda or auto (default)");
    cmd->add_option("--sim-model", a.sim_model, "device table entry the simulator models");
    cmd->add_option("--db", a.db, "store (default kforge.db)");
    cmd->add_option("--seed", a.seed, "search seed (default 1)");
    cmd->add_option("--out", a.out, "folder for best.kf, best.cu, plan.json, evidence.json");
    cmd->add_option("--proposers", a.proposers, "parameter, diagnosis, random")->delimiter(',');
    cmd->add_option("--promote-ratio", a.promote_ratio, "fraction promoted at each cut (1/3)");
    cmd->add_option("--per-round", a.per_round, "proposals asked of each proposer per round");
}

std::unique_ptr<eval::Device> open_device(const OptimizeArgs& a, const char* cmd, int& rc) {
    rc = kExitOk;
    if (a.device != "auto" && a.device != "cuda" && a.device != "sim") {
        std::fprintf(stderr, "kforge %s: --device must be cuda, sim or auto\n", cmd);
        rc = kExitUserError;
        return nullptr;
    }
    if (a.device != "sim") {
        auto cuda = eval::make_cuda_device(0);
        if (cuda) return std::move(*cuda);
        if (a.device == "cuda") {
            std::fprintf(stderr, "kforge %s: no usable GPU: %s\n", cmd, cuda.error().to_string().c_str());
            rc = kExitEnvironment;
            return nullptr;
        }
        std::fprintf(stderr, "kforge %s: *** no usable GPU (%s): using the SIMULATED device; times "
                             "are model estimates, not measurements ***\n", cmd, cuda.error().message.c_str());
    }
    auto sim = eval::make_sim_device(a.sim_model);
    if (!sim) {
        std::fprintf(stderr, "kforge %s: %s\n", cmd, sim.error().to_string().c_str());
        rc = kExitUserError;
        return nullptr;
    }
    return std::move(*sim);
}

search::SearchOptions search_options(const OptimizeArgs& a, const char*) {
    search::SearchOptions o;
    o.budget.wall_s = a.budget_wall_s;
    o.budget.gpu_s = a.budget_gpu_s;
    o.budget.compiles = a.budget_compiles;
    o.stop.max_rounds = a.max_rounds;
    o.stop.patience_rounds = a.patience;
    o.stop.within_sol_percent = a.within_sol_percent;
    o.seed = a.seed;
    o.proposers = a.proposers;
    o.promote_ratio = a.promote_ratio;
    o.proposals_per_round = a.per_round;
    if (const char* e = std::getenv("KFORGE_CACHE_DIR"); e && *e) o.compile_cache_dir = e;
    bool tty = isatty(fileno(stdout));
    o.log = [tty](const std::string& line) {
        if (tty) std::printf("\r\033[K%s", line.c_str());
        else std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    };
    return o;
}

std::vector<std::unique_ptr<search::Proposer>> make_proposers(const OptimizeArgs& a, const char* cmd) {
    std::vector<std::unique_ptr<search::Proposer>> out;
    for (const std::string& n : a.proposers) {
        auto p = search::make_builtin_proposer(n);
        if (!p) {
            std::fprintf(stderr, "kforge %s: unknown proposer '%s' (parameter, diagnosis, random)\n",
                         cmd, n.c_str());
            return {};
        }
        out.push_back(std::move(p));
    }
    return out;
}

std::optional<std::string> start_program(const std::string& spec, const std::string& program) {
    std::string path = program;
    if (path.empty()) {
        path = spec;
        if (path.size() > 5 && path.substr(path.size() - 5) == ".json") path.resize(path.size() - 5);
        path += ".kf";
    }
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

namespace {

int run_optimize(const OptimizeArgs& a) {
    const char* cmd = "optimize";
    if (a.proposers.empty() || a.promote_ratio <= 0 || a.promote_ratio > 1) {
        std::fprintf(stderr, "kforge optimize: --promote-ratio must be in (0, 1] and a proposer given\n");
        return kExitUserError;
    }
    auto proposers = make_proposers(a, cmd);
    if (proposers.empty()) return kExitUserError;
    int rc = 0;
    auto device = open_device(a, cmd, rc);
    if (!device) return rc;
    auto store = open_store(a.db);
    if (!store) {
        std::fprintf(stderr, "kforge optimize: %s\n", store.error().to_string().c_str());
        return kExitUserError;
    }
    search::SearchOptions options = search_options(a, cmd);
    Expected<search::SearchState> state = make_error("", "");
    if (a.resume) {
        state = search::resume_search(*device, *store, *a.resume);
    } else {
        auto problem = load_problem(a.spec);
        if (!problem) {
            std::fprintf(stderr, "kforge optimize: %s\n", problem.error().to_string().c_str());
            return kExitUserError;
        }
        auto text = start_program(a.spec, a.program);
        if (!text) {
            std::fprintf(stderr, "kforge optimize: no start program: pass --program START.kf (no "
                                 "%s beside the spec)\n", a.program.empty() ? ".kf" : a.program.c_str());
            return kExitUserError;
        }
        state = search::start_search(*device, *store, *problem, *text, options);
    }
    if (!state) {
        std::fprintf(stderr, "kforge optimize: %s\n", state.error().to_string().c_str());
        return kExitUserError;
    }
    std::printf("run %lld on %s%s\n", (long long)state->run_id, state->device_name.c_str(),
                state->simulated ? " (simulated)" : "");
    std::vector<search::Proposer*> ps;
    for (auto& p : proposers) ps.push_back(p.get());
    search::Spent spent;
    if (auto s = search::run_search(*state, *device, *store, ps, options, spent); !s) {
        std::fprintf(stderr, "\nkforge optimize: %s\n", s.error().to_string().c_str());
        return kExitUserError;
    }
    if (isatty(fileno(stdout))) std::printf("\n");
    (void)store->finish_run(state->run_id, RunStatus::kFinished);
    auto summary = search::write_outputs(*state, *store, a.out);
    if (!summary) {
        std::fprintf(stderr, "kforge optimize: %s\n", summary.error().to_string().c_str());
        return kExitUserError;
    }
    std::printf("%s", summary->c_str());
    return search::best_hash(*state) ? kExitOk : kExitFailure;
}

}  // namespace

void register_optimize(CLI::App& app) {
    auto args = std::make_shared<OptimizeArgs>();
    auto* cmd = app.add_subcommand("optimize", "search for the fastest correct program of a problem");
    cmd->add_option("spec", args->spec, "problem spec (JSON); not needed with --resume");
    cmd->add_option("--resume", args->resume, "continue run RUN from the store");
    add_optimize_options(cmd, *args);
    cmd->callback([args, cmd] {
        if (args->spec.empty() && !args->resume) {
            std::fprintf(stderr, "kforge optimize: a SPEC or --resume RUN is required\n");
            exit_code() = kExitUserError;
            return;
        }
        (void)cmd;
        exit_code() = run_optimize(*args);
    });
}

}  // namespace kforge::cli
