// parse_problem(): JSON text -> validated Problem (docs/problem-spec.md). This file reads the
// top level (name, dims, inputs, outputs, precision); op_parse.cpp reads graph entries,
// shape_infer.cpp infers shapes and graph_build.cpp orders and checks the graph.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "problem/inputs.h"
#include "problem/spec.h"
#include "problem/spec_internal.h"

namespace kforge {
namespace {

using spec::Json;
using spec::quote;

// Line and column (1-based) of byte offset `pos` of `text`, and the line itself.
struct TextPos {
    size_t line = 1, column = 1;
    std::string line_text;
};

TextPos locate(std::string_view text, size_t pos) {
    TextPos p;
    pos = std::min(pos, text.size());
    size_t line_start = 0;
    for (size_t i = 0; i < pos; ++i) {
        if (text[i] == '\n') {
            ++p.line;
            line_start = i + 1;
        }
    }
    p.column = pos - line_start + 1;
    size_t line_end = text.find('\n', line_start);
    p.line_text = std::string(text.substr(line_start, std::min<size_t>(
        (line_end == std::string_view::npos ? text.size() : line_end) - line_start, 200)));
    return p;
}

Error text_error(std::string_view text, size_t pos, std::string_view source_name,
                 const std::string& message) {
    TextPos p = locate(text, pos);
    std::string where = "line " + std::to_string(p.line) + ", column " + std::to_string(p.column);
    std::string caret(std::min<size_t>(p.column - 1, p.line_text.size()), ' ');
    std::string detail = "  --> " + std::string(source_name) + ":" + std::to_string(p.line) + ":" +
                         std::to_string(p.column) + "\n   | " + p.line_text + "\n   | " + caret +
                         "^";
    return make_error(where, message, detail);
}

// Parses JSON text; rejects nesting deeper than kMaxJsonDepth before parsing so that neither the
// parser nor any later walk can exhaust the stack.
Expected<Json> parse_text(std::string_view text, std::string_view source_name) {
    int depth = 0;
    bool in_string = false, escaped = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonDepth) {
                return text_error(text, i, source_name,
                                  "malformed JSON: nested deeper than " +
                                      std::to_string(kMaxJsonDepth) + " levels");
            }
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
        std::string what = e.what();
        size_t colon = what.find("syntax error");
        std::string reason = colon == std::string::npos ? what : what.substr(colon);
        return text_error(text, e.byte == 0 ? 0 : e.byte - 1, source_name,
                          "malformed JSON: " + reason);
    } catch (const Json::out_of_range& e) {  // a number literal beyond double's range
        std::string what = e.what();
        size_t open = what.find('\''), close = what.rfind('\'');
        std::string literal = open < close ? what.substr(open + 1, close - open - 1) : "";
        size_t pos = literal.empty() ? 0 : text.find(literal);
        return text_error(text, pos == std::string_view::npos ? 0 : pos, source_name,
                          "malformed JSON: number " + literal + " is out of range");
    }
}

Status parse_dims(const Json& j, Problem& p) {
    if (!j.is_object()) return make_error("dims", "expected an object, got " + spec::type_name(j));
    for (const auto& [name, value] : j.items()) {
        std::string path = "dims." + name;
        if (!spec::is_identifier(name)) {
            return make_error(path, "dim name " + quote(name) + " is not an identifier");
        }
        if (value.is_string()) {  // a derived dim: an expression of other dims ("3*E")
            const std::string text = value.get<std::string>();
            if (auto s = spec::check_dim_expr(text, path); !s) return s.error();
            p.dim_exprs[name] = text;
            continue;
        }
        auto v = spec::read_int(value, path);
        if (!v) return v.error();
        if (*v <= 0 || *v > kMaxDimValue) {
            return make_error(path, "dim " + quote(name) + " = " + std::to_string(*v) +
                                        "; expected a positive integer of at most 2^40");
        }
        p.dims[name] = *v;
    }
    return spec::resolve_dim_exprs(p);  // the rest wait for the dims the graph derives
}

std::string fan_in_expected(const std::string& tensor) {
    return "the fan_in of " + quote(tensor) +
           " is a positive integer, a dim name or a product of them (\"C*3*3\")";
}

std::string too_large(const std::string& what, const std::string& text) {
    return what + "; " + quote(text) + " is not a positive integer of at most 2^40";
}

