// Typed JSON reads and name checks shared by the spec parser.
#include <cmath>
#include <limits>
#include <optional>

#include "problem/spec.h"
#include "problem/spec_internal.h"

namespace kforge::spec {

std::string type_name(const Json& v) {
    if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
    if (v.is_number_float()) return "a number";
    if (v.is_string()) return "a string";
    if (v.is_boolean()) return "a boolean";
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    return "null";
}

std::string quote(std::string_view s) {
    std::string out = "\"";
    for (char c : s.substr(0, 200)) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            out += '?';
            continue;
        }
        out += c;
    }
    if (s.size() > 200) out += "...";
    return out + "\"";
}

std::string join(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "(none)" : out;
}

Expected<std::string> read_string(const Json& v, const std::string& path) {
    if (!v.is_string()) return make_error(path, "expected a string, got " + type_name(v));
    return v.get<std::string>();
}

Expected<double> read_number(const Json& v, const std::string& path) {
    if (!v.is_number()) return make_error(path, "expected a number, got " + type_name(v));
    double x = v.get<double>();
    if (!std::isfinite(x)) return make_error(path, "expected a finite number");
    return x;
}

Expected<int64_t> read_int(const Json& v, const std::string& path) {
    if (v.is_number_unsigned()) {
        uint64_t u = v.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            return make_error(path, "integer " + std::to_string(u) + " is out of range");
        }
        return static_cast<int64_t>(u);
    }
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number_float()) {
        double x = v.get<double>();
        if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 9.0e15) {
            return static_cast<int64_t>(x);
        }
        return make_error(path, "expected an integer, got " + v.dump());
    }
    return make_error(path, "expected an integer, got " + type_name(v));
}

Expected<bool> read_bool(const Json& v, const std::string& path) {
    if (!v.is_boolean()) return make_error(path, "expected true or false, got " + type_name(v));
    return v.get<bool>();
}

bool is_identifier(std::string_view name) {
    if (name.empty() || name.size() > 128) return false;
    auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    if (!alpha(name[0])) return false;
    for (char c : name) {
        if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
    }
    return true;
}

Status check_keys(const Json& object, const std::string& path,
                  const std::vector<std::string>& known) {
    for (const auto& [key, value] : object.items()) {
        bool found = false;
        for (const std::string& k : known) found = found || k == key;
        if (!found) {
            std::string where = path.empty() ? key : path + "." + key;
            return make_error(where, "unknown key " + quote(key) + "; known keys: " + join(known));
        }
    }
    return Ok{};
}

Expected<DimEntry> read_dim_entry(const Json& v, const std::string& path,
                                  const std::map<std::string, int64_t>& dims) {
    if (v.is_string()) {
        std::string name = v.get<std::string>();
        auto it = dims.find(name);
        if (it == dims.end()) {
            std::vector<std::string> known;
            for (const auto& [k, value] : dims) known.push_back(k);
            return make_error(path, "unknown dim " + quote(name) + "; known dims: " + join(known));
        }
        return DimEntry{name, it->second};
    }
    if (!v.is_number()) {
        return make_error(path, "expected a dim name or a positive integer, got " + type_name(v));
    }
    auto value = read_int(v, path);
    if (!value) return value.error();
    if (*value <= 0 || *value > kMaxDimValue) {
        return make_error(path, "dim value " + std::to_string(*value) +
                                    " is not a positive integer of at most 2^40");
    }
    return DimEntry{"", *value};
}

namespace {

// The factors of `text` split at `sep`.
std::vector<std::string> split_at(const std::string& text, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
        const size_t end = text.find(sep, start);
        out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) return out;
        start = end + 1;
    }
}

bool is_digits(const std::string& f) {
    return !f.empty() && f.find_first_not_of("0123456789") == std::string::npos;
}

bool is_count(const std::string& f) {
    return !f.empty() && f.size() <= 13 &&
           f.find_first_not_of("0123456789") == std::string::npos && std::stoll(f) > 0;
}

}  // namespace

std::optional<std::string> bad_dim_factor(const std::string& text) {
    for (const std::string& term : split_at(text, '+'))
        for (const std::string& f : split_at(term, '*'))
            if (!is_identifier(f) && !is_count(f)) return f;
    return std::nullopt;
}

