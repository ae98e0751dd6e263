// The knob tables of the kernel language, as data: one table per kernel kind. The parser
// checks knob values against them, the printer writes knobs in their order, and the reference
// card is generated from them, so the three can never disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsl/ast.h"

namespace kforge::dsl {

enum class KnobValueKind {
    kInts,        // one or more integers joined by 'x' (`splitk 4`, `cluster 2x1`, `tile 128x128x64`)
    kIntOrAuto,   // `auto` or one integer (`stages`)
    kWord,        // one of a fixed list of words (`schedule cooperative`)
    kDim,         // a dim name (`over N`)
    kNumber,      // a positive number (`eps 1e-5`)
    kFlag,        // no value (`online`)
};

// Legal values of one integer: `values` when non-empty, else lo..hi in steps of `step` from lo.
struct IntDomain {
    std::vector<int64_t> values;
    int64_t lo = 0, hi = 0, step = 1;
    bool contains(int64_t v) const;
    std::string describe() const;  // "one of 1, 2, 4, 8" / "1..16" / "32..1024, a multiple of 32"
                                   // / "a positive integer" (1..2^20 and more)
};

// A parsed knob value. kIntOrAuto: `word` is "auto" or `ints` holds the integer.
struct KnobValue {
    std::vector<int64_t> ints;
    std::string word;
    double number = 0.0;
    bool operator==(const KnobValue&) const = default;
};

struct KnobSpec {
    std::string_view name;
    KnobValueKind kind = KnobValueKind::kFlag;
    std::vector<std::string_view> parts;  // kInts with more than one integer: "M", "N", "K"
    std::vector<IntDomain> domains;       // kInts / kIntOrAuto: one per integer
    std::vector<std::string_view> words;  // kWord: the legal words
    std::string_view default_text;        // as the reference card shows it
    std::string_view doc;                 // one line
    // Stores a value already checked against the domains into `k`; returns "" or a message
    // (for knobs that apply only to some row ops).
    std::string (*apply)(Kernel& k, const KnobValue& v) = nullptr;
    // The value to print, or nullopt when the knob is not written (unset optional, flag off).
    std::optional<KnobValue> (*read)(const Kernel& k) = nullptr;
};

// The knobs of one kernel kind, in canonical order.
const std::vector<KnobSpec>& knob_table(KernelKind kind);
const KnobSpec* find_knob(KernelKind kind, std::string_view name);

// The value dtypes of the language (`cast`, `acc`): f32, f16, bf16.
std::string_view value_dtype_name(DType d);
std::optional<DType> value_dtype_from_string(std::string_view s);

}  // namespace kforge::dsl
