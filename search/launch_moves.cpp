// The launch-knob moves a GEMM's shape asks for (search/launch_moves.h).
#include "search/launch_moves.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kforge::search {
namespace {

// The dims of `ref` at the problem's sizes (nullopt: a dim the problem does not know).
std::optional<std::vector<int64_t>> dims_of(const dsl::TensorRef& ref, const Problem& problem) {
    std::vector<int64_t> out;
    for (const std::string& d : ref.dims) {
        if (auto it = problem.dims.find(d); it != problem.dims.end()) {
            out.push_back(it->second);
            continue;
        }
        char* end = nullptr;
        const long long v = std::strtoll(d.c_str(), &end, 10);
        if (d.empty() || *end != '\0' || v <= 0) return std::nullopt;
        out.push_back(v);
    }
    return out;
}

int64_t product(const std::vector<int64_t>& v) {
    int64_t p = 1;
    for (int64_t x : v) p *= x;
    return p;
}

int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

DirectedMove gemm_move(std::string knob, int direction, std::string word, std::string reason) {
    return {dsl::KernelKind::kGemm, std::move(knob), direction, std::move(word), std::move(reason)};
}

}  // namespace

std::optional<GemmWaves> gemm_waves(const dsl::Kernel& k, const Problem& problem, int sm_count) {
    if (k.kind != dsl::KernelKind::kGemm || k.args.empty() || sm_count <= 0) return std::nullopt;
    auto a = dims_of(k.args[0], problem);
    std::optional<std::vector<int64_t>> out;
    for (const dsl::ChainOp& op : k.chain)
        if (op.kind == dsl::ChainOpKind::kStore && op.tensor) {
            out = dims_of(*op.tensor, problem);
            break;
        }
    if (!a || !out || out->size() < 2 || a->empty()) return std::nullopt;
    const dsl::GemmConfig& g = k.gemm;
    GemmWaves w;
    w.n = out->back();
    w.m = (*out)[out->size() - 2];
    w.batch = product(*out) / std::max<int64_t>(1, w.m * w.n);
    w.k = product(*a) / std::max<int64_t>(1, w.batch * w.m);
    w.tiles = ceil_div(w.m, g.tile_m) * ceil_div(w.n, g.tile_n) * w.batch;
    w.k_tiles = ceil_div(w.k, g.tile_k);
    w.waves = static_cast<double>(w.tiles) / sm_count;
    return w;
}

std::vector<DirectedMove> gemm_shape_moves(const dsl::Program& program, const Problem& problem,
                                           int sm_count) {
    std::vector<DirectedMove> out;
    for (const dsl::Kernel& k : program.kernels) {
        auto w = gemm_waves(k, problem, sm_count);
        if (!w || w->tiles <= 0) continue;
        char why[200];
        if (w->tiles < sm_count && w->k_tiles >= 2 * kSplitMinKTiles) {
            // the split that fills the SMs, if K has room for it (each part kSplitMinKTiles)
            std::snprintf(why, sizeof why,
                          "%s: %lld output tiles for %d SMs, K %lld = %lld k-tiles: split K over "
                          "more CTAs",
                          k.name.c_str(), static_cast<long long>(w->tiles), sm_count,
                          static_cast<long long>(w->k), static_cast<long long>(w->k_tiles));
            if (static_cast<int64_t>(k.gemm.split_k) * w->tiles < sm_count &&
                w->k_tiles >= static_cast<int64_t>(k.gemm.split_k + 1) * kSplitMinKTiles)
                out.push_back(gemm_move("splitk", 1, "", why));
            out.push_back(gemm_move("schedule", 0, "stream_k", why));
            continue;
        }
        const double last = w->waves - std::floor(w->waves);
        if (w->waves >= 1 && w->waves < 4 && last > 0 && last <= 0.5) {
            std::snprintf(why, sizeof why,
                          "%s: %lld output tiles in %.2f waves of %d SMs, the last %.0f%% full: "
                          "stream-K balances the tail",
                          k.name.c_str(), static_cast<long long>(w->tiles), w->waves, sm_count,
                          last * 100);
            out.push_back(gemm_move("schedule", 0, "stream_k", why));
        }
    }
    return out;
}

}  // namespace kforge::search
