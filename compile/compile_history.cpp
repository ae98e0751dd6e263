// Compile times by kernel kind and configuration (compile/compile_history.h).
#include "compile/compile_history.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

namespace kforge::compile {
namespace {

constexpr size_t kNewestSamples = 20;

}  // namespace

std::string compile_history_path(const std::string& cache_dir) {
    return (std::filesystem::path(cache_dir) / "compile_history.jsonl").string();
}

Status append_compile_history(const std::string& cache_dir, const CompileTimeSample& s) {
    if (cache_dir.empty()) return Ok{};
    std::error_code ec;
    std::filesystem::create_directories(cache_dir, ec);
    const std::string path = compile_history_path(cache_dir);
    nlohmann::json j{{"kind", s.kind}, {"config", s.config}, {"seconds", s.seconds}};
    if (!s.charged_to.empty()) j["charged_to"] = s.charged_to;
    if (s.shared_by > 0) j["shared_by"] = s.shared_by;
    const std::string line = j.dump() + "\n";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return make_error(path, std::string("cannot open: ") + std::strerror(errno));
    const ssize_t n = ::write(fd, line.data(), line.size());
    const int err = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(line.size()))
        return make_error(path, std::string("cannot append: ") + std::strerror(err));
    return Ok{};
}

std::vector<CompileTimeSample> load_compile_history(const std::string& cache_dir,
                                                    size_t max_samples) {
    std::deque<CompileTimeSample> out;
    if (cache_dir.empty()) return {};
    std::ifstream in(compile_history_path(cache_dir));
    for (std::string line; std::getline(in, line);) {
        auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!j.is_object() || !j["kind"].is_string() || !j["seconds"].is_number()) continue;
        CompileTimeSample s;
        s.kind = j["kind"].get<std::string>();
        s.config = j.value("config", "");
        if (!j["config"].is_string()) s.config.clear();
        s.seconds = j["seconds"].get<double>();
        if (j.contains("charged_to") && j["charged_to"].is_string())
            s.charged_to = j["charged_to"].get<std::string>();
        if (j.contains("shared_by") && j["shared_by"].is_number_integer())
            s.shared_by = j["shared_by"].get<int>();
        if (!(s.seconds >= 0) || s.seconds > 1e5) continue;  // NaN, negative, absurd
        out.push_back(std::move(s));
        if (out.size() > max_samples) out.pop_front();
    }
    return {out.begin(), out.end()};
}

double default_compile_s(const std::string& kind) {
    if (kind == "gemm_sm90") return 50;
    if (kind == "gemm_multistage") return 35;
    if (kind == "conv2d") return 60;
    if (kind == "attention_fmha") return 75;  // CUTLASS's Hopper FMHA: 68-78 s measured here
    if (kind == "rowwise" || kind == "map") return 2;
    return 30;
}

CompileEstimate estimate_compile_s(const std::vector<CompileTimeSample>& history,
                                   const std::string& kind, const std::string& config) {
    auto mean_of = [&](bool same_config) -> std::optional<CompileEstimate> {
        double sum = 0;
        size_t n = 0;
        for (auto it = history.rbegin(); it != history.rend() && n < kNewestSamples; ++it)
            if (it->kind == kind && (!same_config || it->config == config)) sum += it->seconds, ++n;
        if (n == 0) return std::nullopt;
        return CompileEstimate{sum / static_cast<double>(n),
                               std::to_string(n) + " sample" + (n == 1 ? "" : "s") + " of " +
                                   kind + (same_config && !config.empty() ? " " + config : "")};
    };
    if (auto e = mean_of(true)) return *e;
    if (auto e = mean_of(false)) return *e;
    return {default_compile_s(kind), "default for " + kind + " (no history)"};
}

}  // namespace kforge::compile