Status check_dim_expr(const std::string& text, const std::string& path) {
    if (bad_dim_factor(text)) {
        return make_error(path, "expected an integer or a dim expression: a sum of "
                                "products of dim names and positive integers (\"3*E\", "
                                "\"I+H\"); got " + quote(text));
    }
    return Ok{};
}

std::vector<std::string> dim_expr_names(const std::string& text) {
    std::vector<std::string> out;
    for (const std::string& term : split_at(text, '+'))
        for (const std::string& f : split_at(term, '*'))
            if (is_identifier(f)) out.push_back(f);
    return out;
}

Expected<int64_t> eval_dim_expr(const std::string& text, const std::string& path,
                                const std::map<std::string, int64_t>& dims) {
    __int128 total = 0;
    for (const std::string& term : split_at(text, '+')) {
        __int128 product = 1;
        for (const std::string& f : split_at(term, '*')) {
            if (is_count(f)) {
                product *= std::stoll(f);
            } else {
                auto it = dims.find(f);
                if (it == dims.end()) {
                    std::vector<std::string> known;
                    for (const auto& [k, v] : dims) known.push_back(k);
                    return make_error(path, "unknown dim " + quote(f) + " in " + quote(text) +
                                                "; known dims: " + join(known));
                }
                product *= it->second;
            }
            if (product > kMaxDimValue) break;
        }
        total += product;
        if (total > kMaxDimValue) {
            return make_error(path, quote(text) + " is above 2^40");
        }
    }
    return static_cast<int64_t>(total);
}

Status resolve_dim_exprs(Problem& p) {
    for (bool changed = true; changed;) {
        changed = false;
        for (const auto& [name, text] : p.dim_exprs) {
            if (p.dims.count(name) != 0) continue;
            bool known = true;
            for (const std::string& n : dim_expr_names(text)) known = known && p.dims.count(n) != 0;
            if (!known) continue;
            auto v = eval_dim_expr(text, "dims." + name, p.dims);
            if (!v) return v.error();
            p.dims[name] = *v;
            p.derived_dims.insert(name);
            changed = true;
        }
    }
    return Ok{};
}

Status enter_expr_dim(const Json& v, const std::string& path, Problem& p) {
    if (!v.is_string()) return Ok{};
    const std::string text = v.get<std::string>();
    if (text.find_first_of("*+") == std::string::npos) return Ok{};
    const bool sum = text.find('+') != std::string::npos;
    const std::string what = (sum ? "a sum entry " + quote(text) + " adds products of"
                                  : "a product entry " + quote(text) + " multiplies") +
                             " dim names of \"dims\" and positive integers; ";
    const std::string too_large = (sum ? "the sum " : "the product ") + quote(text) +
                                  " is not a positive integer of at most 2^40";
    if (auto bad = bad_dim_factor(text))
        return make_error(path, is_digits(*bad) ? too_large  // a 0, or a number past 2^40
                                                : what + quote(*bad) + " is neither");
    for (const std::string& n : dim_expr_names(text)) {
        if (p.dims.count(n) != 0) continue;
        if (p.dim_exprs.count(n) == 0) return make_error(path, what + quote(n) + " is neither");
        return make_error(path, what + quote(n) + " is derived from dims that the graph derives, "
                                "which an entry cannot name: declare the entry under \"dims\" by "
                                "its expression and name it");
    }
    auto value = eval_dim_expr(text, path, p.dims);
    if (!value) return make_error(path, too_large);
    p.dims[text] = *value;
    p.derived_dims.insert(text);
    return Ok{};
}

Status check_shape_limits(const std::vector<int64_t>& shape, const std::string& path) {
    if (static_cast<int>(shape.size()) > kMaxRank) {
        return make_error(path, "rank " + std::to_string(shape.size()) +
                                    " is above the limit of " + std::to_string(kMaxRank));
    }
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d <= 0 || n > kMaxTensorElements / d) {
            return make_error(path, "tensor too large: more than 2^50 elements");
        }
        n *= d;
    }
    return Ok{};
}

}  // namespace kforge::spec
