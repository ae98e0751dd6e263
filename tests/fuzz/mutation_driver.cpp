// A mutation fuzzer for libFuzzer-style targets (LLVMFuzzerTestOneInput) that builds with any
// compiler, so CI (gcc) runs every parser's fuzz target for a bounded time. It replays the seed
// corpus, then mutates it deterministically from --seed (bit flips, byte sets, cuts, inserts,
// duplicated and repeated ranges, dictionary tokens, boundary numbers, splices of two seeds)
// until --seconds or --runs. Inputs run in a forked child that reads them from a pipe:
//   - CPU limit per input: ITIMER_PROF re-armed before each input (--timeout-s, default 1 s),
//     so a loaded CI machine does not turn a slow input into a false breach; a child that makes
//     no progress for 10x the limit of wall time is killed too;
//   - memory: RLIMIT_AS of the child (--memory-mb, default 256), and a new_handler that reports
//     an allocation failure as a breach, not as a crash; the child is restarted every
//     kInputsPerChild inputs so leaks of earlier inputs do not count against later ones.
// A dying child (signal, exit, abort) is a crash. Every crash and breach is saved under
// --artifacts as crash-/timeout-/oom-<hash> (the bytes of the input) and the run fails.
// `driver FILE...` replays files under the same limits (reproducing a finding).
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;
using Bytes = std::string;

constexpr int kExitOom = 86;
constexpr int kInputsPerChild = 20000;
constexpr int kMaxSavedFindings = 20;

struct Options {
    std::string name = "fuzz";
    std::vector<fs::path> corpus_dirs;
    std::vector<fs::path> replay_files;
    fs::path dict;
    fs::path artifacts = ".";
    uint64_t seed = 1;
    double seconds = 10;
    uint64_t runs = UINT64_MAX;
    size_t max_len = 4096;
    double timeout_s = 1;
    uint64_t memory_mb = 256;
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "fuzz driver: %s\nusage: driver [--name N] [--corpus DIR]... [--dict FILE] "
                 "[--seed N] [--seconds S] [--runs N] [--max-len N] [--timeout-s S] "
                 "[--memory-mb N] [--artifacts DIR] [FILE...]\n",
                 why);
    std::exit(2);
}

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) usage(("missing value after " + a).c_str());
            return argv[++i];
        };
        if (a == "--name") o.name = next();
        else if (a == "--corpus") o.corpus_dirs.push_back(next());
        else if (a == "--dict") o.dict = next();
        else if (a == "--artifacts") o.artifacts = next();
        else if (a == "--seed") o.seed = std::stoull(next());
        else if (a == "--seconds") o.seconds = std::stod(next());
        else if (a == "--runs") o.runs = std::stoull(next());
        else if (a == "--max-len") o.max_len = std::stoull(next());
        else if (a == "--timeout-s") o.timeout_s = std::stod(next());
        else if (a == "--memory-mb") o.memory_mb = std::stoull(next());
        else if (a.rfind("--", 0) == 0) usage(("unknown option " + a).c_str());
        else o.replay_files.push_back(a);
    }
    return o;
}

Bytes read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// libFuzzer's dictionary format: one "token" per line (optionally name="token"), with \\, \"
// and \xNN escapes; # starts a comment.
std::vector<Bytes> read_dict(const fs::path& p) {
    std::vector<Bytes> tokens;
    std::ifstream in(p);
    std::string line;
    while (std::getline(in, line)) {
        size_t q = line.find('"');
        if (line.empty() || line[0] == '#' || q == std::string::npos) continue;
        size_t end = line.rfind('"');
        if (end <= q) continue;
        Bytes t;
        for (size_t i = q + 1; i < end; ++i) {
            if (line[i] != '\\' || i + 1 >= end) {
                t += line[i];
            } else if (line[i + 1] == 'x' && i + 3 < end) {
                t += static_cast<char>(std::stoi(line.substr(i + 2, 2), nullptr, 16));
                i += 3;
            } else {
                t += line[++i];
            }
        }
        if (!t.empty()) tokens.push_back(t);
    }
    return tokens;
}

std::string hash_name(const Bytes& b) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : b) h = (h ^ c) * 1099511628211ull;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
    return buf;
}

