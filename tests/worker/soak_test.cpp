// Soak on the simulated device: evaluations through a real `kforge worker` process under the
// Supervisor into a real SQLite store, while
//   - the worker is SIGKILLed mid-evaluation at random (a thread armed for each evaluation,
//     firing after a random delay unless the evaluation ended first),
//   - the compiler dies at random: each evaluation's lowered CUDA is compiled by compile_cuda
//     (the compile path the simulated device skips) with a stand-in nvcc that SIGKILLs itself
//     when told to; a killed compile must fail, and compiling it again must succeed (a kill is
//     never cached),
//   - the store is closed and reopened at random points of the run.
// Afterwards the store is reopened once more and every evaluation reported finished (an
// evaluation id in its report) must be in it with its status and all its measurements:
// results lost must be 0. 1,000 evaluations (about a minute on 2 cores; KFORGE_SOAK_EVALUATIONS
// sets another count). Counts are printed as one SOAK line.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "compile/compile.h"
#include "eval/evaluator.h"
#include "problem/spec.h"
#include "store/store.h"
#include "worker/supervised_evaluator.h"

namespace kforge::eval {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The pid of a `kforge` child of this process (the worker), or 0.
pid_t worker_pid() {
    for (const auto& e : fs::directory_iterator("/proc")) {
        std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(e.path() / "stat");
        std::string line;
        if (!std::getline(stat, line)) continue;
        auto open = line.find('('), close = line.rfind(')');
        if (open == std::string::npos || close == std::string::npos) continue;
        std::istringstream rest(line.substr(close + 1));
        char state = 0;
        pid_t ppid = 0;
        rest >> state >> ppid;
        if (ppid == getpid() && state != 'Z' && line.substr(open + 1, close - open - 1) == "kforge")
            return static_cast<pid_t>(std::stoi(name));
    }
    return 0;
}

// Kills the worker `delay` after arm() unless disarm() came first.
class WorkerKiller {
public:
    WorkerKiller() : thread_([this] { loop(); }) {}
    ~WorkerKiller() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }
    void arm(std::chrono::microseconds delay) {
        std::lock_guard<std::mutex> lock(mu_);
        at_ = Clock::now() + delay;
        armed_ = true;
        cv_.notify_all();
    }
    void disarm() {
        std::lock_guard<std::mutex> lock(mu_);
        armed_ = false;
    }
    int kills() const { return kills_; }

private:
    void loop() {
        std::unique_lock<std::mutex> lock(mu_);
        while (!stop_) {
            if (!armed_) {
                cv_.wait(lock);
                continue;
            }
            if (cv_.wait_until(lock, at_) != std::cv_status::timeout || !armed_) continue;
            armed_ = false;
            if (pid_t pid = worker_pid(); pid > 0 && kill(pid, SIGKILL) == 0) ++kills_;
        }
    }
    std::mutex mu_;
    std::condition_variable cv_;
    bool armed_ = false;
    bool stop_ = false;
    Clock::time_point at_;
    std::atomic<int> kills_{0};
    std::thread thread_;
};

// A stand-in nvcc: answers --version, SIGKILLs itself (after writing part of its output) when
// `<dir>/die` exists (removing it), else writes a cubin and a ptxas line.
std::string write_fake_nvcc(const fs::path& dir) {
    fs::path script = dir / "nvcc";
    std::ofstream(script) << "#!/bin/sh\n"
                             "case \"$1\" in --version) echo 'Cuda compilation tools, release "
                             "13.0, V13.0.48 (soak stand-in)'; exit 0;; esac\n"
                             "out=''; prev=''\n"
                             "for a in \"$@\"; do [ \"$prev\" = -o ] && out=\"$a\"; prev=\"$a\"; done\n"
                             "if [ -e '" << (dir / "die").string() << "' ]; then rm -f '"
                          << (dir / "die").string()
                          << "'; printf 'FAKECU' > \"$out\"; echo 'nvcc: dying' >&2; kill -9 $$; fi\n"
                             "printf 'FAKECUBIN' > \"$out\"\n"
                             "echo 'ptxas info    : Used 32 registers, 0 bytes smem' >&2\n";
    chmod(script.c_str(), 0755);
    return script.string();
}

int soak_evaluations() {
    const char* env = std::getenv("KFORGE_SOAK_EVALUATIONS");
    return env && std::atoi(env) > 0 ? std::atoi(env) : 1000;
}

struct Finished {
    int64_t evaluation_id = 0;
    EvalStatus status = EvalStatus::kPassed;
    size_t samples = 0;
};

