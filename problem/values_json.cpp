// The JSON form of tensor values (problem/values_json.h).
#include "problem/values_json.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "problem/spec.h"

namespace kforge {
namespace {

using json = nlohmann::ordered_json;

Expected<double> value_of(const json& v, const std::string& where) {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
        std::string s = v.get<std::string>();
        if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
        if (s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    return make_error(where, "expected a number (or \"nan\", \"inf\", \"-inf\")");
}

json number_json(double x) {
    if (std::isnan(x)) return "nan";
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    return x;
}

}  // namespace

Expected<TensorValues> read_values_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) return make_error(path, "cannot read the inputs file");
    std::stringstream text;
    text << in.rdbuf();
    json j = json::parse(text.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return make_error(path, "expected a JSON object {\"name\": [values], ...}");
    TensorValues values;
    for (const auto& [name, list] : j.items()) {
        if (!list.is_array()) return make_error(path + ": " + name, "expected an array of numbers");
        std::vector<double> v;
        v.reserve(list.size());
        for (size_t i = 0; i < list.size(); ++i) {
            auto x = value_of(list[i], path + ": " + name + "[" + std::to_string(i) + "]");
            if (!x) return x.error();
            v.push_back(*x);
        }
        values[name] = std::move(v);
    }
    return values;
}

json outputs_to_json(const Problem& problem, const TensorValues& outputs) {
    json out;
    out["dims"] = problem.dims;
    out["outputs"] = json::object();
    for (const std::string& name : problem.outputs) {
        const Tensor* t = problem.find_tensor(name);
        json data = json::array();
        for (double x : outputs.at(name)) data.push_back(number_json(x));
        out["outputs"][name] = {{"shape", t->shape}, {"data", std::move(data)}};
    }
    return out;
}

Expected<json> interpret_files(const std::string& spec_path,
                               const std::map<std::string, int64_t>& dims,
                               const std::string& inputs_path) {
    auto problem = load_problem(spec_path);
    if (!problem) return problem.error();
    if (!dims.empty()) {
        auto rebound = rebind_dims(*problem, dims);
        if (!rebound) return rebound.error();
        problem = std::move(rebound);
    }
    auto inputs = read_values_file(inputs_path);
    if (!inputs) return inputs.error();
    auto outputs = interpret(*problem, *inputs);
    if (!outputs) return outputs.error();
    return outputs_to_json(*problem, *outputs);
}

}  // namespace kforge
