// Baseline label convention (report/baseline.h).
#include "report/baseline.h"

#include <algorithm>
#include <cctype>

namespace kforge::report {

std::optional<std::string> baseline_name(std::string_view label) {
    if (label == "baseline") return std::string(kBaselineProgram);
    if (!label.starts_with(kBaselineLabelPrefix)) return std::nullopt;
    std::string_view name = label.substr(kBaselineLabelPrefix.size());
    if (name.empty() || name.size() > 64) return std::nullopt;
    for (char ch : name) {
        bool ok = std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' ||
                  ch == '.';
        if (!ok) return std::nullopt;
    }
    return std::string(name);
}

std::string baseline_label(std::string_view name) {
    return std::string(kBaselineLabelPrefix) + std::string(name);
}

bool is_baseline_carrier(std::string_view proposer) { return proposer.starts_with("baseline"); }

void sort_baseline_names(std::vector<std::string>& names) {
    auto rank = [](const std::string& n) {
        if (n == kBaselineEager) return 0;
        if (n == kBaselineCompileDefault) return 1;
        if (n == kBaselineCompileMaxAutotune) return 2;
        return 3;
    };
    std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
        return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
    });
    names.erase(std::unique(names.begin(), names.end()), names.end());
}

}  // namespace kforge::report
