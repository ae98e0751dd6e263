// `kforge interpret SPEC --inputs IN.json [-o OUT.json] [--dims M=16,N=8]`: runs the fp64 CPU
// reference interpreter (problem/interpret.h) on given inputs and writes the outputs. Used by
// the KernelBench importer (python/kforge_py) to compare an imported spec with its PyTorch
// module. Tensors travel as JSON: IN is {"X": [row-major values], ...}; OUT is
// {"dims": {...}, "outputs": {"Y": {"shape": [...], "data": [...]}}}. Non-finite values are
// written as the strings "nan", "inf", "-inf" (and read back the same way).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "problem/interpret.h"
#include "problem/spec.h"

namespace kforge::cli {
namespace {

using json = nlohmann::ordered_json;

struct InterpretArgs {
    std::string spec;
    std::string inputs;
    std::string output;
    std::string dims;
};

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

Expected<TensorValues> read_inputs(const std::string& path) {
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

Expected<std::map<std::string, int64_t>> parse_dims(const std::string& text) {
    std::map<std::string, int64_t> dims;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item.empty()) continue;
        auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0)
            return make_error("--dims", "expected NAME=VALUE, got \"" + item + "\"");
        try {
            size_t used = 0;
            int64_t v = std::stoll(item.substr(eq + 1), &used);
            if (used != item.size() - eq - 1) throw std::invalid_argument("trailing text");
            dims[item.substr(0, eq)] = v;
        } catch (const std::exception&) {
            return make_error("--dims", "\"" + item + "\" is not NAME=INTEGER");
        }
    }
    return dims;
}

int run_interpret(const InterpretArgs& a) {
    auto fail = [&](const Error& e, int rc) {
        std::fprintf(stderr, "kforge: %s: %s\n", a.spec.c_str(), e.to_string().c_str());
        return rc;
    };
    auto problem = load_problem(a.spec);
    if (!problem) return fail(problem.error(), kExitUserError);
    if (!a.dims.empty()) {
        auto dims = parse_dims(a.dims);
        if (!dims) return fail(dims.error(), kExitUserError);
        auto rebound = rebind_dims(*problem, *dims);
        if (!rebound) return fail(rebound.error(), kExitUserError);
        problem = std::move(rebound);
    }
    auto inputs = read_inputs(a.inputs);
    if (!inputs) return fail(inputs.error(), kExitUserError);
    auto outputs = interpret(*problem, *inputs);
    if (!outputs) return fail(outputs.error(), kExitUserError);
    json out;
    out["dims"] = problem->dims;
    out["outputs"] = json::object();
    for (const std::string& name : problem->outputs) {
        const Tensor* t = problem->find_tensor(name);
        json data = json::array();
        for (double x : outputs->at(name)) data.push_back(number_json(x));
        out["outputs"][name] = {{"shape", t->shape}, {"data", std::move(data)}};
    }
    std::string text = out.dump() + "\n";
    if (a.output.empty() || a.output == "-") {
        std::fwrite(text.data(), 1, text.size(), stdout);
        return kExitOk;
    }
    std::ofstream f(a.output);
    if (!(f << text)) return fail(make_error(a.output, "cannot write the outputs file"), kExitUserError);
    return kExitOk;
}

}  // namespace

void register_interpret(CLI::App& app) {
    auto* cmd = app.add_subcommand(
        "interpret", "Run the fp64 reference interpreter on a problem with given inputs");
    static InterpretArgs args;
    cmd->add_option("spec", args.spec, "problem spec (JSON)")->required();
    cmd->add_option("--inputs", args.inputs,
                    "JSON object: graph input name -> row-major values")->required();
    cmd->add_option("-o,--output", args.output, "output JSON file (default: stdout)");
    cmd->add_option("--dims", args.dims, "rebind dims first, e.g. M=16,N=8");
    cmd->callback([] { exit_code() = run_interpret(args); });
}

}  // namespace kforge::cli
