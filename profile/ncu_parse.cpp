// Nsight Compute raw CSV parser (profile/ncu_parse.h).
#include "profile/ncu_parse.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace kforge::profile {
namespace {

// One CSV line into fields ("" quoting, "" escapes a quote). Nullopt for an unterminated quote.
std::optional<std::vector<std::string>> split_csv(std::string_view line) {
    std::vector<std::string> out;
    std::string field;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') field += '"', ++i;
            else if (c == '"') quoted = false;
            else field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(std::move(field));
            field.clear();
        } else if (c != '\r') {
            field += c;
        }
    }
    if (quoted) return std::nullopt;
    out.push_back(std::move(field));
    return out;
}

// "1,234.5" / "12.5" -> double; nullopt for "", "n/a" and text.
std::optional<double> parse_number(std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ','), s.end());
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0') return std::nullopt;
    return v;
}

// "(256, 1, 1)" -> {256, 1, 1}; a bare number -> {n, 1, 1}.
std::array<int64_t, 3> parse_dim3(const std::string& s) {
    std::array<int64_t, 3> d{1, 1, 1};
    std::string digits;
    int k = 0;
    for (char c : s + ",") {
        if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
        else if ((c == ',' || c == ')') && !digits.empty() && k < 3) {
            d[k++] = std::stoll(digits);
            digits.clear();
        }
    }
    return d;
}

bool is_identity_column(const std::string& name) {
    static const std::vector<std::string> kIdentity{
        "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Function Name",
        "Context", "Stream", "Block Size", "Grid Size", "Device", "CC", "Section Name",
        "Demangled Name", "Mangled Name", "Kernel Time", "Start", "Duration"};
    return std::find(kIdentity.begin(), kIdentity.end(), name) != kIdentity.end();
}

}  // namespace

std::optional<double> KernelProfile::metric(std::string_view name) const {
    auto it = metrics.find(std::string(name));
    if (it == metrics.end()) return std::nullopt;
    return it->second;
}

int64_t KernelProfile::threads() const {
    return grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2];
}

double normalise_unit(double v, std::string_view unit) {
    struct Scale { std::string_view unit; double factor; };
    static constexpr Scale kScales[] = {
        {"byte", 1}, {"Kbyte", 1e3}, {"Mbyte", 1e6}, {"Gbyte", 1e9}, {"Tbyte", 1e12},
        {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
        {"nsecond", 1}, {"usecond", 1e3}, {"msecond", 1e6}, {"second", 1e9},
        {"byte/second", 1}, {"Kbyte/second", 1e3}, {"Mbyte/second", 1e6},
        {"Gbyte/second", 1e9}, {"Tbyte/second", 1e12},
        {"cycle", 1}, {"Kcycle", 1e3}, {"Mcycle", 1e6},
        {"hz", 1}, {"Khz", 1e3}, {"Mhz", 1e6}, {"Ghz", 1e9},
        {"inst", 1}, {"Kinst", 1e3}, {"Minst", 1e6}, {"Ginst", 1e9},
        {"sector", 1}, {"Ksector", 1e3}, {"Msector", 1e6},
        {"request", 1}, {"Krequest", 1e3}, {"Mrequest", 1e6},
    };
    for (const Scale& s : kScales)
        if (s.unit == unit) return v * s.factor;
    return v;
}

Expected<std::vector<KernelProfile>> parse_ncu_csv(std::string_view text) {
    std::istringstream in{std::string(text)};
    std::vector<std::string> header, units;
    std::vector<KernelProfile> out;
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
        ++line_no;
        if (header.empty()) {
            if (line.rfind("\"ID\",", 0) != 0) continue;  // ==PROF== lines, program output
            auto h = split_csv(line);
            if (!h) return make_error("ncu csv:" + std::to_string(line_no), "unterminated quote");
            header = std::move(*h);
            continue;
        }
        if (line.empty() || line[0] != '"') continue;
        auto fields = split_csv(line);
        if (!fields) return make_error("ncu csv:" + std::to_string(line_no), "unterminated quote");
        if (units.empty()) {
            units = std::move(*fields);
            if (units.size() != header.size())
                return make_error("ncu csv:" + std::to_string(line_no),
                                  "the units row has " + std::to_string(units.size()) +
                                      " fields, the header " + std::to_string(header.size()));
            continue;
        }
        if (!parse_number((*fields)[0])) continue;  // not a record (e.g. a repeated header)
        if (fields->size() != header.size())
            return make_error("ncu csv:" + std::to_string(line_no),
                              "record has " + std::to_string(fields->size()) +
                                  " fields, the header " + std::to_string(header.size()));
        KernelProfile k;
        for (size_t i = 0; i < header.size(); ++i) {
            const std::string& col = header[i];
            const std::string& v = (*fields)[i];
            if (col == "ID") k.id = static_cast<int>(*parse_number(v));
            else if (col == "Kernel Name" || (col == "Function Name" && k.name.empty())) k.name = v;
            else if (col == "Grid Size") k.grid = parse_dim3(v);
            else if (col == "Block Size") k.block = parse_dim3(v);
            else if (col == "Device") k.device = v;
            else if (!is_identity_column(col))
                if (auto x = parse_number(v)) k.metrics[col] = normalise_unit(*x, units[i]);
        }
        out.push_back(std::move(k));
    }
    if (header.empty())
        return make_error("ncu csv", "no raw-page header row (a line starting with \"ID\",)");
    if (units.empty()) return make_error("ncu csv", "no units row after the header");
    return out;
}

std::vector<KernelProfile> representative_launches(const std::vector<KernelProfile>& all) {
    std::vector<KernelProfile> out;
    for (const KernelProfile& k : all) {
        if (std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.name == k.name; }))
            continue;
        int64_t most = 0;
        for (const KernelProfile& o : all)
            if (o.name == k.name) most = std::max(most, o.threads());
        std::vector<const KernelProfile*> runs;
        for (const KernelProfile& o : all)
            if (o.name == k.name && o.threads() == most) runs.push_back(&o);
        KernelProfile rep = *runs.front();
        for (auto& [metric, value] : rep.metrics) {
            std::vector<double> vs;
            for (const KernelProfile* r : runs)
                if (auto v = r->metric(metric)) vs.push_back(*v);
            std::sort(vs.begin(), vs.end());
            value = vs[vs.size() / 2];
        }
        out.push_back(std::move(rep));
    }
    return out;
}

}  // namespace kforge::profile
