// Knobs of one kernel, checked against the knob tables (dsl/knobs.h).
#include "dsl/diagnostic.h"
#include "dsl/parser_internal.h"

namespace kforge::dsl::detail {
namespace {

std::vector<std::string_view> knob_names(KernelKind kind) {
    std::vector<std::string_view> names;
    for (const KnobSpec& s : knob_table(kind)) names.push_back(s.name);
    return names;
}

std::string first_knobs(KernelKind kind) {
    std::string s;
    const auto& table = knob_table(kind);
    for (size_t i = 0; i < table.size() && i < 3; ++i) s += std::string(table[i].name) + ", ";
    return "(" + s + "...)";
}

std::string join_words(const std::vector<std::string_view>& words) {
    std::string s;
    for (size_t i = 0; i < words.size(); ++i) s += (i ? ", " : "") + std::string(words[i]);
    return s;
}

// "MxNxK (e.g. 128x128x64)" or "an integer (e.g. 4)"
std::string ints_form(const KnobSpec& spec) {
    std::string form;
    for (size_t i = 0; i < spec.parts.size(); ++i) form += (i ? "x" : "") + std::string(spec.parts[i]);
    if (form.empty()) form = "an integer";
    return form + " (e.g. " + std::string(spec.default_text) + ")";
}

}  // namespace

Status Parser::knobs(Kernel& k) {
    while (!at_punct('{')) {
        std::string expect = "a knob " + first_knobs(k.kind) + " or '{'";
        if (peek().kind != TokenKind::kIdent) return expected(expect);
        if (k.kind == KernelKind::kRowwise && at_ident("pre")) {
            return error_at(peek(), "`pre { .. }` is written right after the head, before the "
                                    "knobs: rowwise sum(X[M,K]) pre { mul v[K] } threads 256 ..");
        }
        const KnobSpec* spec = find_knob(k.kind, peek().text);
        if (!spec) return expected(expect, did_you_mean(peek().text, knob_names(k.kind)));
        Token name = take();
        for (const auto& [written, loc] : k.knob_locs) {
            if (written == spec->name) {
                return error_at(name, "duplicate knob '" + written + "' (first written at " +
                                          std::to_string(loc.line) + ":" +
                                          std::to_string(loc.col) + ")");
            }
        }
        Expected<KnobValue> value = knob_value(*spec, name);
        if (!value) return value.error();
        if (std::string msg = spec->apply(k, *value); !msg.empty()) return error_at(name, msg);
        k.knob_locs.emplace_back(std::string(spec->name), name.loc);
    }
    return Ok{};
}

Expected<KnobValue> Parser::knob_value(const KnobSpec& spec, const Token& name) {
    std::string knob(spec.name);
    KnobValue v;
    switch (spec.kind) {
        case KnobValueKind::kFlag:
            return v;
        case KnobValueKind::kInts:
            return knob_ints(spec);
        case KnobValueKind::kIntOrAuto:
            if (at_ident("auto")) {
                v.word = std::string(take().text);
                return v;
            }
            if (peek().kind != TokenKind::kInt) {
                return expected(knob + ": 'auto' or " + spec.domains[0].describe());
            }
            return knob_ints(spec);
        case KnobValueKind::kWord: {
            std::string expect = "one of " + join_words(spec.words);
            if (peek().kind != TokenKind::kIdent) return expected(knob + ": " + expect);
            Token w = take();
            for (std::string_view legal : spec.words) {
                if (legal == w.text) {
                    v.word = std::string(w.text);
                    return v;
                }
            }
            return error_at(w, knob + " " + clip_text(w.text) + ": expected " + expect +
                                   did_you_mean(w.text, spec.words));
        }
        case KnobValueKind::kDim:
            // one dim, or several joined by commas (`over N,H,W`: a reduction over a set of dims)
            while (true) {
                if (peek().kind == TokenKind::kInt) {  // a dim written as its extent, as in X[B,100]
                    Expected<int64_t> n = integer(peek());
                    if (!n) return n.error();
                    take();
                    v.word += std::to_string(*n);
                } else if (peek().kind == TokenKind::kIdent) {
                    v.word += std::string(take().text);
                } else {
                    return expected(knob + ": a dim (a name such as N, or an integer as the tensor "
                                           "writes it)" + (v.word.empty() ? "" : " after ','"));
                }
                if (!at_punct(',')) return v;
                take();
                v.word += ",";
            }
        case KnobValueKind::kNumber: {
            if (!at_number()) return expected(knob + ": a positive number (e.g. 1e-5)");
            Token t = take();
            Expected<double> d = number(t);
            if (!d) return d.error();
            // (attention's `diagonal` is an offset: zero or negative too)
            if (!(*d > 0.0) && knob != "diagonal") {
                return error_at(t, knob + " " + clip_text(t.text) + ": expected a positive number");
            }
            v.number = *d;
            return v;
        }
    }
    return error_at(name, "internal: unknown knob kind");
}

Expected<KnobValue> Parser::knob_ints(const KnobSpec& spec) {
    std::string knob(spec.name);
    std::string form = knob + ": expected " + ints_form(spec);
    size_t parts = std::max<size_t>(1, spec.parts.size());
    KnobValue v;
    std::vector<Token> toks;
    for (size_t i = 0; i < parts; ++i) {
        if (i > 0) {
            if (peek().kind != TokenKind::kTimes) {
                return error_at(peek(), form + ", got " + describe(peek()));
            }
            take();
        }
        if (peek().kind != TokenKind::kInt) return error_at(peek(), form + ", got " + describe(peek()));
        toks.push_back(take());
    }
    if (peek().kind == TokenKind::kTimes) return error_at(peek(), form + ", got " + describe(peek()));
    const Token& first = toks.front();
    const Token& last = toks.back();
    std::string written = clip_text(source_text(first, last));
    for (size_t i = 0; i < parts; ++i) {
        Expected<int64_t> n = integer(toks[i]);
        if (!n) return n.error();
        const IntDomain& dom = spec.domains[i];
        if (!dom.contains(*n)) {
            std::string part = spec.parts.empty() ? "" : " " + std::string(spec.parts[i]);
            return error_at(toks[i], knob + " " + written + ":" + part + " expected " + dom.describe());
        }
        v.ints.push_back(*n);
    }
    return v;
}

}  // namespace kforge::dsl::detail