bool write_all(int fd, const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

bool read_all(int fd, void* data, size_t n) {
    char* p = static_cast<char*>(data);
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

void on_out_of_memory() {
    static const char msg[] = "fuzz driver: allocation failed under the memory limit\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(kExitOom);
}

// The child: limits, then inputs from `in` until EOF, one ack byte on `out` after each.
[[noreturn]] void child_loop(int in, int out, const Options& o) {
    rlimit as{o.memory_mb << 20, o.memory_mb << 20};
    setrlimit(RLIMIT_AS, &as);
    rlimit core{0, 0};
    setrlimit(RLIMIT_CORE, &core);
    std::set_new_handler(on_out_of_memory);
    signal(SIGPROF, SIG_DFL);
    Bytes input;
    const auto usec = static_cast<long>(o.timeout_s * 1e6);
    for (;;) {
        uint32_t len = 0;
        if (!read_all(in, &len, sizeof len)) _exit(0);
        input.resize(len);
        if (len > 0 && !read_all(in, input.data(), len)) _exit(0);
        itimerval t{};
        t.it_value.tv_sec = usec / 1000000;
        t.it_value.tv_usec = usec % 1000000;
        setitimer(ITIMER_PROF, &t, nullptr);
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
        itimerval off{};
        setitimer(ITIMER_PROF, &off, nullptr);
        char ack = 'k';
        if (!write_all(out, &ack, 1)) _exit(0);
    }
}

enum class Outcome { kOk, kCrash, kTimeout, kOom };

class Runner {
public:
    explicit Runner(const Options& o) : o_(o) {}
    ~Runner() { stop(); }

    Outcome run(const Bytes& input) {
        if (pid_ <= 0 || inputs_in_child_ >= kInputsPerChild) {
            stop();
            start();
        }
        ++inputs_in_child_;
        uint32_t len = static_cast<uint32_t>(input.size());
        if (!write_all(to_child_, &len, sizeof len) ||
            !write_all(to_child_, input.data(), input.size()))
            return reap(false);
        pollfd p{from_child_, POLLIN, 0};
        const int wall_ms = static_cast<int>(std::max(10.0, 10 * o_.timeout_s) * 1000);
        int r;
        do {
            r = poll(&p, 1, wall_ms);
        } while (r < 0 && errno == EINTR);
        if (r == 0) return reap(true);
        char ack = 0;
        if (!read_all(from_child_, &ack, 1)) return reap(false);
        return Outcome::kOk;
    }

private:
    void start() {
        int down[2], up[2];
        if (pipe(down) != 0 || pipe(up) != 0) {
            std::perror("fuzz driver: pipe");
            std::exit(2);
        }
        std::fflush(nullptr);
        pid_ = fork();
        if (pid_ < 0) {
            std::perror("fuzz driver: fork");
            std::exit(2);
        }
        if (pid_ == 0) {
            close(down[1]);
            close(up[0]);
            child_loop(down[0], up[1], o_);
        }
        close(down[0]);
        close(up[1]);
        to_child_ = down[1];
        from_child_ = up[0];
        inputs_in_child_ = 0;
    }

    void stop() {
        if (pid_ <= 0) return;
        close(to_child_);
        close(from_child_);
        int status = 0;
        waitpid(pid_, &status, 0);
        pid_ = -1;
    }

    // The child died (or hung: kill it); what ended it decides the kind of finding.
    Outcome reap(bool hung) {
        if (hung) kill(pid_, SIGKILL);
        close(to_child_);
        close(from_child_);
        int status = 0;
        waitpid(pid_, &status, 0);
        pid_ = -1;
        if (hung) return Outcome::kTimeout;
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGPROF) return Outcome::kTimeout;
        if (WIFEXITED(status) && WEXITSTATUS(status) == kExitOom) return Outcome::kOom;
        return Outcome::kCrash;
    }

    const Options& o_;
    pid_t pid_ = -1;
    int to_child_ = -1;
    int from_child_ = -1;
    int inputs_in_child_ = 0;
};

class Mutator {
public:
    Mutator(uint64_t seed, const std::vector<Bytes>& corpus, std::vector<Bytes> dict,
            size_t max_len)
        : rng_(seed), corpus_(corpus), dict_(std::move(dict)), max_len_(max_len) {}

    Bytes next() {
        Bytes b = corpus_.empty() ? Bytes() : corpus_[below(corpus_.size())];
        int n = 1;
        while (n < 16 && below(2) == 0) ++n;
        for (int i = 0; i < n; ++i) mutate(b);
        if (b.size() > max_len_) b.resize(max_len_);
        return b;
    }

private:
    size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng_() % n); }

    // A range [pos, pos+len) of b, shortish most of the time.
    std::pair<size_t, size_t> range(const Bytes& b) {
        if (b.empty()) return {0, 0};
        size_t pos = below(b.size());
        size_t cap = b.size() - pos;
        size_t len = 1 + below(std::min<size_t>(cap, below(4) == 0 ? cap : 16));
        return {pos, len};
    }

    const Bytes& other() { return corpus_[below(corpus_.size())]; }

    void mutate(Bytes& b) {
        static const char kBytes[] = "\0\xff\"{}[],:\n` -09.\\eE+#*/()=<>";
        static const char* const kNumbers[] = {
            "0", "-1", "1", "2", "3", "-0", "255", "256", "65535", "65536", "2147483647",
            "2147483648", "-2147483649", "4294967296", "9223372036854775807",
            "9223372036854775808", "-9223372036854775808", "18446744073709551616",
            "1e308", "1e309", "-1e309", "1e-400", "0.5", "NaN", "Infinity", "1000000000000"};
        switch (below(12)) {
            case 0:  // flip a bit
                if (!b.empty()) b[below(b.size())] ^= static_cast<char>(1u << below(8));
                break;
            case 1:  // set a byte to a structural one
                if (!b.empty()) b[below(b.size())] = kBytes[below(sizeof kBytes - 1)];
                break;
            case 2: {  // cut a range
                auto [pos, len] = range(b);
                b.erase(pos, len);
                break;
            }
            case 3: {  // insert random bytes
                size_t n = 1 + below(8);
                Bytes ins;
                for (size_t i = 0; i < n; ++i) ins += static_cast<char>(below(256));
                b.insert(below(b.size() + 1), ins);
                break;
            }
            case 4: {  // duplicate a range elsewhere
                auto [pos, len] = range(b);
                b.insert(below(b.size() + 1), b.substr(pos, len));
                break;
            }
            case 5:
            case 6:  // a dictionary token
                if (!dict_.empty()) {
                    const Bytes& t = dict_[below(dict_.size())];
                    if (below(2) == 0 || b.empty()) {
                        b.insert(below(b.size() + 1), t);
                    } else {
                        auto [pos, len] = range(b);
                        b.replace(pos, std::min(len, t.size()), t);
                    }
                }
                break;
            case 7: {  // a boundary number in place of a number (or anywhere)
                const char* num = kNumbers[below(std::size(kNumbers))];
                std::vector<size_t> starts;
                for (size_t i = 0; i < b.size(); ++i)
                    if (std::isdigit(static_cast<unsigned char>(b[i])) &&
                        (i == 0 || !std::isalnum(static_cast<unsigned char>(b[i - 1]))))
                        starts.push_back(i);
                if (starts.empty()) {
                    b.insert(below(b.size() + 1), num);
                } else {
                    size_t s = starts[below(starts.size())], e = s;
                    while (e < b.size() && (std::isalnum(static_cast<unsigned char>(b[e])) ||
                                            b[e] == '.' || b[e] == '-' || b[e] == '+'))
                        ++e;
                    b.replace(s, e - s, num);
                }
                break;
            }
            case 8: {  // repeat a range many times (nesting, long lists, reuse blowups)
                auto [pos, len] = range(b);
                size_t times = 2 + below(below(4) == 0 ? 256 : 16);
                Bytes piece = b.substr(pos, std::min<size_t>(len, 64));
                Bytes rep;
                for (size_t i = 0; i < times && rep.size() < max_len_; ++i) rep += piece;
                b.insert(pos, rep);
                break;
            }
            case 9: {  // splice: our prefix, another seed's suffix
                const Bytes& o = other();
                size_t cut = below(b.size() + 1);
                b = b.substr(0, cut) + o.substr(below(o.size() + 1));
                break;
            }
            case 10: {  // a range of another seed inserted here
                const Bytes& o = other();
                auto [pos, len] = range(o);
                b.insert(below(b.size() + 1), o.substr(pos, len));
                break;
            }
            default:  // truncate
                if (!b.empty()) b.resize(below(b.size()));
                break;
        }
    }

    std::mt19937_64 rng_;
    const std::vector<Bytes>& corpus_;
    std::vector<Bytes> dict_;
    size_t max_len_;
};