// An input's "scale" (a finite number > 0) and "fan_in" (a positive integer or a dim expression
// - a dim name, a product "C*3*3", a sum "D64+D32" - of dims under "dims", a derived one of dims
// the graph derives included; valued by value_fan_in once every dim is known): its draws are
// multiplied by scale / sqrt(fan_in) (problem/inputs.h draw_scale).
Status parse_draw_scale(const Json& entry, const std::string& path, const Problem& p, Tensor& t) {
    if (entry.contains("scale")) {
        const Json& v = entry["scale"];
        if (!v.is_number())
            return make_error(path + ".scale", "the draw's scale of " + quote(t.name) +
                                                   " must be a number > 0, got " +
                                                   spec::type_name(v));
        auto x = spec::read_number(v, path + ".scale");
        if (!x) return x.error();
        if (!(*x > 0.0))
            return make_error(path + ".scale", "the draw's scale of " + quote(t.name) +
                                                   " must be a finite number > 0, got " + v.dump());
        t.scale = *x;
    }
    if (!entry.contains("fan_in")) return Ok{};
    const Json& v = entry["fan_in"];
    const std::string where = path + ".fan_in";
    const std::string what = fan_in_expected(t.name);
    if (v.is_number_integer()) {
        const int64_t x = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(kMaxDimValue)
                              ? kMaxDimValue + 1
                              : v.get<int64_t>();
        if (x < 1 || x > kMaxDimValue)
            return make_error(where, what + " of at most 2^40; got " + v.dump());
        t.fan_in = std::to_string(x);
        return Ok{};
    }
    if (!v.is_string() || v.get<std::string>().empty())
        return make_error(where, what + "; got " + v.dump());
    const std::string text = v.get<std::string>();
    std::optional<std::string> bad = spec::bad_dim_factor(text);
    if (bad && !bad->empty() && bad->find_first_not_of("0123456789") == std::string::npos)
        return make_error(where, too_large(what, text));  // a 0, or a number past 2^40
    for (const std::string& n : spec::dim_expr_names(text))  // declared, derived ones included
        if (!bad && p.dims.count(n) == 0 && p.dim_exprs.count(n) == 0) bad = n;
    if (bad)
        return make_error(where, what + "; " + quote(*bad) + " in " + quote(text) +
                                     " is neither a dim of \"dims\" nor an integer");
    t.fan_in = text;
    return Ok{};
}

