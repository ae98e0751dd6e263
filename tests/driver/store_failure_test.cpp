// `kforge optimize` against a store that fails: a dropped table, a write refused mid-run (a
// trigger), a full disk (RLIMIT_FSIZE in the child, SIGXFSZ ignored, so writes fail with EFBIG
// as they would with ENOSPC) and a damaged file. Each run must stop with a non-zero exit and a
// message naming the store and the failure, and every evaluation committed before it must be in
// the store whole (its measurements are the samples its evidence lists).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

struct CliRun {
    int exit_code = -1;  // -1: killed by a signal
    int signal = 0;
    std::string output;  // stdout and stderr
};

// Runs the kforge binary with `args`; `fsize_limit` > 0 caps every file it writes (bytes).
CliRun run_kforge(const std::vector<std::string>& args, const fs::path& out_file,
                  rlim_t fsize_limit = 0) {
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fsize_limit > 0) {
            signal(SIGXFSZ, SIG_IGN);  // inherited through exec: writes fail with EFBIG
            rlimit lim{fsize_limit, fsize_limit};
            setrlimit(RLIMIT_FSIZE, &lim);
        }
        std::vector<std::string> all{KFORGE_CLI_PATH};
        all.insert(all.end(), args.begin(), args.end());
        std::vector<char*> argv;
        for (auto& a : all) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
    }
    CliRun r;
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    std::ifstream in(out_file);
    std::stringstream s;
    s << in.rdbuf();
    r.output = s.str();
    return r;
}

struct Stored {
    int evaluations = 0;
    int whole = 0;  // evaluations whose candidate measurements match their evidence's samples
};

// Opens the store (quick_check included) and counts its evaluations and the whole ones.
Stored stored(const std::string& db) {
    Stored s;
    auto store = open_store(db);
    EXPECT_TRUE(store.ok()) << store.error().to_string();
    if (!store) return s;
    auto q = store->db().prepare(
        "SELECT e.evidence_json, (SELECT count(*) FROM measurements m WHERE m.evaluation_id = "
        "e.id AND m.label = 'candidate') FROM evaluations e");
    EXPECT_TRUE(q.ok());
    if (!q) return s;
    while (true) {
        auto row = q->step();
        if (!row || !*row) break;
        ++s.evaluations;
        auto evidence = nlohmann::json::parse(q->column_text(0), nullptr, false);
        size_t samples = evidence.is_object() && evidence.contains("samples") &&
                                 evidence["samples"].is_array()
                             ? evidence["samples"].size()
                             : 0;
        if (static_cast<int64_t>(samples) == q->column_int(1)) ++s.whole;
    }
    return s;
}

class StoreFailure : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("kforge_store_failure_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/problems/bias_gelu_mul_f32.json");
        std::stringstream text;
        text << in.rdbuf();
        auto j = nlohmann::json::parse(text.str());
        j["dims"] = {{"R", 256}, {"C", 1024}};  // a cheap fp64 reference
        spec_ = (dir_ / "bias_gelu_mul_f32.json").string();
        std::ofstream(spec_) << j.dump(2);
        std::ofstream(dir_ / "bias_gelu_mul_f32.kf")
            << "program p for \"bias_gelu_mul_f32\"\nkernel k0 = map(X[R,C]) block 64 vec 1 "
               "items 1\n    { add b[C]; gelu erf; mul G[R,C]; store Y[R,C] }\n";
        db_ = (dir_ / "kforge.db").string();
    }
    void TearDown() override {
        if (!HasFailure()) fs::remove_all(dir_);
    }
    // A fresh store at db_ changed by `sql`.
    void prepare_store(const std::string& sql) {
        auto s = open_store(db_);
        ASSERT_TRUE(s.ok()) << s.error().to_string();
        ASSERT_TRUE(s->db().exec(sql).ok());
    }
    CliRun optimize(int rounds, rlim_t fsize_limit = 0) {
        return run_kforge({"optimize", spec_, "--device", "sim", "--rounds",
                           std::to_string(rounds), "--profile-top", "0", "--db", db_, "--out",
                           (dir_ / "out").string()},
                          dir_ / "output.txt", fsize_limit);
    }
    fs::path dir_;
    std::string spec_;
    std::string db_;
};

// The issue's case: the measurements table dropped, optimize exited 0 having stored nothing.
TEST_F(StoreFailure, ADroppedTableStopsTheRunWithTheStoreNamed) {
    prepare_store("DROP TABLE measurements");
    CliRun r = optimize(2);
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find(db_), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("no such table"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("the run stops here"), std::string::npos) << r.output;
}

// A write refused after two evaluations: the run stops there, the two stay whole.
TEST_F(StoreFailure, AFailedWriteMidRunStopsItAndKeepsWhatWasCommitted) {
    prepare_store("CREATE TRIGGER refuse_third BEFORE INSERT ON evaluations "
                  "WHEN (SELECT count(*) FROM evaluations) >= 2 "
                  "BEGIN SELECT RAISE(ABORT, 'injected write failure'); END");
    CliRun r = optimize(20);
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find("injected write failure"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(db_), std::string::npos) << r.output;
    Stored s = stored(db_);
    EXPECT_EQ(s.evaluations, 2);
    EXPECT_EQ(s.whole, 2);
}