struct Tally {
    uint64_t inputs = 0, corpus = 0, crashes = 0, timeouts = 0, ooms = 0, saved = 0;
};

// Counts a finding and saves its input (not when replaying files: they are saved already).
void record(Outcome out, const Bytes& input, const Options& o, Tally& t) {
    if (out == Outcome::kOk) return;
    const char* kind = out == Outcome::kCrash ? "crash" : out == Outcome::kTimeout ? "timeout" : "oom";
    (out == Outcome::kCrash ? t.crashes : out == Outcome::kTimeout ? t.timeouts : t.ooms)++;
    if (t.saved >= kMaxSavedFindings || !o.replay_files.empty()) return;
    ++t.saved;
    std::error_code ec;
    fs::create_directories(o.artifacts, ec);
    fs::path path = o.artifacts / (std::string(kind) + "-" + hash_name(input));
    std::ofstream(path, std::ios::binary) << input;
    std::fprintf(stderr, "fuzz %s: %s (%zu bytes) saved as %s\n", o.name.c_str(), kind,
                 input.size(), path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse_options(argc, argv);
    signal(SIGPIPE, SIG_IGN);
    std::vector<Bytes> corpus;
    for (const auto& dir : o.corpus_dirs) {
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(dir))
            if (e.is_regular_file()) files.push_back(e.path());
        std::sort(files.begin(), files.end());  // the same order on every machine
        for (const auto& f : files) corpus.push_back(read_file(f));
    }
    Runner runner(o);
    Tally t;
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    if (!o.replay_files.empty()) {
        for (const auto& f : o.replay_files) {
            Bytes input = read_file(f);
            Outcome out = runner.run(input);
            ++t.inputs;
            ++t.corpus;
            std::printf("%s: %s\n", f.c_str(), out == Outcome::kOk ? "ok"
                                               : out == Outcome::kCrash ? "CRASH"
                                               : out == Outcome::kTimeout ? "TIMEOUT" : "OOM");
            record(out, input, o, t);
        }
    } else {
        if (corpus.empty()) usage("no seed corpus (--corpus DIR)");
        for (const Bytes& seed : corpus) {
            record(runner.run(seed), seed, o, t);
            ++t.inputs;
            ++t.corpus;
        }
        Mutator m(o.seed, corpus, o.dict.empty() ? std::vector<Bytes>{} : read_dict(o.dict),
                  o.max_len);
        while (t.inputs < o.runs && ((t.inputs & 63) != 0 || elapsed() < o.seconds)) {
            Bytes input = m.next();
            record(runner.run(input), input, o, t);
            ++t.inputs;
        }
    }
    const uint64_t breaches = t.timeouts + t.ooms;
    std::printf("fuzz %s: %" PRIu64 " inputs tried (%" PRIu64 " seeds or files, %" PRIu64
                " mutated) in %.1f s, seed %" PRIu64 "; crashes %" PRIu64
                ", limit breaches %" PRIu64 " (over %.1f s cpu: %" PRIu64
                ", over %" PRIu64 " MB: %" PRIu64 ")\n",
                o.name.c_str(), t.inputs, t.corpus, t.inputs - t.corpus, elapsed(), o.seed,
                t.crashes, breaches, o.timeout_s, t.timeouts, o.memory_mb, t.ooms);
    if (t.crashes + breaches > 0 && o.replay_files.empty()) {
        std::printf("fuzz %s: reproducers in %s (replay: %s FILE)\n", o.name.c_str(),
                    o.artifacts.c_str(), argv[0]);
        return 1;
    }
    return 0;
}