Status parse_inputs(const Json& j, Problem& p) {
    if (!j.is_object()) return make_error("inputs", "expected an object, got " + spec::type_name(j));
    if (j.empty()) return make_error("inputs", "expected at least one input tensor");
    if (j.size() > static_cast<size_t>(kMaxGraphInputs)) {
        return make_error("inputs", "too many input tensors: " + std::to_string(j.size()) +
                                        "; a problem has at most " +
                                        std::to_string(kMaxGraphInputs));
    }
    for (const auto& [name, entry] : j.items()) {
        std::string path = "inputs." + name;
        if (!spec::is_identifier(name)) {
            return make_error(path, "tensor name " + quote(name) + " is not an identifier");
        }
        if (!entry.is_object()) {
            return make_error(path, "expected an object {shape, dtype, param?, distribution?, "
                                    "fan_in?, scale?}, got " + spec::type_name(entry));
        }
        if (auto s = spec::check_keys(entry, path, {"shape", "dtype", "param", "distribution",
                                                     "fan_in", "scale"});
            !s)
            return s.error();
        Tensor t;
        t.name = name;
        if (!entry.contains("shape")) return make_error(path, "missing key \"shape\"");
        const Json& shape = entry["shape"];
        if (!shape.is_array()) {
            return make_error(path + ".shape", "expected an array, got " + spec::type_name(shape));
        }
        bool pending = false;
        for (size_t i = 0; i < shape.size(); ++i) {
            // a derived dim of dims the graph derives (a conv's or pool's output size): its
            // extent is filled in once they are (build_graph)
            if (shape[i].is_string() && p.dim_exprs.count(shape[i].get<std::string>()) != 0 &&
                p.dims.count(shape[i].get<std::string>()) == 0) {
                t.dim_names.push_back(shape[i].get<std::string>());
                t.shape.push_back(0);
                pending = true;
                continue;
            }
            // a dim expression ("4*H": an lstm's gate rows) is a derived dim of that name,
            // recomputed whenever the dims are re-bound
            if (auto s = spec::enter_expr_dim(shape[i], path + ".shape[" + std::to_string(i) + "]", p);
                !s)
                return s.error();
            auto d = spec::read_dim_entry(shape[i], path + ".shape[" + std::to_string(i) + "]",
                                          p.dims);
            if (!d) return d.error();
            t.dim_names.push_back(d->name);
            t.shape.push_back(d->value);
        }
        if (!pending) {
            if (auto s = spec::check_shape_limits(t.shape, path + ".shape"); !s) return s.error();
        }
        if (!entry.contains("dtype")) return make_error(path, "missing key \"dtype\"");
        auto dtype_name = spec::read_string(entry["dtype"], path + ".dtype");
        if (!dtype_name) return dtype_name.error();
        auto dtype = dtype_from_string(*dtype_name);
        if (!dtype) {
            return make_error(path + ".dtype", "unknown dtype " + quote(*dtype_name) +
                                                   "; known dtypes: f64, f32, f16, bf16, i32, i64");
        }
        t.dtype = *dtype;
        if (entry.contains("param")) {
            auto param = spec::read_bool(entry["param"], path + ".param");
            if (!param) return param.error();
            t.role = *param ? TensorRole::kParam : TensorRole::kInput;
        }
        if (entry.contains("distribution")) {  // how the user's values are drawn (timing)
            auto name = spec::read_string(entry["distribution"], path + ".distribution");
            if (!name) return name.error();
            auto d = distribution_from_string(*name);
            if (!d)
                return make_error(path + ".distribution",
                                  "unknown distribution " + quote(*name) + " of " + quote(t.name) +
                                      "; known: normal (the default), uniform01, uniform_pm1, "
                                      "heavy_tailed");
            t.distribution = *d;
        }
        if (auto s = parse_draw_scale(entry, path, p, t); !s) return s.error();
        p.tensors.push_back(std::move(t));
    }
    return Ok{};
}

Status parse_precision(const Json& j, Problem& p) {
    if (!j.is_object()) {
        return make_error("precision", "expected an object, got " + spec::type_name(j));
    }
    if (auto s = spec::check_keys(j, "precision",
                                  {"policy", "atol", "rtol", "min_fraction", "max_error"});
        !s) {
        return s.error();
    }
    if (!j.contains("policy")) return make_error("precision", "missing key \"policy\"");
    auto name = spec::read_string(j["policy"], "precision.policy");
    if (!name) return name.error();
    auto policy = policy_from_string(*name);
    if (!policy) {
        return make_error("precision.policy", "unknown policy " + quote(*name) +
                                                  "; known policies: fp32_strict, tf32, bf16, fp16");
    }
    p.policy = *policy;
    p.tolerance = default_tolerance(*policy);
    for (auto [key, field] : {std::pair{"atol", &p.tolerance.atol},
                              std::pair{"rtol", &p.tolerance.rtol},
                              std::pair{"min_fraction", &p.tolerance.min_fraction},
                              std::pair{"max_error", &p.tolerance.max_error}}) {
        if (!j.contains(key)) continue;
        std::string path = std::string("precision.") + key;
        auto v = spec::read_number(j[key], path);
        if (!v) return v.error();
        if (*v < 0) return make_error(path, "expected a number >= 0, got " + j[key].dump());
        *field = *v;
    }
    if (p.tolerance.min_fraction <= 0 || p.tolerance.min_fraction > 1) {
        return make_error("precision.min_fraction", "expected a fraction in (0, 1]");
    }
    return Ok{};
}

Status parse_outputs(const Json& j, Problem& p) {
    if (!j.is_array()) return make_error("outputs", "expected an array, got " + spec::type_name(j));
    if (j.empty()) return make_error("outputs", "expected at least one output tensor");
    for (size_t i = 0; i < j.size(); ++i) {
        std::string path = "outputs[" + std::to_string(i) + "]";
        auto name = spec::read_string(j[i], path);
        if (!name) return name.error();
        if (std::find(p.outputs.begin(), p.outputs.end(), *name) != p.outputs.end()) {
            return make_error(path, "output " + quote(*name) + " is listed twice");
        }
        p.outputs.push_back(*name);
    }
    return Ok{};
}

