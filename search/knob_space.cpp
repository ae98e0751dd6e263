#include "search/knob_space.h"

#include <algorithm>

#include "codegen/launch_knobs.h"
#include "dsl/knobs.h"
#include "dsl/printer.h"

namespace kforge::search {

uint64_t Rng::next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int64_t Rng::uniform(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
}

double Rng::unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

namespace {

using dsl::IntDomain;
using dsl::KnobSpec;
using dsl::KnobValue;
using dsl::KnobValueKind;

std::optional<KnobValue> read(const KnobSpec& s, const dsl::Kernel& k) { return s.read(k); }

std::string describe(const KnobSpec& s, const std::optional<KnobValue>& v) {
    if (s.kind == KnobValueKind::kFlag) return v ? "on" : "off";
    if (!v) return "unset";
    if (!v->word.empty()) return v->word;
    std::string t;
    for (size_t i = 0; i < v->ints.size(); ++i) t += (i ? "x" : "") + std::to_string(v->ints[i]);
    return t;
}

// The kernel with knob `target` set to `value` (nullopt: flag off), every other knob kept.
std::optional<dsl::Kernel> with_knob(const dsl::Kernel& k, const KnobSpec& target,
                                     const std::optional<KnobValue>& value) {
    dsl::Kernel out = k;
    out.gemm = {};
    out.rowwise = {};
    out.map = {};
    for (const KnobSpec& s : dsl::knob_table(k.kind)) {
        std::optional<KnobValue> v = s.name == target.name ? value : read(s, k);
        if (!v) continue;
        if (!s.apply(out, *v).empty()) return std::nullopt;
    }
    return out;
}

std::optional<KnobMove> make_move(const dsl::Program& p, size_t ki, const KnobSpec& s,
                                  const std::optional<KnobValue>& value) {
    const dsl::Kernel& k = p.kernels[ki];
    auto nk = with_knob(k, s, value);
    if (!nk || *nk == k) return std::nullopt;
    KnobMove m{p,
               k.name + " " + std::string(s.name) + " " + describe(s, read(s, k)) + " -> " +
                   describe(s, value),
               k.name + " " + std::string(s.name)};
    m.program.kernels[ki] = std::move(*nk);
    m.free = is_free_move(p, m.program);
    return m;
}

// Values next to `v` in `d`, smaller ones when direction < 0, larger when > 0, both when 0.
std::vector<int64_t> int_steps(const IntDomain& d, int64_t v, int direction) {
    std::vector<int64_t> out;
    auto add = [&](int64_t c) {
        if (c != v && d.contains(c) && std::find(out.begin(), out.end(), c) == out.end())
            out.push_back(c);
    };
    if (!d.values.empty()) {
        auto it = std::find(d.values.begin(), d.values.end(), v);
        if (it == d.values.end()) return out;
        if (direction <= 0 && it != d.values.begin()) add(*(it - 1));
        if (direction >= 0 && it + 1 != d.values.end()) add(*(it + 1));
        return out;
    }
    // In a small stepped range also the 3/4 and 3/2 points: one step from a power of two is
    // rarely a good size (tile N 128 -> 144 ran 1.56x slower than 128 on the H200, 2026-12-01,
    // while 192 is a common fast tile), and halving/doubling skips the sizes between.
    bool small_range = (d.hi - d.lo) / std::max<int64_t>(d.step, 1) <= 64;
    if (direction <= 0) {
        if (v % 2 == 0) add(v / 2);
        if (small_range && v % 4 == 0) add(v / 4 * 3);
        if (small_range) add(v - d.step);
    }
    if (direction >= 0) {
        add(v * 2);
        if (small_range && v % 2 == 0) add(v / 2 * 3);
        if (small_range) add(v + d.step);
    }
    return out;
}

std::vector<KnobMove> knob_moves(const dsl::Program& p, size_t ki, const KnobSpec& s,
                                 int direction) {
    std::vector<KnobMove> out;
    const dsl::Kernel& k = p.kernels[ki];
    auto push = [&](const std::optional<KnobValue>& v) {
        if (auto m = make_move(p, ki, s, v)) out.push_back(std::move(*m));
    };
    std::optional<KnobValue> cur = read(s, k);
    switch (s.kind) {
        case KnobValueKind::kInts:
            if (!cur) break;
            for (size_t i = 0; i < s.domains.size() && i < cur->ints.size(); ++i)
                for (int64_t c : int_steps(s.domains[i], cur->ints[i], direction)) {
                    KnobValue v = *cur;
                    v.ints[i] = c;
                    push(v);
                }
            break;
        case KnobValueKind::kIntOrAuto: {
            if (!cur || s.domains.empty()) break;
            const IntDomain& d = s.domains[0];
            if (cur->ints.empty()) {
                // auto: try the ends of the range nearest to the direction
                if (direction >= 0) push(KnobValue{{d.hi}, {}, 0.0});
                if (direction <= 0) push(KnobValue{{d.lo + d.step}, {}, 0.0});
            } else {
                for (int64_t c : int_steps(d, cur->ints[0], direction))
                    push(KnobValue{{c}, {}, 0.0});
                if (direction == 0) push(KnobValue{{}, "auto", 0.0});
            }
            break;
        }
        case KnobValueKind::kWord: {
            if (!cur) break;
            auto it = std::find(s.words.begin(), s.words.end(), cur->word);
            for (auto w = s.words.begin(); w != s.words.end(); ++w) {
                if (w == it) continue;
                if (direction > 0 && it != s.words.end() && w != it + 1) continue;
                if (direction < 0 && (it == s.words.begin() || w != it - 1)) continue;
                push(KnobValue{{}, std::string(*w), 0.0});
            }
            break;
        }
        case KnobValueKind::kFlag:
            if (direction >= 0 && !cur) push(KnobValue{});
            if (direction <= 0 && cur) push(std::nullopt);
            break;
        default: break;
    }
    return out;
}

KnobValue random_value(const KnobSpec& s, Rng& rng, bool& flag_on) {
    KnobValue v;
    flag_on = true;
    auto draw = [&](const IntDomain& d) -> int64_t {
        if (!d.values.empty()) return d.values[rng.uniform(0, d.values.size() - 1)];
        int64_t n = (d.hi - d.lo) / std::max<int64_t>(d.step, 1);
        return d.lo + rng.uniform(0, n) * d.step;
    };
    switch (s.kind) {
        case KnobValueKind::kInts:
            for (const IntDomain& d : s.domains) v.ints.push_back(draw(d));
            break;
        case KnobValueKind::kIntOrAuto:
            if (rng.uniform(0, 3) == 0) v.word = "auto";
            else v.ints.push_back(draw(s.domains.at(0)));
            break;
        case KnobValueKind::kWord:
            v.word = std::string(s.words[rng.uniform(0, s.words.size() - 1)]);
            break;
        case KnobValueKind::kFlag: flag_on = rng.uniform(0, 1) == 1; break;
        default: break;
    }
    return v;
}

}  // namespace

std::string compile_configuration_key(const dsl::Program& p) {
    return dsl::print_canonical(codegen::compile_configuration(p));
}

bool is_free_move(const dsl::Program& from, const dsl::Program& to) {
    return compile_configuration_key(from) == compile_configuration_key(to);
}

std::vector<std::string> free_knobs(const dsl::Program& p, size_t kernel) {
    std::vector<std::string> out;
    if (kernel >= p.kernels.size()) return out;
    for (const KnobSpec& s : dsl::knob_table(p.kernels[kernel].kind)) {
        if (!is_tuning_knob(p.kernels[kernel].kind, s.name)) continue;
        std::vector<KnobMove> moves = knob_moves(p, kernel, s, 0);
        if (std::any_of(moves.begin(), moves.end(), [](const KnobMove& m) { return m.free; }))
            out.emplace_back(s.name);
    }
    return out;
}

std::vector<KnobMove> free_neighbours(const dsl::Program& p) {
    std::vector<KnobMove> out, pairs;
    for (KnobMove& first : knob_neighbours(p)) {
        if (!first.free) continue;
        for (KnobMove& second : knob_neighbours(first.program)) {
            if (second.knob == first.knob || !second.free) continue;
            pairs.push_back(KnobMove{std::move(second.program), first.move + ", " + second.move, "",
                                     true});
        }
        out.push_back(std::move(first));
    }
    for (KnobMove& m : pairs) out.push_back(std::move(m));
    return out;
}

bool is_tuning_knob(dsl::KernelKind, std::string_view knob) {
    // semantics, fixed by the problem: the dim, the norms' eps and groups, the scan's direction
    return knob != "over" && knob != "eps" && knob != "groups" && knob != "reverse" &&
           knob != "exclusive" && knob != "mask" && knob != "diagonal";  // attention's mask
}

std::vector<KnobMove> knob_neighbours(const dsl::Program& p) {
    std::vector<KnobMove> out;
    for (size_t ki = 0; ki < p.kernels.size(); ++ki)
        for (const KnobSpec& s : dsl::knob_table(p.kernels[ki].kind)) {
            if (!is_tuning_knob(p.kernels[ki].kind, s.name)) continue;
            for (KnobMove& m : knob_moves(p, ki, s, 0)) out.push_back(std::move(m));
        }
    return out;
}

std::vector<KnobMove> knob_pair_neighbours(const dsl::Program& p) {
    std::vector<KnobMove> out;
    for (const KnobMove& first : knob_neighbours(p))
        for (KnobMove& second : knob_neighbours(first.program)) {
            if (second.knob == first.knob) continue;
            const bool free = first.free && second.free;
            out.push_back(KnobMove{std::move(second.program), first.move + ", " + second.move, "",
                                   free});
        }
    return out;
}

std::vector<KnobMove> knob_trades(const dsl::Program& p) {
    std::vector<KnobMove> out;
    for (size_t ki = 0; ki < p.kernels.size(); ++ki) {
        const dsl::Kernel& k = p.kernels[ki];
        struct Int {
            const KnobSpec* spec;
            int64_t value;
        };
        std::vector<Int> ints;
        for (const KnobSpec& s : dsl::knob_table(k.kind)) {
            if (!is_tuning_knob(k.kind, s.name) || s.kind != KnobValueKind::kInts ||
                s.domains.size() != 1)
                continue;
            auto v = read(s, k);
            if (v && v->ints.size() == 1) ints.push_back({&s, v->ints[0]});
        }
        for (const Int& up : ints)
            for (const Int& down : ints) {
                if (up.spec == down.spec || down.value % 2 != 0) continue;
                const int64_t u = up.value * 2, d = down.value / 2;
                if (!up.spec->domains[0].contains(u) || !down.spec->domains[0].contains(d))
                    continue;
                auto first = make_move(p, ki, *up.spec, KnobValue{{u}, {}, 0.0});
                if (!first) continue;
                auto both = make_move(first->program, ki, *down.spec, KnobValue{{d}, {}, 0.0});
                if (!both) continue;
                out.push_back(KnobMove{std::move(both->program), first->move + ", " + both->move, ""});
            }
    }
    return out;
}

std::vector<KnobMove> step_knob(const dsl::Program& p, size_t kernel, std::string_view knob,
                                int direction) {
    if (kernel >= p.kernels.size()) return {};
    const KnobSpec* s = dsl::find_knob(p.kernels[kernel].kind, knob);
    if (!s || !is_tuning_knob(p.kernels[kernel].kind, knob)) return {};
    return knob_moves(p, kernel, *s, direction == 0 ? 1 : direction);
}

std::optional<KnobMove> set_word_knob(const dsl::Program& p, size_t kernel, std::string_view knob,
                                      std::string_view word) {
    if (kernel >= p.kernels.size()) return std::nullopt;
    const KnobSpec* s = dsl::find_knob(p.kernels[kernel].kind, knob);
    if (!s || s->kind != KnobValueKind::kWord) return std::nullopt;
    if (std::find(s->words.begin(), s->words.end(), word) == s->words.end()) return std::nullopt;
    return make_move(p, kernel, *s, KnobValue{{}, std::string(word), 0.0});
}

KnobMove random_kernel_knobs(const dsl::Program& p, size_t kernel, Rng& rng) {
    KnobMove m{p, "random knobs", ""};
    if (kernel >= m.program.kernels.size()) return m;
    dsl::Kernel& k = m.program.kernels[kernel];
    for (const KnobSpec& s : dsl::knob_table(k.kind)) {
        if (!is_tuning_knob(k.kind, s.name)) continue;
        bool on = true;
        KnobValue v = random_value(s, rng, on);
        if (auto nk = with_knob(k, s, on ? std::optional<KnobValue>(v) : std::nullopt))
            k = std::move(*nk);
    }
    return m;
}

bool same_structure(const dsl::Program& a, const dsl::Program& b) {
    if (a.kernels.size() != b.kernels.size() || a.problem != b.problem) return false;
    for (size_t i = 0; i < a.kernels.size(); ++i) {
        const dsl::Kernel& x = a.kernels[i];
        const dsl::Kernel& y = b.kernels[i];
        if (x.kind != y.kind || x.row_op != y.row_op || x.name != y.name) return false;
        dsl::Program pa{"", "", {x}, {}}, pb{"", "", {y}, {}};
        pa = dsl::strip_locations(pa), pb = dsl::strip_locations(pb);
        if (pa.kernels[0].args != pb.kernels[0].args || pa.kernels[0].chain != pb.kernels[0].chain ||
            pa.kernels[0].pre != pb.kernels[0].pre)
            return false;
    }
    return true;
}

std::optional<KnobMove> crossover(const dsl::Program& a, const dsl::Program& b, Rng& rng) {
    if (!same_structure(a, b)) return std::nullopt;
    KnobMove m{a, "crossover", ""};
    for (size_t i = 0; i < a.kernels.size(); ++i) {
        dsl::Kernel& k = m.program.kernels[i];
        for (const KnobSpec& s : dsl::knob_table(k.kind)) {
            if (!is_tuning_knob(k.kind, s.name) || rng.uniform(0, 1) == 0) continue;
            if (auto nk = with_knob(k, s, read(s, b.kernels[i]))) k = std::move(*nk);
        }
    }
    return m;
}

std::vector<KnobMove> crossovers(const dsl::Program& a, const dsl::Program& b, int max_knobs) {
    if (!same_structure(a, b)) return {};
    struct Diff {
        size_t kernel;
        const KnobSpec* spec;
        std::optional<KnobValue> from_b;
    };
    std::vector<Diff> diffs;
    for (size_t i = 0; i < a.kernels.size(); ++i)
        for (const KnobSpec& s : dsl::knob_table(a.kernels[i].kind)) {
            if (!is_tuning_knob(a.kernels[i].kind, s.name)) continue;
            auto vb = read(s, b.kernels[i]);
            if (read(s, a.kernels[i]) != vb) diffs.push_back({i, &s, vb});
        }
    if (diffs.size() < 2 || static_cast<int>(diffs.size()) > max_knobs) return {};
    std::vector<KnobMove> out;
    const uint32_t all = (1u << diffs.size()) - 1;
    for (uint32_t mask = 1; mask < all; ++mask) {  // bit set: the knob from b
        KnobMove m{a, "", ""};
        bool ok = true;
        for (size_t d = 0; d < diffs.size() && ok; ++d) {
            if (!(mask & (1u << d))) continue;
            dsl::Kernel& k = m.program.kernels[diffs[d].kernel];
            auto nk = with_knob(k, *diffs[d].spec, diffs[d].from_b);
            if (!nk) ok = false;
            else k = std::move(*nk);
            m.move += std::string(m.move.empty() ? "" : ", ") + k.name + " " +
                      std::string(diffs[d].spec->name) + " " +
                      describe(*diffs[d].spec, diffs[d].from_b);
        }
        if (ok) out.push_back(std::move(m));
    }
    return out;
}

}  // namespace kforge::search