TEST(Soak, WorkerKillsCompilerKillsAndStoreReopensLoseNoFinishedResult) {
    const int n = soak_evaluations();
    fs::path dir = fs::temp_directory_path() / ("kforge_soak_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "cache");
    const std::string db = (dir / "kforge.db").string();

    std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/problems/bias_gelu_mul_f32.json");
    std::stringstream text;
    text << in.rdbuf();
    auto spec = nlohmann::json::parse(text.str());
    const std::string program =
        "program p for \"bias_gelu_mul_f32\"\nkernel k0 = map(X[R,C]) block 64 vec 1 items 1\n"
        "    { add b[C]; gelu erf; mul G[R,C]; store Y[R,C] }\n";

    compile::CompileOptions copts;
    copts.nvcc = write_fake_nvcc(dir);
    copts.cache_dir = (dir / "cache").string();
    copts.timeout_s = 30;

    SupervisorOptions so;
    so.worker_argv = worker_command(KFORGE_CLI_PATH, "sim", 0, "h200");
    so.log_path = (dir / "worker.log").string();
    Supervisor supervisor(so);
    SupervisedEvaluator evaluator(supervisor);
    WorkerKiller killer;

    std::mt19937 rng(20261206);
    auto chance = [&](int one_in) { return std::uniform_int_distribution<int>(1, one_in)(rng) == 1; };
    std::optional<Store> store;
    {
        auto opened = open_store(db);
        ASSERT_TRUE(opened.ok()) << opened.error().to_string();
        store.emplace(std::move(*opened));
    }
    int next_reopen = std::uniform_int_distribution<int>(20, 120)(rng);

    std::vector<Finished> finished;
    int worker_kills_armed = 0, crashed = 0, environment = 0, store_errors = 0, reopens = 0;
    int compiles = 0, compiler_kills = 0, killed_compile_ok = 0, retry_failed = 0;
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
        if (i == next_reopen) {  // close and reopen the store mid-run
            store.reset();
            auto reopened = open_store(db);
            ASSERT_TRUE(reopened.ok()) << reopened.error().to_string();
            store.emplace(std::move(*reopened));
            ++reopens;
            next_reopen = i + std::uniform_int_distribution<int>(20, 120)(rng);
        }
        spec["dims"] = {{"R", 8 + i}, {"C", 256}};  // a new shape: never a cache hit
        auto problem = parse_problem(spec.dump(), "soak");
        ASSERT_TRUE(problem.ok()) << problem.error().to_string();
        EvalRequest req;
        req.problem = *problem;
        req.program_text = program;
        req.seed = static_cast<uint64_t>(i);
        req.store = &*store;
        if (chance(12)) {
            killer.arm(std::chrono::microseconds(
                std::uniform_int_distribution<int>(0, 15000)(rng)));
            ++worker_kills_armed;
        }
        EvalReport r = evaluate(evaluator, req);
        killer.disarm();
        if (!r.store_error.empty()) ++store_errors;
        if (r.environment_error) ++environment;
        if (r.status == EvalStatus::kCrashed) ++crashed;
        if (r.evaluation_id) finished.push_back({*r.evaluation_id, r.status, r.samples.size()});
        if (r.cuda_source.empty()) continue;
        // the compile the simulated device skips, by a compiler that may die; the comment
        // makes each source new (a cache hit would not run the compiler)
        const std::string source = r.cuda_source + "\n// soak " + std::to_string(i) + "\n";
        const bool die = chance(8);
        if (die) std::ofstream(dir / "die") << "1";
        auto c = compile::compile_cuda(source, copts);
        ++compiles;
        ASSERT_TRUE(c.ok()) << c.error().to_string();
        ASSERT_FALSE(fs::exists(dir / "die")) << "the compiler did not run";
        if (!die) {
            EXPECT_EQ(c->status, compile::CompileStatus::kOk) << c->log;
            continue;
        }
        ++compiler_kills;
        if (c->status == compile::CompileStatus::kOk) ++killed_compile_ok;
        auto again = compile::compile_cuda(source, copts);
        ++compiles;
        if (!again.ok() || again->status != compile::CompileStatus::kOk) ++retry_failed;
    }
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();

    // every finished evaluation is in the store, whole
    store.reset();
    auto check = open_store(db);
    ASSERT_TRUE(check.ok()) << check.error().to_string();
    int lost = 0;
    for (const Finished& f : finished) {
        auto rec = check->get_evaluation(f.evaluation_id);
        size_t measured = 0;
        if (rec)
            for (const MeasurementRecord& m : rec->measurements) measured += m.label == "candidate";
        if (!rec || rec->status != f.status || measured != f.samples) ++lost;
    }
    auto rows = check->db().query_text("SELECT count(*) FROM evaluations");
    ASSERT_TRUE(rows.ok());
    std::printf("SOAK evaluations %d, finished %zu, stored rows %s, worker kills %d (armed %d, "
                "crashed results %d, environment errors %d), compiles %d, compiler kills %d, "
                "store reopens %d, store errors %d, results lost %d, %.1f s\n",
                n, finished.size(), rows->c_str(), killer.kills(), worker_kills_armed, crashed,
                environment, compiles, compiler_kills, reopens, store_errors, lost, secs);
    EXPECT_EQ(lost, 0);
    EXPECT_EQ(store_errors, 0);
    EXPECT_EQ(std::to_string(finished.size()), *rows);
    EXPECT_EQ(killed_compile_ok, 0);
    EXPECT_EQ(retry_failed, 0);
    EXPECT_GT(killer.kills(), 0);
    EXPECT_GT(crashed, 0);
    EXPECT_GT(compiler_kills, 0);
    EXPECT_GT(reopens, 0);
    // every evaluation either finished or ended as an environment error (a worker killed while
    // it started)
    EXPECT_EQ(static_cast<int>(finished.size()) + environment, n);
    if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace kforge::eval