Status parse_top(const Json& j, Problem& p) {
    if (!j.is_object()) {
        return make_error("", "expected a JSON object at the top level, got " + spec::type_name(j));
    }
    if (auto s = spec::check_keys(j, "", {"name", "description", "dims", "inputs", "graph",
                                          "outputs", "precision"});
        !s) {
        return s.error();
    }
    for (const char* key : {"name", "dims", "inputs", "graph", "outputs", "precision"}) {
        if (!j.contains(key)) return make_error("", "missing key " + quote(key));
    }
    auto name = spec::read_string(j["name"], "name");
    if (!name) return name.error();
    bool name_ok = !name->empty() && name->size() <= 128 &&
                   (std::isalpha(static_cast<unsigned char>((*name)[0])) || (*name)[0] == '_');
    for (char c : *name) {
        name_ok = name_ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
                              c == '.' || c == '-');
    }
    if (!name_ok) {
        return make_error("name", "problem name " + quote(*name) +
                                      " does not match [A-Za-z_][A-Za-z0-9_.-]*");
    }
    p.name = *name;
    if (j.contains("description")) {
        auto d = spec::read_string(j["description"], "description");
        if (!d) return d.error();
        p.description = *d;
    }
    if (auto s = parse_dims(j["dims"], p); !s) return s.error();
    if (auto s = parse_inputs(j["inputs"], p); !s) return s.error();
    const Json& graph = j["graph"];
    if (!graph.is_array()) return make_error("graph", "expected an array, got " + spec::type_name(graph));
    if (graph.empty()) return make_error("graph", "expected at least one op");
    if (graph.size() > static_cast<size_t>(kMaxGraphOps)) {
        return make_error("graph", "too many ops: " + std::to_string(graph.size()) +
                                       "; a graph has at most " + std::to_string(kMaxGraphOps));
    }
    for (size_t i = 0; i < graph.size(); ++i) {
        auto op = spec::parse_op(graph[i], "graph[" + std::to_string(i) + "]", p.dims);
        if (!op) return op.error();
        p.ops.push_back(std::move(*op));
    }
    if (auto s = parse_outputs(j["outputs"], p); !s) return s.error();
    if (auto s = parse_precision(j["precision"], p); !s) return s.error();
    return spec::build_graph(p);
}

}  // namespace

Expected<Problem> parse_problem(std::string_view json_text, std::string_view source_name) {
    auto json = parse_text(json_text, source_name);
    if (!json) return json.error();
    Problem p;
    if (auto s = parse_top(*json, p); !s) return s.error();
    return p;
}

Expected<Problem> load_problem(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path, "cannot open the file for reading");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return make_error(path, "cannot read the file");
    return parse_problem(text.str(), path);
}

Status spec::value_fan_in(Tensor& t, const std::map<std::string, int64_t>& dims) {
    if (t.fan_in.empty()) return Ok{};
    const std::string where = "inputs." + t.name + ".fan_in";
    auto v = spec::eval_dim_expr(t.fan_in, where, dims);
    if (!v) {
        for (const std::string& n : spec::dim_expr_names(t.fan_in))
            if (dims.count(n) == 0) return v.error();  // (parse_draw_scale checked the names)
        return make_error(where, too_large(fan_in_expected(t.name), t.fan_in));
    }
    t.fan_in_value = *v;
    return Ok{};
}

Tolerance default_tolerance(PrecisionPolicy policy) {
    Tolerance t;
    switch (policy) {
        case PrecisionPolicy::kFp32Strict: t.atol = t.rtol = 1e-4; break;
        case PrecisionPolicy::kTf32: t.atol = t.rtol = 5e-3; break;
        case PrecisionPolicy::kBf16: t.atol = t.rtol = 2e-2; break;
        case PrecisionPolicy::kFp16: t.atol = t.rtol = 1e-2; break;
    }
    t.min_fraction = policy == PrecisionPolicy::kFp32Strict ? 1.0 : 0.999;
    t.max_error = 0.0;
    return t;
}

double effective_max_error(const Tolerance& tolerance) {
    return tolerance.max_error > 0 ? tolerance.max_error : 100.0 * (tolerance.atol + tolerance.rtol);
}

}  // namespace kforge