// The quick and full timings the run's last progress line counts ("quick N, full M"): each is a
// finished evaluation the store must hold.
std::pair<int, int> progress_counts(const std::string& output) {
    std::pair<int, int> counts{0, 0};
    std::istringstream lines(output);
    std::string line;
    while (std::getline(lines, line)) {
        auto q = line.find(", quick "), f = line.find(", full ");
        if (q == std::string::npos || f == std::string::npos) continue;
        counts = {std::atoi(line.c_str() + q + 8), std::atoi(line.c_str() + f + 7)};
    }
    return counts;
}

// Stored passed evaluations at `tier`.
int stored_passed(const std::string& db, const char* tier) {
    auto store = open_store(db);
    if (!store) return -1;
    auto n = store->db().query_text(std::string("SELECT count(*) FROM evaluations WHERE status = "
                                                "'passed' AND tier = '") + tier + "'");
    return n ? std::stoi(*n) : -1;
}

// A full disk, at several points of the run (files capped at growing sizes): a run that hits it
// stops with exit 3 naming the store; the store passes quick_check afterwards, every evaluation
// in it is whole, and every timing the run reported finished is in it. At least one cap must
// fall on an evaluation's write, after evaluations were stored.
TEST_F(StoreFailure, AFullDiskStopsTheRunCleanlyWithNothingFinishedLost) {
    int stopped_at_evaluation = 0;
    for (rlim_t cap : {rlim_t{160} << 10, rlim_t{256} << 10, rlim_t{512} << 10,
                       rlim_t{1} << 20, rlim_t{2} << 20}) {
        fs::remove(db_);
        fs::remove(db_ + "-wal");
        fs::remove(db_ + "-shm");
        prepare_store("SELECT 1");  // the schema, before the cap
        CliRun r = optimize(20, cap);
        SCOPED_TRACE("file size cap " + std::to_string(cap) + " bytes:\n" + r.output);
        EXPECT_EQ(r.signal, 0);
        Stored s = stored(db_);
        EXPECT_EQ(s.whole, s.evaluations);
        auto [quick, full] = progress_counts(r.output);
        EXPECT_GE(stored_passed(db_, "quick"), quick);
        EXPECT_GE(stored_passed(db_, "full"), full);
        if (r.exit_code == 0) continue;  // the run fitted under this cap
        EXPECT_EQ(r.exit_code, 3);
        EXPECT_NE(r.output.find(db_), std::string::npos);
        bool disk = r.output.find("disk is full") != std::string::npos ||
                    r.output.find("disk I/O error") != std::string::npos;
        EXPECT_TRUE(disk);
        if (disk && s.evaluations > 0 &&
            r.output.find("the store failed to record") != std::string::npos)
            ++stopped_at_evaluation;
    }
    EXPECT_GT(stopped_at_evaluation, 0);
}

// Overwrites the b-tree page header of pages [first, last] of the store at `path` (1-based,
// 4 KiB pages, never page 1) with a page type no page may have.
void damage_pages(const std::string& path, int64_t first, int64_t last) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    for (int64_t page = first; page <= last; ++page) {
        f.seekp(static_cast<std::streamoff>((page - 1) * 4096));
        f.write("\x0d\xff\xff\xff\xff\xff\xff\xff", 8);
    }
}

// A damaged file is refused at open, before anything is written, with the way to recover it:
// one table damaged (the first read passes; only quick_check finds it), and every page past the
// first (the first read fails already).
TEST_F(StoreFailure, ADamagedStoreIsReportedAtOpenWithTheRecoveryPath) {
    {
        CliRun r = optimize(2);
        ASSERT_EQ(r.exit_code, 0) << r.output;
    }
    int64_t root = 0;
    {
        auto s = open_store(db_);
        ASSERT_TRUE(s.ok()) << s.error().to_string();
        auto page = s->db().query_text("SELECT rootpage FROM sqlite_schema "
                                       "WHERE name = 'measurements'");
        ASSERT_TRUE(page.ok());
        root = std::stoll(*page);
    }
    ASSERT_GT(root, 1);
    const std::string pristine = (dir_ / "pristine.db").string();
    fs::copy_file(db_, pristine);
    const int64_t pages = static_cast<int64_t>(fs::file_size(pristine) / 4096);
    for (auto [first, last, finder] :
         {std::tuple<int64_t, int64_t, const char*>{root, root, "quick_check"},
          std::tuple<int64_t, int64_t, const char*>{2, pages, "malformed"}}) {
        SCOPED_TRACE("damaged pages " + std::to_string(first) + ".." + std::to_string(last));
        fs::copy_file(pristine, db_, fs::copy_options::overwrite_existing);
        damage_pages(db_, first, last);
        auto before = fs::last_write_time(db_);
        CliRun r = optimize(2);
        EXPECT_NE(r.exit_code, 0) << r.output;
        EXPECT_NE(r.output.find(finder), std::string::npos) << r.output;
        EXPECT_NE(r.output.find(".recover"), std::string::npos) << r.output;
        EXPECT_NE(r.output.find(db_), std::string::npos) << r.output;
        EXPECT_EQ(fs::last_write_time(db_), before);
        EXPECT_FALSE(open_store(db_).ok());
    }
}

}  // namespace
}  // namespace kforge
