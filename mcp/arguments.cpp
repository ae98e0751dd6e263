#include "mcp/arguments.h"

#include <cmath>
#include <string>

namespace kforge::mcp {
namespace {

using json = nlohmann::json;

std::string type_name(const json& v) {
    if (v.is_number_integer()) return "an integer";
    if (v.is_number()) return "a number";
    if (v.is_string()) return "a string";
    if (v.is_boolean()) return "a boolean";
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    return "null";
}

bool has_type(const json& v, const std::string& type) {
    if (type == "string") return v.is_string();
    if (type == "integer")  // a float with an integral value too, within what a double holds exactly
        return v.is_number_integer() ||
               (v.is_number_float() && std::isfinite(v.get<double>()) &&
                std::floor(v.get<double>()) == v.get<double>() &&
                std::fabs(v.get<double>()) <= 9007199254740992.0);
    if (type == "number") return v.is_number() && std::isfinite(v.get<double>());
    if (type == "boolean") return v.is_boolean();
    if (type == "array") return v.is_array();
    if (type == "object") return v.is_object();
    return false;
}

Status check_value(const std::string& where, const json& schema, const json& v) {
    const std::string type = schema.value("type", "");
    if (!type.empty() && !has_type(v, type))
        return make_error(where, "expected " + std::string(type == "integer" ? "an integer" :
                                 type == "array" ? "an array" : type == "object" ? "an object" :
                                 "a " + type) + ", got " + type_name(v));
    if (schema.contains("enum")) {
        bool found = false;
        std::string list;
        for (const json& e : schema["enum"]) {
            found = found || e == v;
            list += (list.empty() ? "" : ", ") + (e.is_string() ? e.get<std::string>() : e.dump());
        }
        if (!found) return make_error(where, "expected one of " + list + ", got " + v.dump());
    }
    if (v.is_number()) {
        const double x = v.get<double>();
        if (schema.contains("minimum") && x < schema["minimum"].get<double>())
            return make_error(where, "must be >= " + schema["minimum"].dump() + ", got " + v.dump());
        if (schema.contains("exclusiveMinimum") && x <= schema["exclusiveMinimum"].get<double>())
            return make_error(where, "must be > " + schema["exclusiveMinimum"].dump() + ", got " +
                                         v.dump());
        if (schema.contains("maximum") && x > schema["maximum"].get<double>())
            return make_error(where, "must be <= " + schema["maximum"].dump() + ", got " + v.dump());
    }
    if (v.is_string()) {
        if (schema.contains("minLength") && v.get<std::string>().size() < schema["minLength"].get<size_t>())
            return make_error(where, "must not be empty");
        if (schema.contains("maxLength") && v.get<std::string>().size() > schema["maxLength"].get<size_t>())
            return make_error(where, "longer than " + schema["maxLength"].dump() + " characters");
    }
    if (v.is_array()) {
        if (schema.contains("minItems") && v.size() < schema["minItems"].get<size_t>())
            return make_error(where, "needs at least " + schema["minItems"].dump() + " item(s)");
        if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<size_t>())
            return make_error(where, "takes at most " + schema["maxItems"].dump() + " item(s)");
        if (schema.contains("items"))
            for (size_t i = 0; i < v.size(); ++i)
                if (auto st = check_value(where + "[" + std::to_string(i) + "]", schema["items"], v[i]);
                    !st)
                    return st;
    }
    return Ok{};
}

}  // namespace

Status check_arguments(const json& schema, const json& arguments) {
    if (!arguments.is_object()) return make_error("arguments", "expected an object");
    const json& props = schema.contains("properties") ? schema["properties"] : json::object();
    if (schema.contains("required"))
        for (const json& name : schema["required"])
            if (!arguments.contains(name.get<std::string>()))
                return make_error("arguments." + name.get<std::string>(), "is required");
    for (const auto& [name, value] : arguments.items()) {
        if (!props.contains(name)) {
            std::string known;
            for (const auto& [k, _] : props.items()) known += (known.empty() ? "" : ", ") + k;
            return make_error("arguments." + name,
                              "unknown argument; this tool takes: " + (known.empty() ? "none" : known));
        }
        if (auto st = check_value("arguments." + name, props[name], value); !st) return st;
    }
    return Ok{};
}

}  // namespace kforge::mcp
